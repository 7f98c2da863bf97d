package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestT5_CalendarOnAndOff: CALENDAR OFF in the private channel turns a
// player's calendar events off, CALENDAR ON back on, CALENDAR alone says
// which is in force; the choice is part of the log, the thread refuses it,
// and a substitute starts with calendars on.
func TestT5_CalendarOnAndOff(t *testing.T) {
	g := town7(t)
	carol := g.p("Carol")
	cal := func(who string, ch Channel, text string) ([]Event, error) {
		return g.apply(Command{Verb: CmdCalendar, By: PlayerActor(g.slot(who)), Channel: ch, Text: text})
	}
	if !g.s.SendsCalendar(carol) {
		t.Fatal("a player has no calendar before any choice")
	}
	if evs, err := cal("Carol", Private, ""); err != nil || find(evs, EvCalendarShown) == nil || find(evs, EvCalendarShown).Text != CalendarOn {
		t.Fatalf("CALENDAR alone: %+v %v", evs, err)
	}
	evs, err := cal("Carol", Private, "off")
	if e := find(evs, EvCalendarSet); err != nil || e == nil || e.Text != CalendarOff || !reflect.DeepEqual(e.To, toPlayer(carol.Slot)) {
		t.Fatalf("CALENDAR OFF: %+v %v", evs, err)
	}
	if g.s.SendsCalendar(g.p("Carol")) || !g.s.SendsCalendar(g.p("Dave")) {
		t.Fatal("CALENDAR OFF did not turn off Carol's, and only Carol's, calendar")
	}
	if evs, _ := cal("Carol", Private, ""); find(evs, EvCalendarShown).Text != CalendarOff {
		t.Fatal("CALENDAR alone after OFF does not say off")
	}
	if _, err := cal("Carol", Thread, "ON"); err == nil {
		t.Error("CALENDAR in the thread was accepted")
	}
	if _, err := cal("Carol", Private, "MAYBE"); err == nil || !strings.Contains(err.Error(), "ON or OFF") {
		t.Errorf("CALENDAR MAYBE: %v", err)
	}
	if _, err := cal("Carol", Private, "on"); err != nil || !g.s.SendsCalendar(g.p("Carol")) {
		t.Fatalf("CALENDAR ON: %v", err)
	}
	cal("Frank", Private, "OFF")
	again, err := Replay(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, g.s) {
		t.Fatal("a replay of the log differs from the game")
	}
	if _, err := g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Frank", Address: "sub@example.org", Token: "newtok"}); err != nil {
		t.Fatal(err)
	}
	if !g.s.SendsCalendar(g.p("Frank")) {
		t.Fatal("the substitute inherited CALENDAR OFF")
	}
}

// TestT5_CalendarOffForTheGame: the referee's setup key turns every
// player's calendar events off.
func TestT5_CalendarOffForTheGame(t *testing.T) {
	setup, err := ParseSetup(Classic(), "calendar=off")
	if err != nil || !setup.NoCalendar {
		t.Fatalf("calendar=off: %+v %v", setup.NoCalendar, err)
	}
	if _, err := ParseSetup(Classic(), "calendar=sometimes"); err == nil {
		t.Error("calendar=sometimes was accepted")
	}
	g := rigged(t, setup, Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	for i := range g.s.Players {
		if g.s.SendsCalendar(&g.s.Players[i]) {
			t.Fatalf("%s has a calendar in a game without", g.s.Players[i].Name)
		}
	}
}

// TestT5_DeadlineMovesCountTheRoundsChanges: every change to a voting
// round's close counts, from the state, and a new round starts again at
// zero; this is the calendar event's SEQUENCE.
func TestT5_DeadlineMovesCountTheRoundsChanges(t *testing.T) {
	g := town7(t)
	if g.s.DeadlineMoves != 0 {
		t.Fatalf("a new round has %d moves", g.s.DeadlineMoves)
	}
	g.apply(Command{Verb: CmdExtend, By: Referee, Channel: Private, Duration: 5 * time.Hour})
	g.apply(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Time: g.s.Deadline.Add(time.Hour)})
	if g.s.DeadlineMoves != 2 {
		t.Fatalf("%d moves after an extension and a new deadline, want 2", g.s.DeadlineMoves)
	}
	again, err := Replay(g.log)
	if err != nil || again.DeadlineMoves != 2 {
		t.Fatalf("a replay counts %d moves (%v)", again.DeadlineMoves, err)
	}
	g.at(g.s.ClosesAt())
	if g.s.DeadlineMoves != 0 {
		t.Fatalf("the next round starts with %d moves", g.s.DeadlineMoves)
	}
}
