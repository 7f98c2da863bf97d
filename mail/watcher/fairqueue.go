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

// take picks limit messages from queues, the senders' mail oldest first:
// queues[i] is the mail of order[i]. order lists each sender once, by its
// oldest message, which breaks ties.
func (f *fairQueue) take(order []string, queues [][]imap.UID, limit int) []imap.UID {
	if f.tags == nil {
		f.tags = map[string]int64{}
	}
	// Each message goes to the waiting sender with the lowest tag, so the
	// choice of each compares every sender's: a backlog from hundreds of
	// senders made that hundreds of lookups by address per message. The
	// senders' tags are looked up once, by their place in order, and
	// written back at the end.
	tags := make([]int64, len(order))
	fresh := make([]bool, len(order))
	for i, from := range order {
		tag, ok := f.tags[from]
		if !ok || tag < f.vtime {
			tag, fresh[i] = f.vtime-1, true
		}
		tags[i] = tag
	}
	// A sender who waits for nothing and is not ahead of vtime would start
	// again just below it: its tag is dropped. Those who wait have theirs
	// in tags, written back below.
	for from, tag := range f.tags {
		if tag <= f.vtime {
			delete(f.tags, from)
		}
	}
	taken := make([]int, len(order))
	// lowest is the waiting sender with the lowest tag, the first in order
	// among equals (-1: none); backlog keeps to those not fresh.
	lowest := func(backlog bool) int {
		best := -1
		for i := range order {
			if taken[i] < len(queues[i]) && (!backlog || !fresh[i]) && (best < 0 || tags[i] < tags[best]) {
				best = i
			}
		}
		return best
	}
	// The last place of a batch is kept for the senders working off a
	// backlog, when one waits and has had no place yet: however many
	// people write meanwhile, a backlog still moves.
	backlogTaken := false
	out := make([]imap.UID, 0, max(limit, 0))
	for len(out) < limit {
		best := -1
		if len(out) == limit-1 && !backlogTaken {
			best = lowest(true)
		}
		if best < 0 {
			best = lowest(false)
		}
		if best < 0 {
			break
		}
		backlogTaken = backlogTaken || !fresh[best]
		out = append(out, queues[best][taken[best]])
		taken[best]++
		f.vtime = max(f.vtime, tags[best])
		tags[best]++
	}
	for i, from := range order {
		f.tags[from] = tags[i]
	}
	return out
}
