//go:build integration

package watcher_test

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
)

// Against a real Dovecot, with mail delivered by a real Postfix: mail
// waiting at start, mail pushed during IDLE, a Dovecot restart, and MOVE
// into a folder the watcher creates. Skipped where the servers are not
// installed (failed instead under CI).
func TestAgainstDovecot(t *testing.T) {
	s := mailstack.Start(t, mailstack.Config{})
	if err := s.AddUser(hostUser, hostPass); err != nil {
		t.Fatal(err)
	}
	send := func(n int) {
		t.Helper()
		to := s.Address("host+g1-t-abcdefghijk")
		c, err := smtp.Dial(s.SMTPAddr())
		if err != nil {
			t.Fatalf("dial Postfix: %v", err)
		}
		defer c.Close()
		from := fmt.Sprintf("player%d@players.example.net", n)
		if err := c.SendMail(from, []string{to}, bytes.NewReader(mailText(n))); err != nil {
			t.Fatalf("send %d through Postfix: %v", n, err)
		}
		if err := c.Quit(); err != nil {
			t.Logf("QUIT: %v", err)
		}
	}
	send(1)
	send(2)

	rec := &recorder{}
	cfg := testConfig(t, s.IMAPAddr())
	cfg.MoveTo = "Processed"
	cfg.IdleRefresh = time.Hour // only IDLE push can bring mail 3 in time
	w := runWatcher(t, cfg, rec.handle)
	waitFor(t, "the mail sent before start handled", func() bool { return rec.count() == 2 })

	waitFor(t, "the watcher to be in IDLE", func() bool { return w.Stats().Idling })
	send(3)
	waitFor(t, "mail 3 handled", func() bool { return rec.count() == 3 })
	// The watcher flags a message only after its handler returns: a
	// restart before that would hand mail 3 over again, as it should
	// (the host knows it by its Message-ID), and the count below would
	// be off by one.
	waitFor(t, "mail 3 moved, \\Seen", func() bool { return allSeen(t, s.IMAPAddr(), "Processed", 3) })
	uidValidity := w.Stats().UIDValidity

	// Dovecot stores a message before it answers Postfix: a restart in
	// between makes Postfix deliver it again. That duplicate is the
	// host's to recognise (by Message-ID), not this test's to count.
	if err := s.WaitDelivered(); err != nil {
		t.Fatal(err)
	}
	if err := s.RestartDovecot(); err != nil {
		t.Fatal(err)
	}
	send(4)
	waitFor(t, "mail 4 handled after the restart", func() bool { return rec.count() == 4 })
	st := w.Stats()
	if st.Connects != 2 || st.UIDValidity != uidValidity {
		t.Errorf("stats %+v: want a second login and UIDVALIDITY %d kept", st, uidValidity)
	}

	waitFor(t, "all four moved, \\Seen", func() bool { return allSeen(t, s.IMAPAddr(), "Processed", 4) })
	if left := mailboxState(t, s.IMAPAddr(), "INBOX"); len(left) != 0 {
		t.Errorf("INBOX still holds %v", left)
	}
	// Postfix may deliver the first two in either order.
	got := rec.ids()
	slices.Sort(got[:2])
	if want := []string{msgID(1), msgID(2), msgID(3), msgID(4)}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
	for _, m := range rec.handled() {
		if !bytes.Contains(m.Raw, []byte("Delivered-To: host+g1-t-abcdefghijk@")) {
			t.Errorf("UID %d lacks the Delivered-To that Dovecot adds:\n%s", m.UID, m.Raw)
		}
	}
}
