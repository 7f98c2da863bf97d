package story

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

var t0 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// sampleLog is a short game of five: Day 1 eliminates Dave (Mafia), Night 1
// the Mafia's kill of Alice is saved by the Doctor while the Inspector asks
// about Bob, Day 2 a day shot, then the Town wins.
func sampleLog() []engine.Event {
	pub := engine.Audience{Public: true}
	ref := func(slot int) engine.Audience { return engine.Audience{Slot: slot, Referee: true} }
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	var log []engine.Event
	add := func(e engine.Event) { e.V = engine.EventVersion; log = append(log, e) }
	add(engine.Event{Type: engine.EvGameCreated, At: at(0), To: engine.Audience{Referee: true}, Game: "g1"})
	for i, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin"} {
		add(engine.Event{Type: engine.EvPlayerJoined, At: at(0), To: ref(i + 1), Slot: i + 1, Name: n, Address: strings.ToLower(n) + "@example.net"})
	}
	add(engine.Event{Type: engine.EvRolesDrawn, At: at(1), To: engine.Audience{Referee: true},
		Roles: []engine.Role{engine.Doctor, engine.Inspector, engine.Vigilante, engine.Mafia, engine.Townsperson}})
	add(engine.Event{Type: engine.EvDayStarted, At: at(1), To: pub, Day: 1, Round: engine.Opening})
	add(engine.Event{Type: engine.EvVoted, At: at(10), To: pub, Slot: 1, Name: "Alice", Target: 4})
	add(engine.Event{Type: engine.EvVoted, At: at(11), To: pub, Slot: 4, Name: "Dave", Target: 1})
	add(engine.Event{Type: engine.EvUnvoted, At: at(12), To: pub, Slot: 4, Name: "Dave"})
	add(engine.Event{Type: engine.EvVoted, At: at(13), To: pub, Slot: 2, Name: "Bob", Target: 4})
	add(engine.Event{Type: engine.EvLocked, At: at(14), To: pub, Slot: 2, Name: "Bob", Target: 4})
	add(engine.Event{Type: engine.EvVoted, At: at(15), To: pub, Slot: 3, Name: "Carol", Null: true, Target: engine.NullVote})
	add(engine.Event{Type: engine.EvRoundClosed, At: at(60), To: pub, Day: 1, Round: engine.Opening, Outcome: engine.Eliminated, Target: 4,
		Tally: &engine.Tally{Votes: []engine.TallyVote{{Name: "Alice", Target: "Dave"}, {Name: "Bob", Target: "Dave", Locked: true},
			{Name: "Carol", Null: true}, {Name: "Dave"}, {Name: "Erin"}}}})
	add(engine.Event{Type: engine.EvPlayerDied, At: at(60), To: pub, Slot: 4, Name: "Dave", Reason: string(engine.ByVote)})
	add(engine.Event{Type: engine.EvNightStarted, At: at(60), To: pub, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, At: at(61), To: engine.Audience{Mafia: true, Referee: true}, By: 4, Name: "Dave", Verb: engine.CmdKill, Target: 1, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, At: at(62), To: ref(1), By: 1, Name: "Alice", Verb: engine.CmdProtect, Target: 1, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, At: at(63), To: ref(2), By: 2, Name: "Bob", Verb: engine.CmdInspect, Target: 5, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, At: at(64), To: ref(3), By: 3, Name: "Carol", Verb: engine.CmdShoot, Target: 5, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, At: at(65), To: ref(3), By: 3, Name: "Carol", Verb: engine.CmdPass, Day: 1})
	add(engine.Event{Type: engine.EvDawn, At: at(120), To: pub, Day: 1, Blocked: 1})
	add(engine.Event{Type: engine.EvInspection, At: at(120), To: ref(2), By: 2, Name: "Bob", Target: 5, Result: "Erin is not Mafia", Day: 1})
	add(engine.Event{Type: engine.EvDayStarted, At: at(120), To: pub, Day: 2, Round: engine.Opening})
	add(engine.Event{Type: engine.EvDayShot, At: at(130), To: ref(3), By: 3, Name: "Carol", Target: 5, Day: 2})
	add(engine.Event{Type: engine.EvPlayerDied, At: at(130), To: pub, Slot: 5, Name: "Erin", Reason: string(engine.ByVigilanteDay)})
	return log
}

func ended(log []engine.Event) []engine.Event {
	return append(log, engine.Event{V: engine.EventVersion, Type: engine.EvGameEnded, At: t0.Add(131 * time.Minute),
		To: engine.Audience{Public: true}, Winner: engine.Town, Salt: "00", Commitment: "x",
		Names: []string{"Alice", "Bob", "Carol", "Dave", "Erin"},
		Roles: []engine.Role{engine.Doctor, engine.Inspector, engine.Vigilante, engine.Mafia, engine.Townsperson}})
}

func TestBuildFinishedGame(t *testing.T) {
	h := Build(ended(sampleLog()))
	if !h.Revealed || h.Winner != engine.Town || h.Game != "g1" {
		t.Fatalf("revealed %v, winner %q, game %q", h.Revealed, h.Winner, h.Game)
	}
	if got := h.Players[3]; got.Role != engine.Mafia || got.Side != engine.MafiaWin || got.Died != engine.ByVote {
		t.Errorf("Dave = %+v", got)
	}
	if len(h.Days) != 2 {
		t.Fatalf("%d days, want 2", len(h.Days))
	}
	d1 := h.Days[0]
	if len(d1.Rounds) != 1 || d1.Rounds[0].Outcome != engine.Eliminated {
		t.Fatalf("day 1 rounds = %+v", d1.Rounds)
	}
	kinds := []MoveKind{}
	for _, m := range d1.Rounds[0].Moves {
		kinds = append(kinds, m.Kind)
	}
	if want := []MoveKind{MoveVote, MoveVote, MoveUnvote, MoveVote, MoveLock, MoveVote}; !reflect.DeepEqual(kinds, want) {
		t.Errorf("moves = %v, want %v", kinds, want)
	}
	if m := d1.Rounds[0].Moves[4]; m.Voter != "Bob" || m.Target != "Dave" || !m.At.Equal(t0.Add(14*time.Minute)) {
		t.Errorf("lock = %+v", m)
	}
	if v := d1.Rounds[0].Votes[2]; v.Voter != "Carol" || !v.Null {
		t.Errorf("Carol's vote at the close = %+v", v)
	}
	if len(d1.Deaths) != 1 || d1.Deaths[0].Name != "Dave" || d1.Deaths[0].Cause != engine.ByVote {
		t.Errorf("day 1 deaths = %+v", d1.Deaths)
	}
	n := d1.Night
	want := &Night{Number: 1, Kill: "Alice", Protections: []Protection{{By: "Alice", Target: "Alice"}}, Saved: 1, Dawn: true,
		Inspections: []Inspection{{By: "Bob", Target: "Erin", Result: "Erin is not Mafia"}},
		Shots:       []Shot{{By: "Carol", Target: ""}}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("night 1 = %+v, want %+v", n, want)
	}
	d2 := h.Days[1]
	if len(d2.Shots) != 1 || d2.Shots[0] != (Shot{By: "Carol", Target: "Erin", ByDay: true}) {
		t.Errorf("day 2 shots = %+v", d2.Shots)
	}
	if len(d2.Deaths) != 1 || d2.Deaths[0].Cause != engine.ByVigilanteDay {
		t.Errorf("day 2 deaths = %+v", d2.Deaths)
	}
}

// A game in progress is told from its public events alone: no role, no
// night action, no shooter.
func TestBuildInProgressKeepsSecrets(t *testing.T) {
	h := Build(sampleLog())
	if h.Revealed {
		t.Fatal("a game in progress is revealed")
	}
	if len(h.Players) != 5 || h.Players[0].Name != "Alice" {
		t.Fatalf("players = %+v: the seats' names are public once the game started", h.Players)
	}
	for _, p := range h.Players {
		if p.Role != "" || p.Side != "" {
			t.Errorf("%s shows role %q side %q", p.Name, p.Role, p.Side)
		}
	}
	n := h.Days[0].Night
	if n == nil {
		t.Fatal("night 1 is missing: that it happened is public")
	}
	if n.Kill != "" || len(n.Protections) != 0 || n.Saved != 1 || len(n.Inspections) != 0 || len(n.Shots) != 0 {
		t.Errorf("night 1 tells secrets: %+v", n)
	}
	if len(h.Days[1].Shots) != 0 {
		t.Errorf("day 2 names its shooter: %+v", h.Days[1].Shots)
	}
	if len(h.Days[1].Deaths) != 1 {
		t.Errorf("the day-2 death is public, got %+v", h.Days[1].Deaths)
	}
}

// An end without roles (the referee ended the game before the draw)
// reveals nothing.
func TestBuildEndWithoutRoles(t *testing.T) {
	log := append(sampleLog(), engine.Event{V: engine.EventVersion, Type: engine.EvGameEnded, To: engine.Audience{Public: true}, Winner: engine.NoWinner})
	if h := Build(log); h.Revealed || h.Days[0].Night.Kill != "" {
		t.Errorf("revealed %v, night %+v", h.Revealed, h.Days[0].Night)
	}
}

// Before the start the sign-ups are the referee's to know: no seat is
// named.
func TestBuildBeforeTheStartNamesNoSeat(t *testing.T) {
	log := sampleLog()[:6] // the game and its five sign-ups
	if h := Build(log); len(h.Players) != 0 {
		t.Errorf("players before the start: %+v", h.Players)
	}
}

// With two Doctors, each one's protection of the night is told, in the
// order of the seats, and the setup's count of Doctors, which is public,
// is known while the game runs (N8).
func TestBuildTwoDoctors(t *testing.T) {
	pub := engine.Audience{Public: true}
	ref := func(slot int) engine.Audience { return engine.Audience{Slot: slot, Referee: true} }
	setup := engine.Mafia150()
	setup.Players, setup.Mafia, setup.Inspectors, setup.Doctors, setup.Vigilantes = 5, 1, 0, 2, 2
	var log []engine.Event
	add := func(e engine.Event) { e.V, e.At = engine.EventVersion, t0; log = append(log, e) }
	add(engine.Event{Type: engine.EvGameCreated, To: engine.Audience{Referee: true}, Game: "g2", Setup: &setup})
	for i, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin"} {
		add(engine.Event{Type: engine.EvPlayerJoined, To: ref(i + 1), Slot: i + 1, Name: n})
	}
	add(engine.Event{Type: engine.EvDayStarted, To: pub, Day: 1, Round: engine.Opening})
	add(engine.Event{Type: engine.EvNightStarted, To: pub, Day: 1})
	// Dave protects before Bob does; the seats tell them Bob first.
	add(engine.Event{Type: engine.EvActionTaken, To: ref(4), By: 4, Name: "Dave", Verb: engine.CmdProtect, Target: 1, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, To: ref(2), By: 2, Name: "Bob", Verb: engine.CmdProtect, Target: 3, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, To: ref(2), By: 2, Name: "Bob", Verb: engine.CmdProtect, Target: 1, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, To: ref(5), By: 5, Name: "Erin", Verb: engine.CmdShoot, Target: 1, Day: 1})
	add(engine.Event{Type: engine.EvActionTaken, To: ref(3), By: 3, Name: "Carol", Verb: engine.CmdShoot, Target: 4, Day: 1})
	add(engine.Event{Type: engine.EvDawn, To: pub, Day: 1, Blocked: 2})
	if h := Build(log); h.Doctors != 2 || h.Days[0].Night.Protections != nil {
		t.Fatalf("in progress: %d Doctors, protections %+v", h.Doctors, h.Days[0].Night.Protections)
	}
	log = append(log, engine.Event{V: engine.EventVersion, Type: engine.EvGameEnded, At: t0, To: pub, Winner: engine.Town,
		Names: []string{"Alice", "Bob", "Carol", "Dave", "Erin"},
		Roles: []engine.Role{engine.Mafia, engine.Doctor, engine.Vigilante, engine.Doctor, engine.Vigilante}})
	n := Build(log).Days[0].Night
	if want := []Protection{{By: "Bob", Target: "Alice"}, {By: "Dave", Target: "Alice"}}; !reflect.DeepEqual(n.Protections, want) {
		t.Errorf("protections %+v, want %+v", n.Protections, want)
	}
	if want := []Shot{{By: "Carol", Target: "Dave"}, {By: "Erin", Target: "Alice"}}; !reflect.DeepEqual(n.Shots, want) || n.Saved != 2 {
		t.Errorf("shots %+v saved %d", n.Shots, n.Saved)
	}
}
