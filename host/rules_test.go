package host

import (
	"bytes"
	"io"
	"mime/quotedprintable"
	"strings"
	"testing"
)

// TestHelpRulesInEveryChannel: HELP RULES, at the host's address, a sign-up
// address, the thread, a private channel, the mafia list and the referee's
// channel, answers the sender alone with the rules as players read them
// (lang/en/rules.md).
func TestHelpRulesInEveryChannel(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	s := hs.game("g1")
	mafioso := ""
	for _, p := range s.Players {
		if p.Role == "Mafia" {
			mafioso = p.Name
		}
	}
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	cases := []struct{ from, to string }{
		{"newbie@players.test", "host@example.org"},
		{"late@players.test", "host+g1@example.org"},
		{addr("Alice"), hs.thread("Alice")},
		{addr("Bob"), "host+g1-p-" + hs.token("g1", addr("Bob")) + "@example.org"},
		{addr(mafioso), "host+g1-m-" + hs.token("g1", addr(mafioso)) + "@example.org"},
		{"ref@example.org", ref},
	}
	for _, c := range cases {
		before := len(hs.outbox())
		hs.send(c.from, c.to, "HELP RULES")
		all := hs.outbox()[before:]
		mine := hs.mailTo(c.from, before)
		if len(mine) != 1 || len(all) != 1 {
			t.Errorf("HELP RULES to %s: %d mails, %d of them to the sender", c.to, len(all), len(mine))
			continue
		}
		qp, _ := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(mine[0].Raw)))
		body := strings.Join(strings.Fields(string(qp)), " ")
		for _, want := range []string{"The rules, for players", "Mafia"} {
			if !strings.Contains(body, want) {
				t.Errorf("HELP RULES to %s: the answer lacks %q:\n%s", c.to, want, body)
			}
		}
	}
}

// TestZoneSurvivesRestart: ZONE in a private channel is kept in the game's
// log, so after a restart the player's copies still show their own time
// beside the game's, and no one else's do.
func TestZoneSurvivesRestart(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	priv := "host+g1-p-" + hs.token("g1", addr("Bob")) + "@example.org"
	hs.send(addr("Bob"), priv, "ZONE Europe/Berlin")
	hs.restart()
	if p := hs.game("g1").Player(2); p.Zone != "Europe/Berlin" {
		t.Fatalf("after a restart Bob's zone is %q", p.Zone)
	}
	before := len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Carol")
	text := func(name string) string {
		ms := hs.mailTo(addr(name), before)
		if len(ms) == 0 {
			t.Fatalf("%s got no mail", name)
		}
		qp, _ := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(ms[len(ms)-1].Raw)))
		return strings.Join(strings.Fields(string(qp)), " ")
	}
	if b := text("Bob"); !strings.Contains(b, "CET for you)") {
		t.Errorf("Bob's copy shows no time of his own:\n%s", b)
	}
	if c := text("Carol"); strings.Contains(c, "for you)") {
		t.Errorf("Carol's copy shows a zone she did not choose:\n%s", c)
	}
}
