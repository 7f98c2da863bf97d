package engine

import (
	"strings"
	"testing"
	"time"
)

func berlin(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, mustZone("Europe/Berlin"))
}

// zoned is a game of five (Alice the Mafioso) whose setup is classic with
// the SETUP pairs args, its Day 1 opening at start.
func zoned(t *testing.T, args string, start time.Time) *game {
	t.Helper()
	setup, err := ParseSetup(Classic(), "classic "+args)
	if err != nil {
		t.Fatalf("SETUP classic %s: %v", args, err)
	}
	setup.ReminderBefore = 0
	return riggedAt(t, start, setup, Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
}

// weekendNote is the tally's note on a held deadline, in English, or "".
func (g *game) weekendNote() string {
	for _, n := range g.s.Tally(g.now).Notes {
		if strings.Contains(n, "weekend") && strings.Contains(n, "held") {
			return n
		}
	}
	return ""
}

func TestD7_BuiltInSetupsKeepChicagosWindow(t *testing.T) {
	for _, s := range []Setup{Classic(), Mafia150()} {
		if zone, on := s.WeekendWindow(); !on || zone != "America/Chicago" {
			t.Errorf("%s: window %q on %v, want America/Chicago", s.Name, zone, on)
		}
	}
	// Naming the default zone is not a zone of one's own.
	s, err := ParseSetup(Classic(), "zone=America/New_York players=12")
	if err != nil {
		t.Fatal(err)
	}
	if zone, _ := s.WeekendWindow(); zone != "America/Chicago" {
		t.Errorf("a New York game's window is %s, want Chicago's", zone)
	}
	if got := s.Summary(); got != "12 players: 3 Mafia, 1 Inspector, 8 Townspeople; no day round closes from Friday 17:00 to Monday 07:00 Chicago time" {
		t.Errorf("D7: the summary names the window in force, the seed's too: %q", got)
	}
	// A classic game keeps Chicago's window: a deadline on Friday 18:00
	// Chicago time (Saturday 01:00 in Berlin) is held to Monday 07:00
	// Chicago time, and the note says so in Chicago's words.
	g := zoned(t, "", chicago(2026, 12, 3, 6))
	if !g.s.Deadline.Equal(chicago(2026, 12, 4, 18)) {
		t.Fatalf("deadline %v", g.s.Deadline)
	}
	if !g.s.ClosesAt().Equal(chicago(2026, 12, 7, 7)) {
		t.Fatalf("closes %v, want Monday 07:00 Chicago time", g.s.ClosesAt().In(mustZone(SeedWeekendZone)))
	}
	if n := g.weekendNote(); !strings.Contains(n, "Friday 17:00 to Monday 07:00 Chicago time") || !strings.Contains(n, "held to Monday 07:00 Chicago time") {
		t.Errorf("note %q", n)
	}
}

func TestD7_WeekendInTheGamesOwnZone(t *testing.T) {
	s, err := ParseSetup(Classic(), "zone=Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	if zone, on := s.WeekendWindow(); !on || zone != "Europe/Berlin" {
		t.Fatalf("a Berlin game's window: %q %v", zone, on)
	}
	if got, want := s.Summary(), "11 players: 3 Mafia, 1 Inspector, 7 Townspeople; no day round closes from Friday 17:00 to Monday 07:00 Berlin time"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	st := &State{Setup: s}
	for at, want := range map[time.Time]bool{
		berlin(2026, 12, 4, 16, 59): false,
		berlin(2026, 12, 4, 17, 0):  true, // Friday 10:00 in Chicago
		berlin(2026, 12, 6, 12, 0):  true,
		berlin(2026, 12, 7, 6, 59):  true,
		berlin(2026, 12, 7, 7, 0):   false, // Monday 00:00 in Chicago
	} {
		if got := st.InWeekend(at); got != want {
			t.Errorf("InWeekend(%v) = %v, want %v", at, got, want)
		}
	}

	t.Run("a deadline on Friday evening in Berlin is held to Monday 07:00 Berlin time", func(t *testing.T) {
		// Friday 18:00 in Berlin is Friday 11:00 in Chicago, which Chicago's
		// window would not hold.
		g := zoned(t, "zone=Europe/Berlin", berlin(2026, 12, 3, 6, 0))
		if !g.s.Deadline.Equal(berlin(2026, 12, 4, 18, 0)) {
			t.Fatalf("deadline %v", g.s.Deadline)
		}
		if got := g.s.ClosesAt(); !got.Equal(berlin(2026, 12, 7, 7, 0)) {
			t.Fatalf("closes %v, want Monday 07:00 Berlin time", got.In(mustZone("Europe/Berlin")))
		}
		if n := g.weekendNote(); !strings.Contains(n, "Friday 17:00 to Monday 07:00 Berlin time") || !strings.Contains(n, "held to Monday 07:00 Berlin time") {
			t.Errorf("the note must name the game's window: %q", n)
		}
		if evs := g.at(berlin(2026, 12, 7, 6, 59)); hasType(evs, EvRoundClosed) {
			t.Fatal("closed inside the Berlin weekend")
		}
		if evs := g.at(berlin(2026, 12, 7, 7, 0)); !hasType(evs, EvRoundClosed) {
			t.Fatal("no close at Monday 07:00 Berlin time")
		}
	})
	t.Run("GRANT 6h from Friday afternoon lands in the Berlin weekend", func(t *testing.T) {
		// The complaint: GRANT 6h moved a Berlin game's close to Monday
		// 14:00 CET, Chicago's Monday 07:00. Its weekend is Berlin's now.
		g := zoned(t, "zone=Europe/Berlin", berlin(2026, 12, 3, 2, 51)) // deadline Friday 14:51
		g.now = berlin(2026, 12, 4, 12, 0)
		g.ok("Bob", Thread, CmdExtend, "")
		evs, err := g.apply(Command{Verb: CmdGrant, By: Referee, Channel: Private, Duration: 6 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if e := find(evs, EvExtended); e == nil || !e.Deadline.Equal(berlin(2026, 12, 4, 20, 51)) {
			t.Fatalf("extended: %+v", e)
		}
		if got := g.s.ClosesAt(); !got.Equal(berlin(2026, 12, 7, 7, 0)) {
			t.Fatalf("closes %v, want Monday 07:00 CET, not 14:00", got.In(mustZone("Europe/Berlin")))
		}
	})
	t.Run("Monday morning in Berlin is no weekend", func(t *testing.T) {
		// Monday 07:30 in Berlin is Monday 00:30 in Chicago: Chicago's
		// window would hold it to 14:00 Berlin time.
		g := zoned(t, "zone=Europe/Berlin", berlin(2026, 12, 5, 19, 30))
		if got := g.s.ClosesAt(); !got.Equal(berlin(2026, 12, 7, 7, 30)) || g.weekendNote() != "" {
			t.Fatalf("closes %v (note %q), want Monday 07:30 as set", got.In(mustZone("Europe/Berlin")), g.weekendNote())
		}
	})
	t.Run("an early close waits for Monday 07:00 Berlin time", func(t *testing.T) {
		g := zoned(t, "zone=Europe/Berlin", berlin(2026, 12, 4, 12, 0))
		g.at(berlin(2026, 12, 5, 12, 0)) // Saturday
		g.vote("Alice", "Bob")
		for _, n := range []string{"Bob", "Carol", "Dave", "Erin"} {
			g.vote(n, "Alice")
		}
		for _, n := range []string{"Carol", "Dave", "Erin"} {
			g.lock(n)
		}
		if g.s.Phase != DayPhase {
			t.Fatal("an early close happened on the Berlin weekend")
		}
		if d, _ := NextDeadline(g.s); !d.Equal(berlin(2026, 12, 7, 7, 0)) {
			t.Fatalf("held close at %v, want Monday 07:00 Berlin time", d)
		}
	})
	t.Run("WEEKEND CLOSE is judged by the Berlin window", func(t *testing.T) {
		g := zoned(t, "zone=Europe/Berlin", berlin(2026, 12, 3, 10, 0))
		g.now = berlin(2026, 12, 4, 17, 30) // Friday 10:30 in Chicago
		g.refused(NotAllowed, "ref", Private, CmdWeekendClose, "")
	})
}

func TestD7_WeekendZoneNamesAnother(t *testing.T) {
	s, err := ParseSetup(Classic(), "zone=Europe/Berlin weekend_zone=Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	if zone, on := s.WeekendWindow(); !on || zone != "Asia/Tokyo" {
		t.Fatalf("window %q %v, want Asia/Tokyo", zone, on)
	}
	if got := s.Summary(); !strings.HasSuffix(got, "; no day round closes from Friday 17:00 to Monday 07:00 Tokyo time") {
		t.Errorf("summary %q", got)
	}
	// Friday 12:00 in Berlin is Friday 20:00 in Tokyo: held to Monday
	// 07:00 in Tokyo, which is Sunday 23:00 in Berlin.
	g := zoned(t, "zone=Europe/Berlin weekend_zone=Asia/Tokyo", berlin(2026, 12, 3, 0, 0))
	tokyo := mustZone("Asia/Tokyo")
	if got, want := g.s.ClosesAt(), time.Date(2026, 12, 7, 7, 0, 0, 0, tokyo); !got.Equal(want) || !got.Equal(berlin(2026, 12, 6, 23, 0)) {
		t.Fatalf("closes %v, want %v", got.In(tokyo), want)
	}
	if n := g.weekendNote(); !strings.Contains(n, "Tokyo time") {
		t.Errorf("note %q", n)
	}
	// weekend_zone may also put a game of the default zone elsewhere.
	s, err = ParseSetup(Classic(), "weekend_zone=America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	if zone, _ := s.WeekendWindow(); zone != "America/New_York" {
		t.Errorf("window %s", zone)
	}
	if _, err := ParseSetup(Classic(), "weekend_zone=Nowhere/Atlantis"); err == nil || !strings.Contains(err.Error(), "weekend_zone") {
		t.Errorf("an unknown weekend zone: %v", err)
	}
}

func TestD7_WeekendOff(t *testing.T) {
	s, err := ParseSetup(Classic(), "weekend=off zone=Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	if _, on := s.WeekendWindow(); on {
		t.Fatal("weekend=off left the rule on")
	}
	if got := s.Summary(); !strings.HasSuffix(got, "; day rounds close on weekends too") {
		t.Errorf("summary %q", got)
	}
	if on, err := ParseSetup(s, "weekend=on"); err != nil {
		t.Fatal(err)
	} else if zone, ok := on.WeekendWindow(); !ok || zone != "Europe/Berlin" {
		t.Errorf("weekend=on gives the window %q %v, want Berlin's again", zone, ok)
	}
	// A deadline on Saturday 12:00 Chicago time closes then.
	g := zoned(t, "weekend=off", chicago(2026, 12, 4, 0))
	if !g.s.Deadline.Equal(chicago(2026, 12, 5, 12)) || !g.s.ClosesAt().Equal(g.s.Deadline) || g.weekendNote() != "" {
		t.Fatalf("deadline %v closes %v", g.s.Deadline, g.s.ClosesAt())
	}
	g.vote("Bob", "Alice")
	if evs := g.at(chicago(2026, 12, 5, 12)); find(evs, EvRoundClosed) == nil {
		t.Fatal("no close on Saturday")
	}
	if g.s.Phase != EndedPhase {
		t.Fatalf("the Mafioso was voted out on Saturday: the town wins; phase %s", g.s.Phase)
	}
	// An early close on a Sunday is not held, and WEEKEND CLOSE is needless.
	g = zoned(t, "weekend=off", chicago(2026, 12, 5, 0))
	g.at(chicago(2026, 12, 6, 10))
	g.refused(NotAllowed, "ref", Private, CmdWeekendClose, "")
	g.vote("Alice", "Bob")
	for _, n := range []string{"Bob", "Carol", "Dave", "Erin"} {
		g.vote(n, "Alice")
	}
	g.lock("Carol")
	g.lock("Dave")
	if evs, _ := g.cmd("Erin", Thread, CmdLock, ""); find(evs, EvRoundClosed) == nil {
		t.Fatal("the early close waited on a Sunday in a game that plays through weekends")
	}
}
