package engine

import "testing"

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
