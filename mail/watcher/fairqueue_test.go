package watcher

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// queued builds take's arguments as turns does: from, for each sender, the
// UIDs of its unseen mail; senders are ordered by their oldest message.
func queued(mail map[string][]imap.UID) (order []string, queues [][]imap.UID) {
	byFrom := map[string][]imap.UID{}
	for from, uids := range mail {
		byFrom[from] = slices.Sorted(slices.Values(uids))
		order = append(order, from)
	}
	slices.SortFunc(order, func(a, b string) int { return int(byFrom[a][0]) - int(byFrom[b][0]) })
	for _, from := range order {
		queues = append(queues, byFrom[from])
	}
	return order, queues
}

func uidRange(first, last imap.UID) []imap.UID {
	var out []imap.UID
	for u := first; u <= last; u++ {
		out = append(out, u)
	}
	return out
}

// TestFairQueueTake follows one queue through successive batches of a
// backlog, as scan calls it: each step is the unseen mail at that moment
// and the batch the queue must pick from it.
func TestFairQueueTake(t *testing.T) {
	type step struct {
		mail  map[string][]imap.UID
		limit int
		want  []imap.UID
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{
			name:  "nothing waiting",
			steps: []step{{mail: nil, limit: 10, want: []imap.UID{}}},
		},
		{
			name:  "one sender: its mail in the order it came, up to the limit",
			steps: []step{{mail: map[string][]imap.UID{"a": {4, 1, 3, 2}}, limit: 3, want: []imap.UID{1, 2, 3}}},
		},
		{
			name:  "a limit above what waits takes everything",
			steps: []step{{mail: map[string][]imap.UID{"a": {1, 2}, "b": {3}}, limit: 10, want: []imap.UID{1, 3, 2}}},
		},
		{
			name: "senders new to the queue take turns, ties by oldest message",
			steps: []step{{
				mail:  map[string][]imap.UID{"a": {1, 2, 3}, "b": {4, 5}, "c": {6}},
				limit: 6,
				want:  []imap.UID{1, 4, 6, 2, 5, 3},
			}},
		},
		{
			name: "a sender who writes during a backlog goes ahead of those working it off",
			steps: []step{
				{
					mail:  map[string][]imap.UID{"a": uidRange(1, 20), "b": uidRange(21, 40)},
					limit: 10,
					want:  []imap.UID{1, 21, 2, 22, 3, 23, 4, 24, 5, 25},
				},
				{
					mail:  map[string][]imap.UID{"a": uidRange(6, 20), "b": uidRange(26, 40), "c": {41}},
					limit: 3,
					want:  []imap.UID{41, 6, 26},
				},
			},
		},
		{
			name: "the last place of a batch is kept for the backlog however many newcomers wait",
			steps: []step{
				{mail: map[string][]imap.UID{"a": uidRange(1, 5)}, limit: 2, want: []imap.UID{1, 2}},
				{
					mail:  map[string][]imap.UID{"a": {3, 4, 5}, "x": {10}, "y": {11}, "z": {12}},
					limit: 3,
					want:  []imap.UID{10, 11, 3},
				},
				// z, still waiting from the step before, is a newcomer no more
				// than x and y were: it goes first, then the backlog.
				{
					mail:  map[string][]imap.UID{"a": {4, 5}, "z": {12}},
					limit: 2,
					want:  []imap.UID{12, 4},
				},
			},
		},
		{
			name: "a sender idle for a while gains no credit beyond one place ahead",
			steps: []step{
				{mail: map[string][]imap.UID{"a": uidRange(1, 20)}, limit: 10, want: uidRange(1, 10)},
				// a's tag is 9 and vtime 8: b starts at 7, so it takes two
				// places before the two share turns again, not ten.
				{
					mail:  map[string][]imap.UID{"a": uidRange(11, 20), "b": {21, 22, 23}},
					limit: 6,
					want:  []imap.UID{21, 22, 11, 23, 12, 13},
				},
			},
		},
		{
			name: "a sender who has had fewer turns than the backlog goes ahead when it writes again",
			steps: []step{
				{mail: map[string][]imap.UID{"a": uidRange(1, 4), "b": {5}}, limit: 3, want: []imap.UID{1, 5, 2}},
				{mail: map[string][]imap.UID{"a": {3, 4}, "b": {6}}, limit: 2, want: []imap.UID{6, 3}},
				{mail: map[string][]imap.UID{"a": {4}}, limit: 1, want: []imap.UID{4}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var q fairQueue
			for i, st := range tc.steps {
				order, queues := queued(st.mail)
				got := q.take(order, queues, st.limit)
				if !slices.Equal(got, st.want) {
					t.Fatalf("step %d: take(%v, limit %d) = %v, want %v", i+1, order, st.limit, got, st.want)
				}
			}
		})
	}
}

// However the senders are spread, take returns each waiting message at most
// once, only messages that wait, each sender's mail oldest first, and
// exactly min(limit, waiting) of them.
func TestFairQueueTakeInvariants(t *testing.T) {
	var q fairQueue
	next := imap.UID(1)
	waiting := map[string][]imap.UID{}
	for round := range 200 {
		// New mail: a few senders write one to five messages each.
		for s := range round%4 + 1 {
			from := string(rune('a' + (round*7+s*3)%11))
			for range (round+s)%5 + 1 {
				waiting[from] = append(waiting[from], next)
				next++
			}
		}
		order, queues := queued(waiting)
		total := 0
		for _, uids := range queues {
			total += len(uids)
		}
		limit := round%13 + 1
		got := q.take(order, queues, limit)
		if len(got) != min(limit, total) {
			t.Fatalf("round %d: took %d of %d waiting with limit %d", round, len(got), total, limit)
		}
		taken := map[imap.UID]bool{}
		for _, u := range got {
			if taken[u] {
				t.Fatalf("round %d: UID %d taken twice in %v", round, u, got)
			}
			taken[u] = true
		}
		for from, uids := range waiting {
			// What was taken of a sender's mail is a prefix of it.
			n := 0
			for n < len(uids) && taken[uids[n]] {
				n++
			}
			for _, u := range uids[n:] {
				if taken[u] {
					t.Fatalf("round %d: %s's UID %d taken before its older mail %v", round, from, u, uids[:n+1])
				}
			}
			if waiting[from] = uids[n:]; len(waiting[from]) == 0 {
				delete(waiting, from)
			}
			for _, u := range uids[:n] {
				delete(taken, u)
			}
		}
		if len(taken) != 0 {
			t.Fatalf("round %d: took UIDs that were not waiting: %v", round, taken)
		}
	}
}

// TestFairQueueTakesAsItsReference: take makes the same choices, and
// leaves the same tags, as the plain form of its rule (takeByAddress),
// through rounds of random mail from few senders and many, with limits
// below and above what waits.
func TestFairQueueTakesAsItsReference(t *testing.T) {
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 11))
		var q, ref fairQueue
		next := imap.UID(1)
		waiting := map[string][]imap.UID{}
		senders := 1 + r.IntN(300)
		for round := range 150 {
			for range r.IntN(40) {
				from := fmt.Sprintf("p%d", r.IntN(senders))
				waiting[from] = append(waiting[from], next)
				next++
			}
			order, queues := queued(waiting)
			limit := r.IntN(25)
			got := q.take(order, queues, limit)
			byFrom := map[string][]imap.UID{}
			for i, from := range order {
				byFrom[from] = queues[i]
			}
			want := ref.takeByAddress(order, byFrom, limit)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, round %d: take %v, want %v", seed, round, got, want)
			}
			if q.vtime != ref.vtime || !maps.Equal(q.tags, ref.tags) {
				t.Fatalf("seed %d, round %d: tags %v vtime %d, want %v vtime %d", seed, round, q.tags, q.vtime, ref.tags, ref.vtime)
			}
			gone := map[imap.UID]bool{}
			for _, u := range got {
				gone[u] = true
			}
			for from, uids := range waiting {
				if waiting[from] = slices.DeleteFunc(uids, func(u imap.UID) bool { return gone[u] }); len(waiting[from]) == 0 {
					delete(waiting, from)
				}
			}
		}
	}
}

// takeByAddress is take as it was first written: the senders' tags, counts
// and queues looked up by address for every message.
func (f *fairQueue) takeByAddress(order []string, queues map[string][]imap.UID, limit int) []imap.UID {
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
