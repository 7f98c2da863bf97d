package engine

import (
	"slices"
	"strings"
	"testing"
)

// D2, D11: a vote for a dead player says who died and how, and names who
// can be voted for instead: the living, or in a runoff the tied players.
func TestD11_VoteForTheDeadInARunoff(t *testing.T) {
	g := town7(t)
	g.vote("Alice", "Carol")
	g.vote("Bob", "Carol")
	g.vote("Erin", "Dave")
	g.vote("Frank", "Dave")
	if ro := find(g.closeNow(), EvRunoffStarted); ro == nil {
		t.Fatal("no runoff")
	}
	g.ok("ref", Private, CmdModkill, "Frank")
	r := g.refused(Dead, "Grace", Thread, CmdVote, "frank")
	if want := "Frank is dead (removed by the referee); in the runoff you can vote only for Carol and Dave"; r.Message != want {
		t.Errorf("%q, want %q", r.Message, want)
	}
	// Other commands name the living.
	r = g.refused(Dead, "ref", Private, CmdModkill, "Frank")
	if want := "Frank is dead (removed by the referee); the living players are Alice, Bob, Carol, Dave, Erin and Grace"; r.Message != want {
		t.Errorf("%q, want %q", r.Message, want)
	}
}

// D1: a name that is exactly a dead player's is that dead player, even
// when it starts a living player's name: "Fred" with Fred removed and
// Freddy alive is refused as dead, never taken for Freddy, by every
// command that names a player. The refusal names Freddy as the one
// probably meant. A prefix still finds the living when no dead player is
// called exactly that.
func TestD1_ExactDeadNameIsTheDead(t *testing.T) {
	g := village(t)
	g.s.Players[g.slot("Frank")-1].Name = "Fred"
	g.s.Players[g.slot("Grace")-1].Name = "Freddy"
	g.ok("ref", Private, CmdModkill, "Fred")
	deadFred := func(r *Refusal, what string) {
		t.Helper()
		if !strings.HasPrefix(r.Message, "Fred is dead (removed by the referee); the living players are ") ||
			!strings.Contains(r.Message, "Freddy") {
			t.Errorf("%s: %q", what, r.Message)
		}
		if !slices.Equal(r.Candidates, []string{"Freddy"}) {
			t.Errorf("%s: candidates %v, want Freddy", what, r.Candidates)
		}
	}
	for _, target := range []string{"Fred", "fred", "FRED!", "F-red"} {
		deadFred(g.refused(Dead, "Carol", Thread, CmdVote, target), "VOTE "+target)
	}
	_, err := g.apply(Command{Verb: CmdVote, By: PlayerActor(g.slot("Carol")), Channel: Thread, Voter: "Carol", Target: "Fred"})
	if r, ok := err.(*Refusal); !ok || r.Reason != Dead {
		t.Errorf("Carol >> Fred: %v", err)
	}
	deadFred(g.refused(Dead, "ref", Private, CmdModkill, "Fred"), "MODKILL Fred")
	_, err = g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Fred", Address: "sub@example.org"})
	if r, ok := err.(*Refusal); !ok || r.Reason != Dead {
		t.Errorf("REPLACE Fred: %v", err)
	}
	if v := g.p("Carol").Vote; v != 0 {
		t.Fatalf("a vote for the dead Fred went to seat %d", v)
	}
	// A prefix that is no dead player's name still finds the living.
	g.vote("Carol", "Fre")
	if g.p("Carol").Vote != g.slot("Freddy") {
		t.Errorf("VOTE Fre went to seat %d, not Freddy", g.p("Carol").Vote)
	}

	g.toNight()
	for _, c := range []struct {
		who  string
		ch   Channel
		verb Verb
	}{
		{"Alice", MafiaCh, CmdKill}, {"Bob", Private, CmdKill}, {"Carol", Private, CmdInspect},
		{"Dave", Private, CmdProtect}, {"Erin", Private, CmdShoot},
	} {
		deadFred(g.refused(Dead, c.who, c.ch, c.verb, "Fred"), string(c.verb)+" Fred")
	}
	if n := g.s.Night; n.Whack != 0 || len(n.Inspects) != 0 || len(n.Protects) != 0 || len(n.Shots) != 0 {
		t.Errorf("a night action on the dead Fred was taken: %+v", n)
	}
}
