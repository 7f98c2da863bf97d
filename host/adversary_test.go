package host

import (
	"context"
	"fmt"
	"testing"

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
