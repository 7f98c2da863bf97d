package mailserver

import (
	"testing"
	"time"
)

// A delivered transaction's recipients pass from open to sent in one step:
// the session gives up what is still open only after its reply is written,
// and a client that sends its next message on another connection at once
// must not find the last one counted twice. With room for two recipients,
// one delivered and one more asked for, the second is admitted, at every
// stage the limit may apply at.
func TestSendLimitCountsADeliveryOnce(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	for name, stage := range map[string]LimitStage{"at MAIL": LimitAtMail, "at RCPT": LimitAtRcpt, "after DATA": LimitAtData} {
		l := &SendLimit{Recipients: 2, Window: time.Hour, Stage: stage, Clock: func() time.Time { return now }}
		// The session admits a recipient at MAIL or at RCPT, as the
		// limit's stage says; a limit after DATA still counts it as open.
		at := stage
		if stage == LimitAtData {
			at = LimitAtRcpt
		}
		// The first transaction: one recipient, open, then delivered.
		if err := l.admit("host", at, 1); err != nil {
			t.Fatalf("%s: first recipient refused: %v", name, err)
		}
		if err := l.takeAtData("host", 1); err != nil {
			t.Fatalf("%s: first message refused at DATA: %v", name, err)
		}
		l.count("host", 1)
		if used := l.Used("host"); used != 1 {
			t.Fatalf("%s: %d recipients sent, want 1", name, used)
		}
		// The next message, on another connection, before the first
		// session has given up anything.
		if err := l.admit("host", at, 1); err != nil {
			t.Errorf("%s: the second recipient of two allowed was refused: %v", name, err)
		}
		if err := l.takeAtData("host", 1); err != nil {
			t.Errorf("%s: the second message was refused at DATA: %v", name, err)
		}
		l.count("host", 1)
		// The window is full now.
		if err := l.admit("host", at, 1); stage != LimitAtData && err == nil {
			t.Errorf("%s: a third recipient was admitted into a window of two", name)
		}
		if err := l.takeAtData("host", 1); stage == LimitAtData && err == nil {
			t.Errorf("%s: a third message was taken at DATA into a window of two", name)
		}
		if r := l.Refused(); r != 1 {
			t.Errorf("%s: %d refusals, want 1", name, r)
		}
	}
}
