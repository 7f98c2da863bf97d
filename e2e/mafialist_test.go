//go:build integration

package e2e

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// TestMafiaListByReply plays the start of a game over the embedded mail
// servers: each Mafioso finds the mafia list's first mail in their inbox,
// naming the other Mafiosi, and pressing Reply to it and writing reaches
// the other Mafiosi, and the author as the list's copy, and no one else.
func TestMafiaListByReply(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	g.started(ref, "SETUP players=6 mafia=2 inspectors=0 doctors=0 vigilantes=0", users)
	g.settled()
	s := g.state()
	var mafia []*engine.Player
	for i := range s.Players {
		if s.Players[i].Role == engine.Mafia {
			mafia = append(mafia, &s.Players[i])
		}
	}
	if len(mafia) != 2 {
		t.Fatalf("%d Mafiosi dealt", len(mafia))
	}
	user := func(p *engine.Player) string { return strings.ToLower(p.Name) }
	mafioso := map[string]bool{user(mafia[0]): true, user(mafia[1]): true}

	// Each Mafioso has the list's mail, naming the other; no one else has
	// one.
	for _, u := range append(users, ref) {
		for _, l := range g.mailbox(u) {
			if l.Kind == "mafia" && !mafioso[u] {
				t.Errorf("%s, no Mafioso, got mafia-list mail: %q", u, l.Subject)
			}
		}
	}
	var start letter
	for i, p := range mafia {
		other := mafia[1-i]
		l := g.await(user(p), "the mafia list's first mail", func(l letter) bool { return l.Kind == "mafia" })
		if first, _, _ := strings.Cut(l.Text, "\n"); !strings.Contains(first, other.Name) {
			t.Errorf("%s's mafia-list mail does not name %s: %q", p.Name, other.Name, first)
		}
		if want := "host+g1-m-" + p.Token + "@example.org"; l.ReplyTo != want {
			t.Errorf("%s's mafia-list mail has Reply-To %s, want %s", p.Name, l.ReplyTo, want)
		}
		if i == 0 {
			start = l
		}
	}

	// The first Mafioso presses Reply and writes.
	const words = "Let us keep our heads down today."
	g.reply(user(mafia[0]), start.ReplyTo, start.MessageID, words+"\n\n> "+strings.Split(start.Text, "\n")[0])
	g.await(user(mafia[1]), "the reply on the mafia list", func(l letter) bool {
		return l.Kind == "mafia" && strings.Contains(l.Text, words) && strings.Contains(l.Text, mafia[0].Name+" writes")
	})
	g.await(user(mafia[0]), "the author's own copy", func(l letter) bool {
		return l.Kind == "mafia" && strings.Contains(l.Text, words) && strings.HasPrefix(l.Text, "You write to the Mafia")
	})
	g.settled()
	for _, u := range append(users, ref) {
		if mafioso[u] {
			continue
		}
		for _, l := range g.mailbox(u) {
			if strings.Contains(l.Text, words) {
				t.Errorf("%s, no Mafioso, got the mafia post in %s mail %q", u, l.Kind, l.Subject)
			}
		}
	}
}
