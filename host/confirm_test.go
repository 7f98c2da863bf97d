package host

import (
	"strings"
	"testing"
	"time"
)

// Without an authserv-id, NEW GAME and JOIN take effect only when the
// mailbox in From replies to the one-time address the answer gives: a
// forger, who never sees that answer, gets no game and no seat, and a
// reply from anyone else, a made-up address, a second reply or a late one
// applies nothing.
func TestUnprovenRequestsWaitForConfirmation(t *testing.T) {
	t.Parallel()
	hs := newUnprovenHarness(t, 0)
	const ref = "ref@example.org"

	hs.send(ref, "host@example.org", "NEW GAME g1")
	if _, ok := hs.h.Game("g1"); ok {
		t.Fatal("NEW GAME from unproven mail created the game before any confirmation")
	}
	asks := hs.mailTo(ref, 0)
	if len(asks) != 1 {
		t.Fatalf("%d answers to NEW GAME, want 1", len(asks))
	}
	l := parseLetter(asks[0].Raw)
	if !strings.HasPrefix(l.ReplyTo, "host+g1-c-") || !strings.Contains(l.Text, "Press Reply and send") ||
		!strings.Contains(l.Text, "… NEW GAME") || !strings.Contains(l.Text, "Waiting for your reply") {
		t.Fatalf("the answer does not ask for a confirmation (Reply-To %s):\n%s", l.ReplyTo, l.Text)
	}
	confirmNewGame := l.ReplyTo

	// Someone else replying to the address, or to one made up, is not
	// answered and applies nothing.
	before := len(hs.outbox())
	hs.send("eve@evil.test", confirmNewGame, "yes")
	hs.send(ref, "host+g1-c-aaaaaaaaaaaaaaaa@example.org", "yes")
	if _, ok := hs.h.Game("g1"); ok || len(hs.outbox()) != before {
		t.Fatalf("a reply from another sender or to a made-up token did something: game %v, %d new mails", ok, len(hs.outbox())-before)
	}

	// The held request survives a restart, and the referee's reply
	// creates the game, answered as NEW GAME is.
	hs.restart()
	hs.send(ref, confirmNewGame, "")
	if _, ok := hs.h.Game("g1"); !ok {
		t.Fatal("the referee's confirmation did not create the game")
	}
	if got := parseLetter(hs.mailTo(ref, before)[0].Raw); !strings.Contains(got.Text, "✓ NEW GAME g1") {
		t.Errorf("the answer to the confirmation is not NEW GAME's:\n%s", got.Text)
	}
	// A second reply applies nothing more, and says so.
	before = len(hs.outbox())
	hs.send(ref, confirmNewGame, "")
	if got := hs.mailTo(ref, before); len(got) != 1 || !strings.Contains(parseLetter(got[0].Raw).Text, "confirmed already") {
		t.Errorf("a second confirmation: %d answers, want one saying it was confirmed already", len(got))
	}
	if n := len(hs.h.games); n != 1 {
		t.Fatalf("%d games after two confirmations, want 1", n)
	}

	// A forged JOIN in Alice's name: Alice is asked, and her seat comes
	// only with her reply.
	hs.send(addr("Alice"), "host+g1@example.org", "JOIN Alice")
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("%d seats before the confirmation", n)
	}
	ask := parseLetter(hs.mailTo(addr("Alice"), 0)[0].Raw)
	if !strings.HasPrefix(ask.ReplyTo, "host+g1-c-") || strings.Contains(ask.Text, "Alice") && !strings.Contains(ask.Text, "… JOIN") {
		t.Fatalf("the answer to JOIN does not ask for a confirmation (Reply-To %s):\n%s", ask.ReplyTo, ask.Text)
	}
	hs.send(addr("Alice"), ask.ReplyTo, "")
	s := hs.game("g1")
	if len(s.Players) != 1 || s.Players[0].Name != "Alice" {
		t.Fatalf("after Alice's confirmation: %d seats", len(s.Players))
	}

	// A JOIN the game would refuse is refused at once: nothing to confirm.
	before = len(hs.outbox())
	hs.send(addr("Carol"), "host+g1@example.org", "JOIN Alice")
	refusal := parseLetter(hs.mailTo(addr("Carol"), before)[0].Raw)
	if strings.Contains(refusal.ReplyTo, "-c-") || !strings.Contains(refusal.Text, "✗ JOIN") {
		t.Errorf("a JOIN under a taken name was held, not refused (Reply-To %s):\n%s", refusal.ReplyTo, refusal.Text)
	}

	// A confirmation that comes after two days applies nothing.
	hs.send(addr("Bob"), "host+g1@example.org", "JOIN Bob")
	late := parseLetter(hs.mailTo(addr("Bob"), 0)[0].Raw).ReplyTo
	hs.now = hs.now.Add(confirmFor + time.Minute)
	before = len(hs.outbox())
	hs.send(addr("Bob"), late, "")
	if n := len(hs.game("g1").Players); n != 1 {
		t.Fatalf("a late confirmation seated Bob: %d seats", n)
	}
	if got := hs.mailTo(addr("Bob"), before); len(got) != 1 || !strings.Contains(parseLetter(got[0].Raw).Text, "lapsed") {
		t.Errorf("a late confirmation: %d answers, want one saying the request lapsed", len(got))
	}
}

// A forged JOIN from a suspended address does not serve the suspension:
// only a confirmed JOIN that it keeps out does.
func TestForgedJoinLeavesTheSuspension(t *testing.T) {
	t.Parallel()
	hs := newUnprovenHarness(t, 0)
	const troll = "troll@players.test"
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	hs.confirm("ref@example.org")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SUSPEND "+troll)
	for range 3 { // forgeries, never confirmed
		hs.send(troll, "host+g1@example.org", "JOIN Troll")
	}
	before := len(hs.outbox())
	hs.confirm(troll)
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("the first confirmed JOIN took a seat: the forged ones had used up the suspension")
	}
	if answers := hs.mailTo(troll, before); len(answers) != 1 || !strings.Contains(parseLetter(answers[0].Raw).Text, "suspend") {
		t.Fatalf("%d answers to the confirmed JOIN, want one that names the suspension", len(answers))
	}
	hs.send(troll, "host+g1@example.org", "JOIN Troll")
	hs.confirm(troll)
	if n := len(hs.game("g1").Players); n != 1 {
		t.Fatalf("%d seats after the suspension was served, want the troll's", n)
	}
}

// The confirmation of a JOIN is game mail, taken in its order with the
// game's other mail; that of a NEW GAME names no game yet.
func TestTriageTakesConfirmationsOfGamesThatExist(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	for to, want := range map[string]bool{
		"host+g1-c-aaaaaaaaaaaaaaaa@example.org": true,
		"host+g2-c-aaaaaaaaaaaaaaaa@example.org": false,
	} {
		if got := hs.h.Triage([]byte("From: someone@players.test\r\nTo: " + to + "\r\n\r\n")); got != want {
			t.Errorf("Triage(To: %s) = %v, want %v", to, got, want)
		}
	}
}
