package engine

import (
	"reflect"
	"testing"
	"time"
)

// TestT1_EachReaderTakesTheThreadAsTheyChoose: MAIL DIGEST in the private
// channel gathers the thread into digests for that player, in a game that
// sends each post, at DefaultDigestInterval from the choice; MAIL EACH
// ends it, first sending what is gathered; MAIL alone says which is in
// force. The choice is part of the log, and a substitute does not inherit
// it.
func TestT1_EachReaderTakesTheThreadAsTheyChoose(t *testing.T) {
	g := town7(t)
	carol := g.p("Carol")
	if g.s.DigestEvery() != 0 || g.s.TakesDigests(carol) {
		t.Fatal("a classic game gathers the thread before anyone asked")
	}
	mail := func(who string, ch Channel, text string) ([]Event, error) {
		return g.apply(Command{Verb: CmdMail, By: PlayerActor(g.slot(who)), Channel: ch, Text: text})
	}
	if evs, err := mail("Carol", Private, ""); err != nil || find(evs, EvMailShown) == nil || find(evs, EvMailShown).Text != MailEach {
		t.Fatalf("MAIL alone before any choice: %+v %v", evs, err)
	}
	evs, err := mail("Carol", Private, "digest")
	if e := find(evs, EvMailSet); err != nil || e == nil || e.Text != MailDigest || !reflect.DeepEqual(e.To, toPlayer(carol.Slot)) {
		t.Fatalf("MAIL DIGEST: %+v %v", evs, err)
	}
	if !g.s.TakesDigests(carol) || g.s.DigestEvery() != DefaultDigestInterval || g.s.TakesDigests(g.p("Dave")) {
		t.Fatal("MAIL DIGEST did not make Carol, and only her, a reader of digests")
	}
	chosen := g.now
	g.ok("Dave", Thread, CmdPost, "Carol is quiet today.")
	g.vote("Erin", "Dave")
	if g.s.DigestPending != 2 {
		t.Fatalf("%d items gathered, want the post and the vote", g.s.DigestPending)
	}
	if next, ok := NextDeadline(g.s); !ok || next.After(chosen.Add(DefaultDigestInterval)) {
		t.Fatalf("the next deadline %v is after the digest due at %v", next, chosen.Add(DefaultDigestInterval))
	}
	if evs := g.at(chosen.Add(DefaultDigestInterval)); find(evs, EvDigest) == nil || find(evs, EvDigest).Count != 2 {
		t.Fatalf("no digest of 2 at its interval: %+v", evs)
	}
	// EACH with news gathered: the digest goes first, then the choice.
	g.ok("Dave", Thread, CmdPost, "Still quiet.")
	evs, err = mail("Carol", Private, "EACH")
	if err != nil || len(evs) != 2 || evs[0].Type != EvDigest || evs[0].Count != 1 || evs[1].Type != EvMailSet || evs[1].Text != MailEach {
		t.Fatalf("MAIL EACH with a post gathered: %+v %v", evs, err)
	}
	if g.s.DigestEvery() != 0 || g.s.DigestPending != 0 {
		t.Fatal("digests still run with no one taking them")
	}
	g.ok("Dave", Thread, CmdPost, "Anyone?")
	if g.s.DigestPending != 0 {
		t.Fatal("a post was gathered with no reader of digests")
	}
	if _, err := mail("Carol", Thread, "DIGEST"); err == nil {
		t.Error("MAIL in the thread was accepted")
	}
	if _, err := mail("Carol", Private, "WEEKLY"); err == nil {
		t.Error("MAIL WEEKLY was accepted")
	}
	again, err := Replay(g.log)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, g.s) {
		t.Fatal("a replay of the log differs from the game")
	}
	mail("Frank", Private, "DIGEST")
	if _, err := g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Frank", Address: "sub@example.org", Token: "newtok"}); err != nil {
		t.Fatal(err)
	}
	if p := g.p("Frank"); p.Mail != "" {
		t.Fatalf("the substitute inherited the choice %q", p.Mail)
	}
}

// In a game whose setup gathers the thread, MAIL EACH takes a player out
// of the digests while the others keep them.
func TestT1_EachInADigestGame(t *testing.T) {
	setup := Classic()
	setup.DigestInterval = 3 * time.Hour
	g := rigged(t, setup, Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	if !g.s.TakesDigests(g.p("Carol")) {
		t.Fatal("a reader of a digest game takes no digests")
	}
	if _, err := g.apply(Command{Verb: CmdMail, By: PlayerActor(g.slot("Carol")), Channel: Private, Text: "each"}); err != nil {
		t.Fatal(err)
	}
	if g.s.TakesDigests(g.p("Carol")) || !g.s.TakesDigests(g.p("Dave")) || g.s.DigestEvery() != 3*time.Hour {
		t.Fatal("MAIL EACH in a digest game")
	}
}
