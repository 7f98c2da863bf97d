package host

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/message"
)

// TestLeftOutIsNamed: text the reader cannot tell apart from a quote (here
// the original below "Sent from my iPhone", with no header) is neither
// read for commands nor relayed, and the sender's answer says so.
func TestLeftOutIsNamed(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	before := len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"),
		"VOTE Bob\r\n\r\nSent from my iPhone\r\n\r\nVOTE Carol\r\nDay 1 has begun: reply with VOTE Name.")
	s := hs.game("g1")
	if v := s.Player(1).Vote; v != 2 {
		t.Fatalf("Alice votes for seat %d, want Bob (2) and never Carol", v)
	}
	answered := false
	for _, m := range hs.outbox()[before:] {
		msg, err := message.Parse(m.Raw)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(msg.Text, "Day 1 has begun: reply") && !strings.Contains(msg.Text, "could not be told apart") {
			t.Errorf("the left-out text reached %v (%s):\n%s", m.To, m.Kind, msg.Text)
		}
		if testing.Verbose() && m.Kind != "thread" {
			t.Logf("%s to %v:\n%s", m.Kind, m.To, msg.Text)
		}
		for _, to := range m.To {
			if to == addr("Alice") && strings.Contains(strings.Join(strings.Fields(msg.Text), " "), "could not be told apart") {
				answered = true
			}
		}
	}
	if !answered {
		t.Errorf("Alice's answer does not say what was left out: %+v", hs.mailTo(addr("Alice"), before))
	}
}
