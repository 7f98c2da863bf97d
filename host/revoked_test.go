package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/store"
)

// TestRevokedAuthorisationTellsTheRefereeOnce: the referee of a game
// under way is told once per revocation, first in line, and again after
// the authorisation worked and was withdrawn anew.
func TestRevokedAuthorisationTellsTheRefereeOnce(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	r := Revocation{Error: `oauth2: "invalid_grant"`, Reading: true, Sending: true}
	before := len(hs.outbox())
	for range 3 {
		if err := hs.h.AuthorisationRevoked(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	notices := hs.mailTo("ref@example.org", before)
	if len(notices) != 1 || notices[0].Kind != "referee" || notices[0].Priority != store.PriorityGame ||
		!strings.Contains(string(notices[0].Raw), "invalid_grant") {
		t.Fatalf("referee notices: %d, want one about invalid_grant first in line", len(notices))
	}
	hs.h.AuthorisationRestored()
	before = len(hs.outbox())
	if err := hs.h.AuthorisationRevoked(ctx, r); err != nil {
		t.Fatal(err)
	}
	if n := len(hs.mailTo("ref@example.org", before)); n != 1 {
		t.Errorf("a second revocation: %d notices, want 1", n)
	}
}
