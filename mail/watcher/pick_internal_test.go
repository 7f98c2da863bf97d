package watcher

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
)

// backlogSession is a session that knows n unseen messages from senders
// addresses, in turns, each a second after the one before.
func backlogSession(tb testing.TB, n, senders int) *session {
	tb.Helper()
	w, err := newWatcher(Config{URL: "imap://127.0.0.1:1", Username: "host", Password: "x", OnWatermark: func(time.Time) {}})
	if err != nil {
		tb.Fatal(err)
	}
	s := &session{w: w, searched: time.Now()}
	t0 := s.searched.Add(-time.Duration(n) * time.Second)
	for i := range n {
		s.add(imap.UID(i+1), &pending{from: fmt.Sprintf("p%d@players.example", i%senders), size: 1000, arrived: t0.Add(time.Duration(i) * time.Second)})
	}
	return s
}

// BenchmarkBacklogTurns works off a backlog of 10,000 messages from 250
// senders as the scan does between its fetches: pick a batch, report the
// watermark, forget the batch. What it measures is the watcher's own
// bookkeeping per message, which a backlog pays for every message.
func BenchmarkBacklogTurns(b *testing.B) {
	const n = 10000
	var handled int
	for range b.N {
		b.StopTimer()
		s := backlogSession(b, n, 250)
		b.StartTimer()
		now := time.Now()
		for len(s.unseen) > 0 {
			next, _ := s.pick(now)
			if len(next) == 0 {
				b.Fatalf("no batch with %d unseen", len(s.unseen))
			}
			s.forget(next)
			s.report()
			handled += len(next)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(handled), "ns/msg")
}

// referencePick is the choice of a batch written plainly, as pick made it
// before it kept its order and sender numbers between batches: every
// unseen UID sorted afresh, every sender's whole queue built afresh. (No
// retries and no barrier.)
func referencePick(unseen map[imap.UID]*pending, turn *fairQueue, batch int) []imap.UID {
	var game, aside []imap.UID
	for u, p := range unseen {
		if p.setAside {
			aside = append(aside, u)
		} else {
			game = append(game, u)
		}
	}
	slices.Sort(game)
	slices.Sort(aside)
	if len(game) == 0 {
		return aside[:min(len(aside), batch)]
	}
	if len(game) <= batch {
		*turn = fairQueue{}
		return game
	}
	queues := map[string][]imap.UID{}
	var order []string
	for _, u := range game {
		from := unseen[u].from
		if from == "" {
			from = fmt.Sprintf("uid:%d", u)
		}
		if _, ok := queues[from]; !ok {
			order = append(order, from)
		}
		queues[from] = append(queues[from], u)
	}
	inOrder := make([][]imap.UID, len(order))
	for i, from := range order {
		inOrder[i] = queues[from]
	}
	next := turn.take(order, inOrder, min(batch, turnBatch, len(game)))
	slices.Sort(next)
	return next
}

// The batches a backlog is worked off in are those of the plain
// reference, whatever the mix: many senders and few, mail with no known
// sender, mail set aside, new mail arriving between batches (now and then
// with a UID below one already known, as after a reconnection), and
// messages forgotten out of turn (a fetch that found nothing).
func TestPickKeepsTheFairTurns(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		s := backlogSession(t, 0, 1)
		ref := map[imap.UID]*pending{}
		var refTurn fairQueue
		next := imap.UID(1000)
		senders := 1 + r.IntN(30)
		addOne := func(uid imap.UID) {
			from := ""
			if r.IntN(20) > 0 {
				from = fmt.Sprintf("p%d@players.example", r.IntN(senders))
			}
			aside := r.IntN(15) == 0
			s.add(uid, &pending{from: from, setAside: aside})
			ref[uid] = &pending{from: from, setAside: aside}
		}
		for range 200 + r.IntN(400) {
			addOne(next)
			next++
		}
		for step := 0; len(ref) > 0; step++ {
			got, _ := s.pick(time.Now())
			want := referencePick(ref, &refTurn, s.w.cfg.BatchSize)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, batch %d: pick %v, want %v", seed, step, got, want)
			}
			s.forget(got)
			for _, u := range got {
				delete(ref, u)
			}
			switch n := r.IntN(10); {
			case n < 3:
				for range 1 + r.IntN(20) {
					addOne(next)
					next++
				}
			case n == 3:
				// Below a known UID: the order is kept by inserting.
				if u := imap.UID(r.IntN(1000)) + 1; ref[u] == nil {
					addOne(u)
				}
			case n == 4 && len(s.queue) > 0:
				u := s.queue[r.IntN(len(s.queue))].uid
				s.forget([]imap.UID{u})
				delete(ref, u)
			}
			if len(s.queue) != len(s.unseen) || !slices.IsSortedFunc(s.queue, func(a, b *pending) int { return cmp.Compare(a.uid, b.uid) }) {
				t.Fatalf("seed %d, batch %d: the order holds %d messages of %d, or is not by UID", seed, step, len(s.queue), len(s.unseen))
			}
		}
		if len(s.senders) != 0 || s.asideN != 0 {
			t.Fatalf("seed %d: %d senders numbered and %d set aside with nothing unseen", seed, len(s.senders), s.asideN)
		}
	}
}

// A backlog from one sender, or from one and a few who wrote once, still
// fills each batch: a sender's queue holds as many messages as a batch
// takes.
func TestTurnsFillTheBatchFromFewSenders(t *testing.T) {
	for _, senders := range []int{1, 2, 3} {
		s := backlogSession(t, 200, 1)
		for i := 1; i < senders; i++ {
			s.add(imap.UID(1000+i), &pending{from: fmt.Sprintf("once%d@players.example", i), size: 1000, arrived: time.Now()})
		}
		got, _ := s.pick(time.Now())
		want := uidRange(1, imap.UID(turnBatch-(senders-1)))
		for i := 1; i < senders; i++ {
			want = append(want, imap.UID(1000+i))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d senders: batch %v, want %v", senders, got, want)
		}
	}
}

// While the handler works, the turn picked ahead is the one picked from
// the backlog without what the handler has and what is ready, wherever
// those stand in it.
func TestPickAheadLeavesWhatIsTaken(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		s := backlogSession(t, 300+r.IntN(300), 1+r.IntN(40))
		taken := map[imap.UID]bool{}
		fetched := func(n int) []Fetched {
			var out []Fetched
			for len(out) < n {
				u := s.queue[r.IntN(len(s.queue))].uid
				if !taken[u] {
					taken[u] = true
					out = append(out, Fetched{UID: uint32(u), Size: 1000})
				}
			}
			return out
		}
		s.busy = &busy{group: fetched(1 + r.IntN(s.w.cfg.BatchSize)), done: make(chan struct{})}
		s.ready = fetched(r.IntN(s.w.cfg.BatchSize - turnBatch))
		var free []*pending
		for _, p := range s.queue {
			if !taken[p.uid] {
				free = append(free, p)
			}
		}
		turn := s.turn.clone()
		want := s.turns(free)
		s.turn = turn
		got := s.pickAhead(time.Now())
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: picked ahead %v, want %v", seed, got, want)
		}
	}
}
