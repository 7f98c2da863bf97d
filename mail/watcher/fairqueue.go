package watcher

import (
	"maps"

	"github.com/emersion/go-imap/v2"
)

// fairQueue shares the handler among the senders of a backlog, much as
// start-time fair queueing does: each sender has a tag that counts its
// messages taken, and the next message is the oldest of the sender with
// the lowest tag. vtime is the highest tag taken so far. A sender who was
// idle starts just below it: it gains no credit from having been idle, yet
// goes ahead of every sender who is working off a backlog, whose tags are
// at least vtime. So mail from people who write now and then is taken in
// the order it came, and backlogs share what time is left in turns, with
// one place in each batch kept for them.
type fairQueue struct {
	tags  map[string]int64
	vtime int64
}

// clone returns a copy of f that takes on its own.
func (f *fairQueue) clone() fairQueue {
	c := *f
	c.tags = maps.Clone(f.tags)
	return c
}

// take picks limit messages from queues, the senders' mail oldest first;
// order lists the senders by their oldest message, which breaks ties.
func (f *fairQueue) take(order []string, queues map[string][]imap.UID, limit int) []imap.UID {
	if f.tags == nil {
		f.tags = map[string]int64{}
	}
	for from, tag := range f.tags {
		if _, waiting := queues[from]; !waiting && tag <= f.vtime {
			delete(f.tags, from) // it would start again below vtime anyway
		}
	}
	fresh := make(map[string]bool, len(order))
	for _, from := range order {
		if tag, ok := f.tags[from]; !ok || tag < f.vtime {
			f.tags[from] = f.vtime - 1
			fresh[from] = true
		}
	}
	// The last place of a batch is kept for the senders working off a
	// backlog, when one waits and has had no place yet: however many
	// people write meanwhile, a backlog still moves.
	lowest := func(keep func(from string) bool) string {
		best := ""
		for _, from := range order {
			if keep(from) && (best == "" || f.tags[from] < f.tags[best]) {
				best = from
			}
		}
		return best
	}
	taken := make(map[string]int, len(order))
	backlogTaken := false
	out := make([]imap.UID, 0, limit)
	for len(out) < limit {
		waiting := func(from string) bool { return taken[from] < len(queues[from]) }
		best := ""
		if len(out) == limit-1 && !backlogTaken {
			best = lowest(func(from string) bool { return waiting(from) && !fresh[from] })
		}
		if best == "" {
			best = lowest(waiting)
		}
		if best == "" {
			break
		}
		backlogTaken = backlogTaken || !fresh[best]
		out = append(out, queues[best][taken[best]])
		taken[best]++
		f.vtime = max(f.vtime, f.tags[best])
		f.tags[best]++
	}
	return out
}
