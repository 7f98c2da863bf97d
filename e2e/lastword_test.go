//go:build integration

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// TestTheRoundsLastWordComesBeforeItsClose: the message whose LOCK closes
// the round early carries discussion too; that discussion is relayed
// before the close, as the game's last word is before the end: in the log,
// and in the mail of a game with digests, where it comes in the digest
// before the close (or ahead of the close in the same mail), never after
// "The vote of Day 1 is over".
func TestTheRoundsLastWordComesBeforeItsClose(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin"}
	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	g.send(ref, created.ReplyTo, "SETUP players=5 mafia=1 doctors=1 inspectors=0 vigilantes=0 digest_interval=2h")
	g.answerTo(ref, "SETUP")
	for _, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
		g.answerTo(u, "JOIN")
	}
	g.send(ref, created.ReplyTo, "START")
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	s := g.state()
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	target := s.Players[0]
	// Everyone votes the first player, who votes the second; all but the
	// last voter lock. The last one's LOCK closes the round (D5).
	voters := s.Players[1:]
	thread0, _ := g.addrs(target.Slot)
	g.send(user(target.Slot), thread0, "VOTE "+voters[0].Name)
	g.answerTo(user(target.Slot), "VOTE")
	for _, p := range voters[:len(voters)-1] {
		th, _ := g.addrs(p.Slot)
		g.send(user(p.Slot), th, "VOTE "+target.Name+"\nLOCK")
		g.answerTo(user(p.Slot), "LOCK")
	}
	last := voters[len(voters)-1]
	th, _ := g.addrs(last.Slot)
	g.send(user(last.Slot), th, "VOTE "+target.Name+"\nLOCK\n\nThat is my last word on Day 1.")
	waitFor(t, "Night 1", func() bool { return g.state().Phase == engine.NightPhase })
	g.settled()

	evs, err := g.st.Events(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	said, closed := -1, -1
	for i, e := range evs {
		switch {
		case e.Type == string(engine.EvThreadPost) && strings.Contains(string(e.Payload), "my last word"):
			said = i
		case e.Type == string(engine.EvRoundClosed) && closed < 0:
			closed = i
		}
	}
	if said < 0 || closed < 0 || said > closed {
		t.Errorf("the last word is event %d and the close %d", said, closed)
	}
	for _, u := range append(users, ref) {
		word, close := -1, -1
		for i, l := range g.mailbox(u) {
			if l.Kind != "thread" {
				continue
			}
			w := strings.Index(l.Text, "That is my last word on Day 1.")
			c := strings.Index(l.Text, "The vote of Day 1 is over")
			if w >= 0 && c >= 0 && w > c {
				t.Errorf("%s: the last word follows the close in one mail:\n%s", u, l.Text)
			}
			if w >= 0 && word < 0 {
				word = i
			}
			if c >= 0 && close < 0 {
				close = i
			}
		}
		if word < 0 || close < 0 {
			t.Errorf("%s: the last word in letter %d, the close in %d: some never arrived", u, word, close)
			continue
		}
		if word > close {
			t.Errorf("%s: the last word arrived in letter %d, after the close in %d", u, word, close)
		}
	}
}
