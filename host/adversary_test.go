package host

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/address"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// Forged mail in a player's and in the referee's name, to every address
// that takes mail without a token, cannot use up their seats' allowances:
// their real commands afterwards are applied.
func TestForgedMailCannotSilenceASeat(t *testing.T) {
	hs := newLimitedHarness(t, 40) // ten at once per sender, then one every 90 s
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	for i := range 40 {
		for _, from := range []string{addr("Alice"), "ref@example.org"} {
			hs.send(from, "host@example.org", fmt.Sprintf("HELP\r\n\r\nforgery %d", i))
			hs.send(from, "host+g1@example.org", "JOIN Mallory")
		}
		// Mail from ever new addresses draws on the pool of unproven
		// mail, never on a seat.
		hs.send(fmt.Sprintf("eve%d@evil.test", i), "host@example.org", "HELP")
	}
	limited := 0
	for _, in := range mustInbound(t, hs, store.OutcomeRefused) {
		if in.Reason != inbound.ReasonRateLimited {
			t.Errorf("forgery %s refused as %s, want rate-limited", in.MessageID, in.Reason)
		}
		limited++
	}
	if limited < 100 {
		t.Fatalf("only %d of the 200 forgeries were refused: the limit did not bite", limited)
	}
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	if v := hs.game("g1").Player(1).Vote; v != 2 {
		t.Fatalf("Alice's real vote after 80 forgeries in her name: she votes for seat %d, want Bob (2)", v)
	}
	before := hs.game("g1").Deadline
	hs.send("ref@example.org", ref, "EXTEND 12h")
	if after := hs.game("g1").Deadline; !after.After(before) {
		t.Fatalf("the referee's EXTEND after 80 forgeries in his name was not applied: deadline %v, was %v", after, before)
	}
}

func mustInbound(t *testing.T, hs *harness, o store.Outcome) []store.Inbound {
	t.Helper()
	ms, err := hs.st.InboundByOutcome(context.Background(), o, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// A JOIN from a quoted local part that reads, unquoted, as envelope syntax
// is refused, and so is an ADD of one: no seat, no answer, nothing queued
// for anyone but plain addresses.
func TestSignUpTakesOnlyPlainAddresses(t *testing.T) {
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	before := len(hs.outbox())
	hs.send(`"victim@example.test> ORCPT=rfc822;x"@evil.test`, "host+g1@example.org", "JOIN Mallory")
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("%d seats after the JOIN from a quoted address", n)
	}
	refused := mustInbound(t, hs, store.OutcomeRefused)
	if len(refused) != 1 || refused[0].Reason != inbound.ReasonBadAddress {
		t.Fatalf("refused %+v, want the JOIN refused as bad-address", refused)
	}
	hs.send("ref@example.org", ref, "ADD Mallory \"victim@example.test>NOTIFY=NEVER\"@evil.test")
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("%d seats after the ADD of a quoted address", n)
	}
	answers := hs.outbox()[before:]
	if len(answers) != 1 || !strings.Contains(string(answers[0].Raw), "not a plain mail address") {
		t.Fatalf("%d answers, want one to the referee saying the address is not plain:\n%s", len(answers), answers[0].Raw)
	}
	for _, m := range hs.outbox() {
		for _, to := range m.To {
			if !address.Valid(to) {
				t.Errorf("%s queued for %q", m.Kind, to)
			}
		}
	}
}

// No one signs up under the referee's or the host's voice, or as a
// look-alike of a seated player: each JOIN by mail is refused, and the
// answer says why in words.
func TestJoinCannotImpersonate(t *testing.T) {
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	hs.send(addr("Alice"), "host+g1@example.org", "JOIN Alice")
	tries := []struct{ name, says string }{
		{"The referee", `holds the word "referee"`},
		{"Host", `holds the word "host"`},
		{"Mafiamail", `holds the word "mafiamail"`},
		{"Referee Bob", `holds the word "referee"`},
		{"Mafia g1", `holds the word`},
		{"The R\u0435feree", `looks like the word "referee"`},
		{"H\u03bfst", `looks like the word "host"`},
		{"Mafiamai1", `looks like the word "mafiamail"`},
		{"R\u0435feree B\u043eb", `looks like the word "referee"`},
		{"=?utf-8?q?R=D0=B5feree?=", `looks like the word "referee"`},
		{"\u0410lice", `looks the same as "Alice"`},
		{"Ali\u202ece", "invisible or formatting"},
	}
	for i, tt := range tries {
		from := fmt.Sprintf("mallory%d@players.test", i)
		before := len(hs.outbox())
		hs.send(from, "host+g1@example.org", "JOIN "+tt.name)
		answers := hs.mailTo(from, before)
		if len(answers) != 1 {
			t.Errorf("JOIN %s: %d answers, want 1", tt.name, len(answers))
			continue
		}
		if text := parseLetter(answers[0].Raw).text; !strings.Contains(text, tt.says) {
			t.Errorf("JOIN %s: the answer does not say %q:\n%s", tt.name, tt.says, text)
		}
	}
	if s := hs.game("g1"); len(s.Players) != 1 {
		t.Errorf("%d seats, want Alice's alone", len(s.Players))
	}
}

// The Message-IDs a Townsperson sees carry nothing of the game's event log:
// the mafia list's posts between two thread posts, which once made them
// jump by exactly that many, leave no number in them to count by.
func TestMessageIDsCountNoSecretEvents(t *testing.T) {
	hs := newHarness(t)
	hs.setUp()
	s := hs.game("g1")
	var mafioso, towns string
	for _, p := range s.Players {
		switch {
		case p.Role == engine.Mafia && mafioso == "":
			mafioso = p.Name
		case p.Role == engine.Townsperson && towns == "":
			towns = p.Name
		}
	}
	mafia := "host+g1-m-" + hs.token("g1", addr(mafioso)) + "@example.org"
	from := len(hs.outbox())
	hs.send(addr(towns), hs.thread(towns), "First post.")
	for i := range 3 {
		hs.send(addr(mafioso), mafia, fmt.Sprintf("secret plan %d", i))
	}
	hs.send(addr(towns), hs.thread(towns), "Second post.")
	evs, err := hs.st.Events(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	opaque := regexp.MustCompile(`^<g1\.[0-9a-f]{24}@example\.org>$`)
	seen := 0
	for _, m := range hs.mailTo(addr(towns), from) {
		seen++
		if !opaque.MatchString(m.MessageID) {
			t.Errorf("%s mail to a Townsperson has Message-ID %s, not the game and an opaque hash", m.Kind, m.MessageID)
		}
		for _, e := range evs {
			if strings.Contains(m.MessageID, fmt.Sprintf(".%d.", e.Seq)) || strings.Contains(m.MessageID, fmt.Sprintf(".%d-", e.Seq)) {
				t.Errorf("Message-ID %s names event %d of the log", m.MessageID, e.Seq)
			}
		}
		if strings.Contains(string(m.Raw), "secret plan") {
			t.Errorf("a Townsperson's %s mail carries the mafia list's post", m.Kind)
		}
	}
	if seen < 2 {
		t.Fatalf("the Townsperson got %d thread mails for two posts", seen)
	}
}
