package engine

import (
	"reflect"
	"testing"
	"time"
)

// statusOf is the answer to a STATUS from who ("ref" for the referee).
func (g *game) statusOf(who string) *Status {
	g.t.Helper()
	e := find(g.ok(who, Private, CmdStatus, ""), EvStatusShown)
	if e == nil || e.Status == nil {
		g.t.Fatalf("%s's STATUS shows nothing", who)
	}
	return e.Status
}

// TestN6_StatusShowsTheNightsPublicEnd: a night ends at the first 6-hour
// mark once every action is in (N6), but when the last action came is a
// secret until the night resolves. A player's STATUS names the night's
// latest end, moved only by the referee, whatever has come in; the
// referee's (F2) names the end the actions so far make.
func TestN6_StatusShowsTheNightsPublicEnd(t *testing.T) {
	g := village(t)
	g.toNight()
	start := g.now
	latest := start.Add(18 * time.Hour)
	watchers := []string{"Frank", "Bob", "Carol", "Dave", "Erin"}
	seen := map[string]*Status{}
	look := func(after string) {
		t.Helper()
		for _, w := range watchers {
			st := g.statusOf(w)
			if !st.Deadline.Equal(latest) {
				t.Errorf("after %s, %s's STATUS says the night ends by %v, not its latest end %v", after, w, st.Deadline, latest)
			}
			// Frank has no action; the Mafioso Bob sees the Mafia's whack,
			// and the others their own action, which their STATUS may
			// show: only their deadline is compared for them.
			if w == "Frank" && seen[w] != nil && !reflect.DeepEqual(st, seen[w]) {
				t.Errorf("after %s, Frank's STATUS changed:\nbefore %+v\nafter  %+v", after, seen[w], st)
			}
			seen[w] = st
		}
	}
	look("nightfall")
	g.now = start.Add(time.Hour)
	for _, a := range []struct {
		who  string
		ch   Channel
		verb Verb
		arg  string
	}{
		{"Alice", MafiaCh, CmdPost, "Frank tonight?"},
		{"Alice", Private, CmdKill, "Frank"},
		{"Carol", Private, CmdInspect, "Alice"},
		{"Erin", Private, CmdShoot, "Bob"},
		{"Erin", Private, CmdPass, ""},
		{"Dave", Private, CmdProtect, "Grace"}, // the last action: every one is in
	} {
		g.ok(a.who, a.ch, a.verb, a.arg)
		look(a.who + " " + string(a.verb))
	}
	if g.s.nightEndsAt() != start.Add(6*time.Hour) {
		t.Fatalf("with every action in at +1 h, the night ends at +%v, not at the 6-hour mark", g.s.nightEndsAt().Sub(start))
	}
	// The referee sees the secrets (F2): the night ends at the mark.
	if st := g.statusOf("ref"); !st.Deadline.Equal(start.Add(6 * time.Hour)) {
		t.Errorf("the referee's STATUS says the night ends by %v, not at the 6-hour mark", st.Deadline)
	}
	// An extension by the referee is public, and moves everyone's line.
	g.ok("ref", Private, CmdExtend, "")
	if st, want := g.statusOf("Frank"), g.s.Night.End; !st.Deadline.Equal(want) || !want.After(latest) {
		t.Errorf("after the referee's extension Frank's STATUS says %v, want the new latest end %v", st.Deadline, want)
	}
}

// TestT4_ANightWaitsAlikeWhateverItsActions: a night that ends at its
// latest end ends by the clock whether or not every action came in in
// its last six hours, so a close that waits for held mail waits alike in
// both: the wait tells no one that an action is missing. Only a night
// that ends at an earlier mark (the rules' early end, N6) does not wait.
func TestT4_ANightWaitsAlikeWhateverItsActions(t *testing.T) {
	for _, c := range []struct {
		name    string
		lastAt  time.Duration // when the Vigilante passes; <0 never
		endsAt  time.Duration
		mayWait bool
	}{
		{"the Vigilante never acts", -1, 18 * time.Hour, true},
		{"the Vigilante passes at 13 h", 13 * time.Hour, 18 * time.Hour, true},
		{"the Vigilante passes at 7 h", 7 * time.Hour, 12 * time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := village(t)
			g.toNight()
			start := g.now
			g.ok("Alice", Private, CmdKill, "Frank")
			g.ok("Carol", Private, CmdInspect, "Alice")
			g.ok("Dave", Private, CmdProtect, "Grace")
			if c.lastAt >= 0 {
				g.now = start.Add(c.lastAt)
				g.ok("Erin", Private, CmdPass, "")
			}
			end := start.Add(c.endsAt)
			if got := g.s.nightEndsAt(); !got.Equal(end) {
				t.Fatalf("the night ends at +%v, want +%v", got.Sub(start), c.endsAt)
			}
			if g.s.ClockCloseDue(end.Add(-time.Second)) {
				t.Fatal("a close by the clock is due before the night ends")
			}
			if got := g.s.ClockCloseDue(end); got != c.mayWait {
				t.Fatalf("at the night's end a close by the clock is due: %v, want %v", got, c.mayWait)
			}
			g.now = end
			evs, err := g.host(Command{Verb: CmdMailWait, Time: end.Add(time.Hour)})
			if waited := err == nil && find(evs, EvMailWait) != nil; waited != c.mayWait {
				t.Fatalf("MAIL WAIT at the night's end: %+v %v, want a wait: %v", evs, err, c.mayWait)
			}
			if !c.mayWait {
				return
			}
			// Waiting, the night ends when the wait does, and not at a
			// mark it has passed: the 18-hour mark, at which every action
			// was in, does not end it at the next tick.
			if evs := g.at(end.Add(time.Minute)); hasType(evs, EvDawn) {
				t.Fatal("the night that waits for held mail ended at once")
			}
			if evs := g.at(end.Add(time.Hour)); !hasType(evs, EvDawn) {
				t.Fatalf("the night did not end with its wait: %+v", evs)
			}
			g.checkReplay()
		})
	}
}
