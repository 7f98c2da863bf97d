package host

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestScheduleAgreesWithAWalkOfEveryGame puts games in, changes them and
// takes them out at random, and after each step asks the schedule what the
// clock asks of it: the games due or waiting for held mail, the earliest
// deadline still to come, the games running, and the earliest ordered
// deadline, which the watcher's barrier is. Each
// answer must be the one a walk over every game gives.
func TestScheduleAgreesWithAWalkOfEveryGame(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	phases := []engine.Phase{engine.SignupPhase, engine.DayPhase, engine.NightPhase, engine.EndedPhase}
	s := newSchedule()
	games := map[string]*game{}
	for step := range 5000 {
		id := fmt.Sprintf("g%d", rng.IntN(60))
		if rng.IntN(5) == 0 {
			delete(games, id)
			s.set(id, nil)
		} else {
			st := &engine.State{Phase: phases[rng.IntN(len(phases))]}
			if rng.IntN(8) == 0 {
				st.MailWaitUntil = base.Add(time.Hour)
			}
			// Few distinct times, so that ties are common.
			g := &game{state: st, next: base.Add(time.Duration(rng.IntN(20)) * time.Minute), hasNext: rng.IntN(4) != 0}
			// An ordered deadline is the next one or one after it
			// (a digest is due sooner).
			if g.hasNext && rng.IntN(4) != 0 {
				g.ordered, g.hasOrdered = g.next.Add(time.Duration(rng.IntN(3))*time.Minute), true
			}
			games[id] = g
			s.set(id, g)
		}
		now := base.Add(time.Duration(rng.IntN(22)) * time.Minute)

		var ordered, later time.Time
		var hasOrdered, hasLater bool
		var due, tick []string
		running, waiting := 0, 0
		for id, g := range games {
			if g.hasOrdered && (!hasOrdered || g.ordered.Before(ordered)) {
				ordered, hasOrdered = g.ordered, true
			}
			if g.hasNext {
				if g.next.After(now) {
					if !hasLater || g.next.Before(later) {
						later, hasLater = g.next, true
					}
				} else {
					due = append(due, id)
				}
			}
			if g.hasNext && !g.next.After(now) || g.state.MailWaiting() {
				tick = append(tick, id)
			}
			if g.state.Phase == engine.DayPhase || g.state.Phase == engine.NightPhase {
				running++
			}
			if g.state.MailWaiting() {
				waiting++
			}
		}
		slices.Sort(due)
		slices.Sort(tick)

		if got, ok := s.earliestOrdered(); ok != hasOrdered || !got.Equal(ordered) {
			t.Fatalf("step %d: earliest ordered deadline %v %v, want %v %v", step, got, ok, ordered, hasOrdered)
		}
		var visited []string
		got, ok := s.visit(now, func(id string) { visited = append(visited, id) })
		slices.Sort(visited)
		if ok != hasLater || !got.Equal(later) {
			t.Fatalf("step %d: next after %v is %v %v, want %v %v", step, now, got, ok, later, hasLater)
		}
		if !slices.Equal(visited, due) {
			t.Fatalf("step %d: due at %v %v, want %v", step, now, visited, due)
		}
		if got := s.toTick(now); !slices.Equal(got, tick) {
			t.Fatalf("step %d: to tick at %v %v, want %v", step, now, got, tick)
		}
		if len(s.running) != running || len(s.waiting) != waiting {
			t.Fatalf("step %d: %d running, %d waiting; want %d, %d", step, len(s.running), len(s.waiting), running, waiting)
		}
		if len(s.due.items) != len(s.due.pos) || len(s.ordered.items) != len(s.ordered.pos) {
			t.Fatalf("step %d: %d deadlines, %d places; %d ordered, %d places", step, len(s.due.items), len(s.due.pos),
				len(s.ordered.items), len(s.ordered.pos))
		}
	}
}

// checkSchedule fails the test unless the host's schedule indexes its
// games as they stand: a deadline for each game that has one, at its
// time, in heap order, and the running and waiting games. The harness
// checks after every message, group and tick in tests, so that a game
// changed without setGame shows.
func (hs *harness) checkSchedule() {
	hs.t.Helper()
	if _, ok := hs.t.(*testing.B); ok {
		return // a benchmark times the host, not this walk of every game
	}
	h := hs.h
	h.mu.Lock()
	defer h.mu.Unlock()
	want := newSchedule()
	for id, g := range h.games {
		want.set(id, g)
	}
	s := h.schedule
	if !maps.Equal(s.running, want.running) || !maps.Equal(s.waiting, want.waiting) {
		hs.t.Fatalf("schedule: running %v, waiting %v; the games: %v, %v", s.running, s.waiting, want.running, want.waiting)
	}
	hs.checkHeap("deadlines", &s.due, &want.due, func(g *game) (time.Time, bool) { return g.next, g.hasNext })
	hs.checkHeap("ordered deadlines", &s.ordered, &want.ordered, func(g *game) (time.Time, bool) { return g.ordered, g.hasOrdered })
}

// checkHeap fails the test unless heap d holds, in heap order, the
// deadline of each game that has one (of), as want does.
func (hs *harness) checkHeap(what string, d, want *deadlineHeap, of func(*game) (time.Time, bool)) {
	hs.t.Helper()
	if len(d.items) != len(want.items) || len(d.pos) != len(d.items) {
		hs.t.Fatalf("schedule: %d %s (%d places) for %d", len(d.items), what, len(d.pos), len(want.items))
	}
	for i, it := range d.items {
		if d.pos[it.id] != i {
			hs.t.Fatalf("schedule: %s at place %d of the %s, recorded at %d", it.id, i, what, d.pos[it.id])
		}
		g := hs.h.games[it.id]
		if g == nil {
			hs.t.Fatalf("schedule: %s among the %s is no game", it.id, what)
		}
		if at, ok := of(g); !ok || !at.Equal(it.at) {
			hs.t.Fatalf("schedule: %s at %v among the %s; the game: %+v", it.id, it.at, what, g)
		}
		if i > 0 && d.Less(i, (i-1)/2) {
			hs.t.Fatalf("schedule: %s at %d of the %s comes before its parent", it.id, i, what)
		}
	}
}
