package engine

import (
	"strings"
	"testing"
	"time"
)

// D8: the referee sets how long a deadline waits for mail that reached the
// host's mailbox before it while the mailbox cannot be read; zero leaves
// the host's default.
func TestD8_MailGraceSetup(t *testing.T) {
	if g := Classic().MailGrace; g != 0 {
		t.Fatalf("classic sets a mail grace of %v; the host's default should apply", g)
	}
	s, err := ParseSetup(Classic(), "mail_grace=30m")
	if err != nil {
		t.Fatal(err)
	}
	if s.MailGrace != 30*time.Minute {
		t.Fatalf("mail_grace=30m gave %v", s.MailGrace)
	}
	for _, bad := range []string{"mail_grace=10s", "mail_grace=2d", "mail_grace=-5m", "mail_grace=soon"} {
		_, err := ParseSetup(Classic(), bad)
		if err == nil || !strings.Contains(err.Error(), "mail_grace") {
			t.Errorf("SETUP %s: %v, want a refusal naming mail_grace", bad, err)
		}
	}
}
