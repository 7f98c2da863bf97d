package mailserver

import (
	"strings"
	"sync"
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

// A server with Relay is a limited account's provider in front of another
// mail system: what it accepts is in the other's mailboxes by the time the
// client hears 250, its limit refuses at its stage before the other hears
// of the message, and the other's refusal is the client's answer.
func TestRelayInFrontOfAnotherServer(t *testing.T) {
	var mu sync.Mutex
	var back []Delivery
	behind := start(t, Config{Domain: "example.test", Users: map[string]string{"alice": "pw"},
		OnMessage: func(d Delivery) { mu.Lock(); back = append(back, d); mu.Unlock() }})
	for name, stage := range map[string]LimitStage{"at MAIL": LimitAtMail, "at RCPT": LimitAtRcpt, "after DATA": LimitAtData} {
		lim := &SendLimit{Recipients: 1, Window: time.Hour, Stage: stage}
		front := start(t, Config{Users: map[string]string{"host": "pw"}, Relay: behind.SMTPAddr(), SendLimit: lim})
		mu.Lock()
		back = nil
		mu.Unlock()
		if err := send(t, front, "host", "pw", "host@example.org", []string{"alice+x@example.test"}, note); err != nil {
			t.Fatalf("%s: the first message was refused: %v", name, err)
		}
		mu.Lock()
		relayed := len(back) == 1 && back[0].Delivered && back[0].From == "host@example.org" &&
			len(back[0].To) == 1 && back[0].To[0] == "alice+x@example.test"
		mu.Unlock()
		if !relayed {
			t.Errorf("%s: the server behind did not have the message when the client heard 250: %+v", name, back)
		}
		// The window is full: the front refuses, and nothing reaches
		// the server behind.
		err := send(t, front, "host", "pw", "host@example.org", []string{"alice@example.test"}, note)
		if smtpCode(err) != 550 || !strings.Contains(err.Error(), "sending limit") {
			t.Errorf("%s: past the limit: %v, want the limit's 550", name, err)
		}
		mu.Lock()
		if len(back) != 1 {
			t.Errorf("%s: %d transactions reached the server behind, want 1", name, len(back))
		}
		mu.Unlock()
		if u := lim.Used("host"); u != 1 {
			t.Errorf("%s: %d recipients counted, want 1", name, u)
		}
	}

	// The server behind refuses an unknown user: so does the front, and
	// it counts nothing.
	lim := &SendLimit{Recipients: 5, Window: time.Hour, Stage: LimitAtRcpt}
	front := start(t, Config{Users: map[string]string{"host": "pw"}, Relay: behind.SMTPAddr(), SendLimit: lim})
	err := send(t, front, "host", "pw", "host@example.org", []string{"nobody@example.test"}, note)
	if smtpCode(err) != 550 {
		t.Errorf("to an unknown user behind the front: %v, want the 550 of the server behind", err)
	}
	if u := lim.Used("host"); u != 0 {
		t.Errorf("%d recipients counted for mail the server behind refused, want 0", u)
	}
	// A server behind that is gone is a temporary failure.
	addr := behind.SMTPAddr()
	behind.Close()
	front2 := start(t, Config{Users: map[string]string{"host": "pw"}, Relay: addr})
	if err := send(t, front2, "host", "pw", "host@example.org", []string{"alice@example.test"}, note); smtpCode(err) != 451 {
		t.Errorf("with the server behind gone: %v, want 451", err)
	}
}
