package compose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// TestPublicLinesAreWhatEveryoneWasSent: every copy of thread and
// mafia-list mail carries its public lines, the record a reply's quotes
// are checked against. They are lines of that very copy; never the
// host's headings (the first line, "▸" lines), nor the footer, nor
// anything that is the reader's own: their receipt ("Your message: …
// done"), their state ("You vote …", "You have not voted yet"), news told
// to them as "You …", times in their own zone. Posts' words are there.
// Other mail has none.
func TestPublicLinesAreWhatEveryoneWasSent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "pub", 11)
	h.signup(names11)
	h.ok(engine.Referee, engine.Private, "START", engine.Command{Verb: engine.CmdStart})
	h.ok(h.player("Judy"), engine.Private, "ZONE Europe/Berlin", engine.Command{Verb: engine.CmdZone, Text: "Europe/Berlin"})
	from := len(h.all)
	h.now = h.now.Add(time.Hour)
	h.ok(h.player("Alice"), engine.Thread, "post", post("I trust Bob.\nCarol is quiet."))
	h.ok(h.player("Bob"), engine.Thread, "VOTE Carol", vote("Carol"))
	mafia := h.withRole(engine.Mafia)
	h.untilClose()
	h.ok(h.player(mafia[0]), engine.MafiaCh, "post", post("Take Dave tonight."))

	seen := map[string]bool{}
	for _, m := range h.all[from:] {
		text := mimepart.DecodeFlowed(readBack(t, m.Raw).text, false)
		if m.Kind != compose.KindThread && m.Kind != compose.KindMafia && m.Kind != compose.KindDawn {
			if m.Public != "" {
				t.Errorf("%s %s to %s has public lines:\n%s", m.step, m.Kind, m.Recipient, m.Public)
			}
			continue
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			lines[strings.TrimRight(l, " ")] = true
		}
		first, _, _ := strings.Cut(text, "\n")
		for _, l := range strings.Split(m.Public, "\n") {
			if l == "" {
				continue
			}
			seen[m.Recipient+" "+l] = true
			switch {
			case !lines[l]:
				t.Errorf("%s: %s's public line %q is not in the copy", m.step, m.Recipient, l)
			case l == first, strings.HasPrefix(l, "▸"):
				t.Errorf("%s: %s's public lines hold the heading %q", m.step, m.Recipient, l)
			case strings.Contains(l, "You ") || strings.Contains(l, "Your ") || strings.Contains(l, "your ") ||
				strings.Contains(l, "for you") || strings.Contains(l, "@"):
				t.Errorf("%s: %s's public lines hold the reader's own %q", m.step, m.Recipient, l)
			}
		}
	}
	for _, want := range []string{h.key("Bob") + " > Carol is quiet.", h.key("Judy") + " > I trust Bob.",
		h.key(mafia[1]) + " > Take Dave tonight."} {
		if !seen[want] {
			t.Errorf("no public line %q", want)
		}
	}
}
