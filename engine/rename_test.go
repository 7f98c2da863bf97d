package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// S4: until the game starts, a player may change the name they signed up
// with, from their private channel; the new name passes every check a
// sign-up's does, against everyone else. From the start on it is fixed.
func TestS4_NameChangesBeforeTheStartOnly(t *testing.T) {
	setup := Classic()
	setup.Players = 5
	setup.Mafia, setup.Inspectors, setup.Doctors, setup.Vigilantes = 1, 0, 0, 0
	s, created, err := NewGame("friday", "ref@example.org", setup, t0)
	if err != nil {
		t.Fatal(err)
	}
	g := &game{t: t, s: s, log: created, now: t0}
	for i, n := range []string{"bob", "Alice", "Carol", "Dave"} {
		if _, err := g.apply(Command{Verb: CmdJoin, Channel: Signup, Name: n,
			By: Actor{Kind: ByOutsider, Address: fmt.Sprintf("p%d@example.org", i+1)}, Token: fmt.Sprintf("tok%d", i+1)}); err != nil {
			t.Fatalf("JOIN %s: %v", n, err)
		}
	}
	rename := func(slot int, name string) ([]Event, error) {
		return g.apply(Command{Verb: CmdJoin, Channel: Private, Name: name, By: PlayerActor(slot)})
	}

	// "JOIN bob" made the player "bob"; they meant "Bob Stone".
	evs, err := rename(1, "Bob Stone")
	if err != nil {
		t.Fatalf("rename before the start: %v", err)
	}
	if len(evs) != 1 || evs[0].Type != EvPlayerRenamed || evs[0].Name != "Bob Stone" || evs[0].Text != "bob" ||
		evs[0].To != (Audience{Slot: 1, Referee: true}) {
		t.Fatalf("rename made %+v, want one player_renamed from bob to Bob Stone for the player and the referee", evs)
	}
	if got := g.s.Player(1).Name; got != "Bob Stone" {
		t.Fatalf("the player is called %q after the rename", got)
	}
	// A rename that only changes case or spacing of one's own name is fine:
	// it clashes with no one else.
	if _, err := rename(1, "bob stone"); err != nil {
		t.Errorf("rename to one's own name in other letters: %v", err)
	}
	// The checks of a sign-up, against the others.
	for _, tc := range []struct {
		name string
		why  Reason
		says string
	}{
		{"bob stone", Duplicate, "already"},
		{"Alice", Duplicate, `"Alice" is taken`},
		{"\u0410lice", Duplicate, "looks the same"},
		{"The Referee", BadArgument, "referee"},
		{"Friday", BadArgument, "the name of this game"},
		{"", BadArgument, "at least one letter"},
		{strings.Repeat("x", 31), BadArgument, "at most 30"},
	} {
		_, err := rename(1, tc.name)
		var r *Refusal
		if !errors.As(err, &r) || r.Reason != tc.why || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("rename to %q: %v, want a %s refusal saying %q", tc.name, err, tc.why, tc.says)
		}
	}
	if got := g.s.Player(1).Name; got != "bob stone" {
		t.Errorf("refused renames changed the name to %q", got)
	}
	// Only in the private channel: a JOIN of a seated player elsewhere is
	// no sign-up and no rename.
	if _, err := g.apply(Command{Verb: CmdJoin, Channel: Thread, Name: "Robert", By: PlayerActor(1)}); err == nil {
		t.Error("a JOIN in the thread renamed the player")
	}
	// The same address at the sign-up address is told where a rename goes.
	_, err = g.apply(Command{Verb: CmdJoin, Channel: Signup, Name: "Robert", By: Actor{Kind: ByOutsider, Address: "P1@example.org"}})
	if err == nil || !strings.Contains(err.Error(), "already plays as bob stone") || !strings.Contains(err.Error(), "reply to the mail that confirmed") {
		t.Errorf("JOIN from a seated address at the sign-up address: %v, want a refusal naming the seat and how to rename", err)
	}

	// The log replays to the same names.
	replayed, err := Replay(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if replayed.Player(1).Name != "bob stone" {
		t.Errorf("replay gives the name %q", replayed.Player(1).Name)
	}

	// From the start on, the name is fixed.
	if _, err := g.apply(Command{Verb: CmdJoin, Channel: Signup, Name: "Erin",
		By: Actor{Kind: ByOutsider, Address: "p5@example.org"}, Token: "tok5"}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.apply(Command{Verb: CmdStart, By: Referee}); err != nil {
		t.Fatalf("START: %v", err)
	}
	_, err = rename(2, "Alicia")
	var r *Refusal
	if !errors.As(err, &r) || r.Reason != WrongPhase || !strings.Contains(err.Error(), "fixed") {
		t.Errorf("rename after the start: %v, want a wrong-phase refusal saying the name is fixed", err)
	}
}
