package compose_test

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// TestEndAfterANightKillNamesTheDead: when a night's kill ends the game,
// the mail that tells the end says at once who died that night (N9, W2),
// as every other dawn does; only the promise that roles stay secret is
// left out, since they follow in the same mail.
func TestEndAfterANightKillNamesTheDead(t *testing.T) {
	t.Parallel()
	setup := engine.Classic()
	setup.Players, setup.Mafia, setup.Inspectors, setup.InspectorKnowsMafioso = 4, 1, 0, false
	h := newHarness(t, setup, "dec26", 3)
	h.signup(names11[:4])
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	mafioso := h.withRole(engine.Mafia)[0]
	town := h.town()
	// Day 1: the town eliminates one of its own.
	for _, voter := range []string{mafioso, town[0], town[1]} {
		h.ok(h.player(voter), engine.Thread, "VOTE "+town[2], vote(town[2]))
	}
	h.ok(engine.Referee, engine.Private, "CLOSE", verb(engine.CmdClose))
	if h.s.Phase != engine.NightPhase {
		t.Fatalf("the close led to %s", h.s.Phase)
	}
	// Night 1: the Mafia kill, and are as many as the town.
	h.ok(h.player(mafioso), engine.Private, "KILL "+town[0], at(engine.CmdKill, town[0]))
	msgs := h.untilClose()
	if h.s.Phase != engine.EndedPhase {
		t.Fatalf("the dawn led to %s", h.s.Phase)
	}
	for _, lang := range []string{"text", "html"} {
		m := readBack(t, toKind(t, msgs, h.key(town[1]), compose.KindEnd).Raw)
		body := m.text
		if lang == "html" {
			body = m.html
		}
		if strings.Contains(body, "no one died") {
			t.Errorf("the end mail's %s says no one died in the night that killed %s:\n%s", lang, town[0], body)
		}
		if !strings.Contains(body, "Night 1 is over: "+town[0]+" was killed by the Mafia") {
			t.Errorf("the end mail's %s does not say that %s died in the night:\n%s", lang, town[0], body)
		}
		if strings.Contains(body, "Roles stay secret") {
			t.Errorf("the end mail's %s promises secrets it tells:\n%s", lang, body)
		}
	}
}
