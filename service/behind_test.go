package service_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/service"
)

// TestServeStartsANewHostBesideMailItsOwnerRead: a new host's mailbox may
// hold mail its owner read before the first serve (the provider's
// welcome, a message to try the account), all to the host's own address.
// That shows no host ran on it, and serve starts; once the mailbox holds
// read mail to a game's address (host+tag), which only a host hands out,
// a missing database is one that was lost, and serve refuses it.
func TestServeStartsANewHostBesideMailItsOwnerRead(t *testing.T) {
	tb := newTable(t, testseed.Seed(t))
	at := tb.Clock()
	deliverSeen := func(rcpt, to, subject string) {
		t.Helper()
		tb.Sent++
		raw := fmt.Sprintf("From: someone@players.test\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <w%d@players.test>\r\n"+
			"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello.\r\n",
			to, subject, tb.Sent, at.Format(time.RFC1123Z))
		if err := tb.srv.DeliverAt("someone@players.test", rcpt, []byte(raw), at); err != nil {
			t.Fatal(err)
		}
		c := mailtest.IMAP(t, tb.srv.IMAPAddr(), "host", "pw", "INBOX")
		defer c.Close()
		mailtest.AddFlags(t, c, imap.UIDSet{imap.UIDRange{Start: 1, Stop: 0}}, imap.FlagSeen)
	}
	deliverSeen("host@example.org", "host@example.org", "Welcome to your new mailbox")
	deliverSeen("host@example.org", "Host <HOST@example.org>", "Does this work?")
	if err := service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log); err != nil {
		t.Fatalf("a new host beside its owner's read mail: %v", err)
	}

	deliverSeen("host+g1.alice@example.org", "host+g1.alice@example.org", "Re: [g1] Day 1")
	err := service.CheckCurrent(t.Context(), &tb.Cfg, tb.Log)
	var behind *service.BehindMailbox
	if !errors.As(err, &behind) || !behind.Fresh || behind.Unread != 3 {
		t.Fatalf("no database beside read mail to a game's address: %v, want it refused with 3 messages", err)
	}
}

// TestBehindMailboxCountsOneAsOne: serve's refusal says what it found in
// the number it found it, one message or several, with or without a
// database.
func TestBehindMailboxCountsOneAsOne(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		err  service.BehindMailbox
		want string
	}{
		{service.BehindMailbox{Database: "games.db", Unread: 1, First: at},
			"serve: the database games.db is older than the mailbox: 1 message arrived after the last one it read, at 2026-12-02T09:30:00Z, " +
				"and was read by a host it is not (flagged \\Seen, or moved): serve reads unread mail only and would never apply it, so it does not start. " +
				"Replay it with restore, from this database as the backup"},
		{service.BehindMailbox{Database: "games.db", Unread: 3, First: at},
			"serve: the database games.db is older than the mailbox: 3 messages arrived after the last one it read, the first 2026-12-02T09:30:00Z, " +
				"and were read by a host it is not (flagged \\Seen, or moved): serve reads unread mail only and would never apply them, so it does not start. " +
				"Replay them with restore, from this database as the backup"},
		{service.BehindMailbox{Database: "games.db", Unread: 1, First: at, Fresh: true},
			"serve: there is no database games.db that has read the mailbox, but the mailbox holds 1 message a host has read (flagged \\Seen, or moved), " +
				"which arrived 2026-12-02T09:30:00Z: serve reads unread mail only and would start the games over without it, so it does not start. " +
				"Rebuild the database from the mailbox with restore"},
		{service.BehindMailbox{Database: "games.db", Unread: 2, First: at, Fresh: true},
			"serve: there is no database games.db that has read the mailbox, but the mailbox holds 2 messages a host has read (flagged \\Seen, or moved), " +
				"the first arrived 2026-12-02T09:30:00Z: serve reads unread mail only and would start the games over without them, so it does not start. " +
				"Rebuild the database from the mailbox with restore"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Unread %d, Fresh %v:\n got %s\nwant %s", tc.err.Unread, tc.err.Fresh, got, tc.want)
		}
	}
}
