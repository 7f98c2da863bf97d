package engine

import (
	"reflect"
	"testing"
)

// TestZone: ZONE in the private channel sets the zone a player's copies
// show times in beside the game's (D8), ZONE alone shows it, an unknown
// zone is refused, the choice is part of the log (a replay has it), and a
// substitute does not inherit it.
func TestZone(t *testing.T) {
	g := town7(t)
	zone := func(who string, ch Channel, text string) ([]Event, error) {
		return g.apply(Command{Verb: CmdZone, By: PlayerActor(g.slot(who)), Channel: ch, Text: text})
	}
	evs, err := zone("Carol", Private, "Europe/Berlin")
	if e := find(evs, EvZoneSet); err != nil || e == nil || e.Text != "Europe/Berlin" || e.To.Referee || e.To.Public {
		t.Fatalf("ZONE Europe/Berlin: %+v %v", evs, err)
	}
	if p := g.s.Player(g.slot("Carol")); p.Zone != "Europe/Berlin" {
		t.Fatalf("Carol's zone is %q", p.Zone)
	}
	evs, err = zone("Carol", Private, "")
	if e := find(evs, EvZoneShown); err != nil || e == nil || e.Text != "Europe/Berlin" {
		t.Fatalf("ZONE alone: %+v %v", evs, err)
	}
	for _, bad := range []string{"Berlin", "Mars/Olympus", "EST5EDT"} {
		if _, err := zone("Dave", Private, bad); err == nil {
			t.Errorf("ZONE %s was accepted", bad)
		} else if r, ok := err.(*Refusal); !ok || r.Reason != BadArgument {
			t.Errorf("ZONE %s: %v", bad, err)
		}
	}
	if _, err := zone("Dave", Thread, "Europe/Berlin"); err == nil {
		t.Error("ZONE in the thread was accepted")
	}
	// The game's own zone is no zone of one's own.
	if evs, err := zone("Dave", Private, "America/New_York"); err != nil || find(evs, EvZoneSet).Text != "" {
		t.Errorf("ZONE with the game's zone: %+v %v", evs, err)
	}
	// The log is the game: a replay has the zone.
	again, err := Replay(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Player(g.slot("Carol")), g.s.Player(g.slot("Carol"))) {
		t.Fatalf("after a replay Carol is %+v, was %+v", again.Player(g.slot("Carol")), g.s.Player(g.slot("Carol")))
	}
	// A substitute takes the seat, not the old player's zone.
	if _, err := g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Carol", Address: "sub@example.org", Token: "newtok"}); err != nil {
		t.Fatal(err)
	}
	if p := g.s.Player(g.slot("Carol")); p.Zone != "" {
		t.Fatalf("the substitute inherited the zone %q", p.Zone)
	}
}
