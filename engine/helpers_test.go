package engine

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// t0 is a Tuesday afternoon, far from any weekend.
var t0 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

var testNames = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi",
	"Ivan", "Judy", "Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil",
	"Trent", "Ursula", "Victor", "Walter", "Xena", "Yuri", "Zoe", "Zack"}

// game drives a State in tests and keeps its log.
type game struct {
	t   testing.TB
	s   *State
	log []Event
	now time.Time
}

func seeded(seed uint64) *rand.ChaCha8 {
	var k [32]byte
	for i := range 8 {
		k[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(k)
}

// rigged builds a started game whose seats hold exactly the given roles, in
// order, named from testNames. Day 1 opens at t0.
func rigged(t testing.TB, setup Setup, roles ...Role) *game {
	t.Helper()
	return riggedAt(t, t0, setup, roles...)
}

// riggedAt is rigged with Day 1 opening at start.
func riggedAt(t testing.TB, start time.Time, setup Setup, roles ...Role) *game {
	t.Helper()
	setup.Players = len(roles)
	setup.Mafia, setup.Inspectors, setup.Doctors, setup.Vigilantes = 0, 0, 0, 0
	for _, r := range roles {
		switch r {
		case Mafia:
			setup.Mafia++
		case Inspector:
			setup.Inspectors++
		case Doctor:
			setup.Doctors++
		case Vigilante:
			setup.Vigilantes++
		}
	}
	s, evs, err := NewGame("test", "ref@example.org", setup, start)
	if err != nil {
		t.Fatalf("new game: %v", err)
	}
	g := &game{t: t, s: s, log: evs, now: start}
	for i := range roles {
		g.fold(Event{Type: EvPlayerJoined, Slot: i + 1, Name: testNames[i],
			Address: testNames[i] + "@example.org", Token: "tok" + testNames[i]})
	}
	known := 0
	for i, r := range roles {
		if r == Mafia && known == 0 && setup.InspectorKnowsMafioso {
			known = i + 1
		}
	}
	g.fold(Event{Type: EvRolesDrawn, To: toReferee, Roles: roles, Salt: "00", Commitment: "x", Known: known})
	g.fold(Event{Type: EvDayStarted, To: toAll, Day: 1, Round: Opening, Deadline: dayDeadline(start, setup.DayLength)})
	return g
}

func (g *game) fold(e Event) {
	g.t.Helper()
	e.V, e.At = EventVersion, g.now
	if err := g.s.Fold(e); err != nil {
		g.t.Fatalf("fold %s: %v", e.Type, err)
	}
	g.log = append(g.log, e)
}

// slot finds a seat by name.
func (g *game) slot(name string) int {
	g.t.Helper()
	for _, p := range g.s.Players {
		if p.Name == name {
			return p.Slot
		}
	}
	g.t.Fatalf("no player %s", name)
	return 0
}

func (g *game) p(name string) *Player { return g.s.Player(g.slot(name)) }

// cmd applies a command from a named player ("" or "ref" for the referee).
func (g *game) cmd(who string, ch Channel, verb Verb, target string) ([]Event, error) {
	g.t.Helper()
	by := Referee
	if who != "ref" && who != "" {
		by = PlayerActor(g.slot(who))
	}
	c := Command{Verb: verb, By: by, Channel: ch, Target: target}
	if verb == CmdPost || verb == CmdAnnounce {
		c.Text, c.Target = target, ""
	}
	return g.apply(c)
}

func (g *game) apply(c Command) ([]Event, error) {
	evs, err := Apply(g.s, c, Env{Now: g.now, Rand: seeded(1)})
	g.log = append(g.log, evs...)
	return evs, err
}

// ok applies a command that must be accepted.
func (g *game) ok(who string, ch Channel, verb Verb, target string) []Event {
	g.t.Helper()
	evs, err := g.cmd(who, ch, verb, target)
	if err != nil {
		g.t.Fatalf("%s %s %s: %v", who, verb, target, err)
	}
	return evs
}

// refused applies a command that must be refused for the given reason.
func (g *game) refused(reason Reason, who string, ch Channel, verb Verb, target string) *Refusal {
	g.t.Helper()
	_, err := g.cmd(who, ch, verb, target)
	var r *Refusal
	if !errors.As(err, &r) {
		g.t.Fatalf("%s %s %s: want refusal %s, got %v", who, verb, target, reason, err)
	}
	if r.Reason != reason {
		g.t.Fatalf("%s %s %s: want refusal %s, got %s (%v)", who, verb, target, reason, r.Reason, r)
	}
	return r
}

func (g *game) vote(who, target string) { g.t.Helper(); g.ok(who, Thread, CmdVote, target) }
func (g *game) lock(who string)         { g.t.Helper(); g.ok(who, Thread, CmdLock, "") }

// at moves the clock to t and ticks.
func (g *game) at(t time.Time) []Event {
	g.now = t
	evs := Tick(g.s, t)
	g.log = append(g.log, evs...)
	return evs
}

// after moves the clock by d and ticks.
func (g *game) after(d time.Duration) []Event { return g.at(g.now.Add(d)) }

// closeNow runs the clock through reminders to the running round's close
// or the night's end.
func (g *game) closeNow() []Event {
	g.t.Helper()
	var all []Event
	for range 10 {
		d, ok := NextDeadline(g.s)
		if !ok {
			g.t.Fatalf("nothing waits on the clock")
		}
		if d.Before(g.now) {
			d = g.now
		}
		evs := g.at(d)
		all = append(all, evs...)
		if hasType(evs, EvRoundClosed, EvTieExtended, EvDawn) {
			return all
		}
	}
	g.t.Fatalf("the clock never closed the round")
	return nil
}

func hasType(evs []Event, types ...EventType) bool {
	for _, e := range evs {
		for _, t := range types {
			if e.Type == t {
				return true
			}
		}
	}
	return false
}

func find(evs []Event, typ EventType) *Event {
	for i := range evs {
		if evs[i].Type == typ {
			return &evs[i]
		}
	}
	return nil
}

func count(evs []Event, typ EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// checkReplay asserts that the log rebuilds the live state exactly.
func (g *game) checkReplay() {
	g.t.Helper()
	r, err := Replay(g.log)
	if err != nil {
		g.t.Fatalf("replay: %v", err)
	}
	if !reflect.DeepEqual(r, g.s) {
		g.t.Fatalf("replayed state differs from the live state")
	}
}
