package host

import (
	"container/heap"
	"slices"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// schedule indexes the live games by what the clock looks for: their next
// deadlines, in a heap ordered by time, the games whose round runs, and
// those whose close waits for held mail. The clock wakes after every
// transaction; with the index it finds the earliest deadline and the games
// due without walking, or sorting, a thousand games each time.
//
// The host keeps it in step with its games map: every game put in or
// taken out of the map goes through setGame.
type schedule struct {
	due deadlineHeap
	// ordered holds the games' next ordered deadlines
	// (engine.NextOrderedDeadline), for the watcher's barrier.
	ordered deadlineHeap
	running map[string]bool
	waiting map[string]bool
}

func newSchedule() *schedule {
	return &schedule{due: deadlineHeap{pos: map[string]int{}}, ordered: deadlineHeap{pos: map[string]int{}},
		running: map[string]bool{}, waiting: map[string]bool{}}
}

// set records g as the live game id; nil takes the game out.
func (s *schedule) set(id string, g *game) {
	var next, ordered time.Time
	var hasNext, hasOrdered bool
	if g != nil {
		next, hasNext, ordered, hasOrdered = g.next, g.hasNext, g.ordered, g.hasOrdered
	}
	s.due.place(id, next, hasNext)
	s.ordered.place(id, ordered, hasOrdered)
	setMember(s.running, id, g != nil && (g.state.Phase == engine.DayPhase || g.state.Phase == engine.NightPhase))
	setMember(s.waiting, id, g != nil && g.state.MailWaiting())
}

func setMember(set map[string]bool, id string, in bool) {
	if in {
		set[id] = true
	} else {
		delete(set, id)
	}
}

// earliestOrdered is the earliest ordered deadline of any game.
func (s *schedule) earliestOrdered() (time.Time, bool) {
	if len(s.ordered.items) == 0 {
		return time.Time{}, false
	}
	return s.ordered.items[0].at, true
}

// visit calls dueAt with each game whose deadline is at or before now,
// and returns the earliest deadline after now.
func (s *schedule) visit(now time.Time, dueAt func(id string)) (next time.Time, found bool) {
	var walk func(i int)
	walk = func(i int) {
		if i >= len(s.due.items) {
			return
		}
		d := s.due.items[i]
		if d.at.After(now) {
			// Nothing under it comes sooner.
			if !found || d.at.Before(next) {
				next, found = d.at, true
			}
			return
		}
		dueAt(d.id)
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
	return next, found
}

// toTick lists, in order, the games the clock has to look at now: those
// with a deadline at or before now and those whose close waits for held
// mail.
func (s *schedule) toTick(now time.Time) []string {
	var ids []string
	s.visit(now, func(id string) { ids = append(ids, id) })
	for id := range s.waiting {
		if i, ok := s.due.pos[id]; ok && !s.due.items[i].at.After(now) {
			continue // listed as due
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// deadline is one game's next deadline.
type deadline struct {
	id string
	at time.Time
}

// deadlineHeap is a min-heap of deadlines (container/heap), the earlier
// first, and between equal times the game first by name; pos finds a
// game's place in it.
type deadlineHeap struct {
	items []deadline
	pos   map[string]int
}

// place puts game id in the heap at at, or takes it out when it has no
// deadline (has is false).
func (h *deadlineHeap) place(id string, at time.Time, has bool) {
	if i, ok := h.pos[id]; ok {
		if has {
			h.items[i].at = at
			heap.Fix(h, i)
		} else {
			heap.Remove(h, i)
		}
	} else if has {
		heap.Push(h, deadline{id: id, at: at})
	}
}

func (h *deadlineHeap) Len() int { return len(h.items) }

func (h *deadlineHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.id < b.id
}

func (h *deadlineHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].id] = i
	h.pos[h.items[j].id] = j
}

func (h *deadlineHeap) Push(x any) {
	d := x.(deadline)
	h.pos[d.id] = len(h.items)
	h.items = append(h.items, d)
}

func (h *deadlineHeap) Pop() any {
	d := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	delete(h.pos, d.id)
	return d
}
