package compose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
)

// TestD7_HeldCloseInTheGamesZone: a game set up in Berlin whose Day 1
// deadline falls on Friday evening there is held by its own weekend, and
// every mail that announces the close says so in the game's zone, naming
// the game's window — never Chicago's — in the reader's language. The
// setup's answer names the window in force.
func TestD7_HeldCloseInTheGamesZone(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tag                  string
		closes, held, window string
		note                 string
	}{
		{lang.Default, "Mon 7 Dec 2026 07:00 CET", "That is later than the deadline, Fri 4 Dec 2026 18:00 CET, because no day round closes between Friday 17:00 and Monday 07:00 Berlin time.",
			"No day round closes from Friday 17:00 to Monday 07:00 Berlin time.", "so the round is held to Monday 07:00 Berlin time"},
		{"de", "Mo. 7. Dez. 2026, 07:00 CET", "weil zwischen Freitag 17:00 Uhr und Montag 07:00 Uhr Ortszeit Berlin keine Tagesrunde endet",
			"Von Freitag 17:00 bis Montag 07:00 Uhr Ortszeit Berlin endet keine Tagesrunde.", "also läuft die Runde bis Montag 07:00 Uhr Ortszeit Berlin"},
	} {
		t.Run(c.tag, func(t *testing.T) {
			setup, err := engine.ParseSetup(engine.Classic(), "classic zone=Europe/Berlin")
			if err != nil {
				t.Fatal(err)
			}
			h := newHarness(t, inLanguage(setup, c.tag), "ber26", 3)
			h.c.SetLanguage(c.tag)
			h.signup(names11[:10])
			r := h.ok(engine.Referee, engine.Private, "SETUP zone=Europe/Berlin", engine.Command{Verb: engine.CmdSetup, Text: "zone=Europe/Berlin"})
			if got := flatText(t, to(t, r.msgs, "s1").Raw); !strings.Contains(got, c.window) {
				t.Errorf("the new setup does not name the window %q:\n%s", c.window, got)
			}
			h.signup(names11[10:])
			// Thursday 06:00 in Berlin: Day 1 closes Friday 18:00 there,
			// which is Friday 11:00 in Chicago.
			h.now = time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC)
			r = h.ok(engine.Referee, engine.Private, "START", engine.Command{Verb: engine.CmdStart})
			day := flatText(t, to(t, r.msgs, "s1").Raw)
			for _, want := range []string{c.closes, c.held, c.note} {
				if !strings.Contains(day, want) {
					t.Errorf("Day 1's mail lacks %q:\n%s", want, day)
				}
			}
			if strings.Contains(day, "Chicago") {
				t.Errorf("Day 1's mail names Chicago:\n%s", day)
			}
		})
	}
}

// flatText is a message's plain text with its lines joined.
func flatText(t *testing.T, raw []byte) string {
	t.Helper()
	return strings.Join(strings.Fields(readBack(t, raw).text), " ")
}
