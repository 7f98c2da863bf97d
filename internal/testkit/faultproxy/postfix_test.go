//go:build integration

package faultproxy

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
)

// Against a real Postfix: what each fault leaves in the recipient's INBOX.
func TestFaultsAgainstPostfix(t *testing.T) {
	s := mailstack.Start(t, mailstack.Config{})
	if err := s.AddUser("bob", "pw"); err != nil {
		t.Fatal(err)
	}
	rcpt := s.Address("bob")

	faults := map[string]Fault{
		"none@players.test":   None,
		"after@players.test":  DropAfterDelivery,
		"before@players.test": DropBeforeDelivery,
		"data@players.test":   TempFailData,
	}
	p, err := NewSMTP(s.SMTPAddr(), func(from string) Fault { return faults[from] }, testlog.New(t, slog.LevelDebug))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	direct := dialSMTP(t, s.SMTPAddr())
	proxied := dialSMTP(t, p.Addr())
	for _, ext := range []string{"PIPELINING", "CHUNKING"} {
		if ok, _ := direct.Extension(ext); !ok {
			t.Errorf("Postfix does not offer %s: that part of the test proves nothing", ext)
		}
		if ok, _ := proxied.Extension(ext); ok {
			t.Errorf("EHLO through the proxy offers Postfix's %s", ext)
		}
	}

	send := func(from, id string) error {
		c := dialSMTP(t, p.Addr())
		msg := fmt.Sprintf("From: <%s>\r\nTo: <%s>\r\nMessage-ID: <%s@players.test>\r\nSubject: %s\r\n\r\nVOTE Bob\r\n", from, rcpt, id, id)
		return c.SendMail(from, []string{rcpt}, strings.NewReader(msg))
	}
	if err := send("none@players.test", "none"); err != nil {
		t.Errorf("None: %v", err)
	}
	wantConnectionLost(t, "DropAfterDelivery", send("after@players.test", "after"))
	wantConnectionLost(t, "DropBeforeDelivery", send("before@players.test", "before"))
	wantSMTPError(t, "TempFailData", send("data@players.test", "data"), 451, smtp.EnhancedCode{4, 3, 0})
	want := map[Fault]int64{DropAfterDelivery: 1, DropBeforeDelivery: 1, TempFailData: 1}
	wantInjected(t, p, want)

	if err := s.WaitDelivered(); err != nil {
		t.Fatal(err)
	}
	got := messageIDs(t, s.IMAPAddr(), "bob", "pw")
	for id, n := range map[string]int{"none": 1, "after": 1, "before": 0, "data": 0} {
		if got[id+"@players.test"] != n {
			t.Errorf("bob's INBOX holds %d copies of %q, want %d (all: %v)", got[id+"@players.test"], id, n, got)
		}
	}
	if len(got) != 2 {
		t.Errorf("bob's INBOX holds %v, want the two delivered messages only", got)
	}
}

// messageIDs counts the messages of user's INBOX by Message-ID.
func messageIDs(t *testing.T, addr, user, password string) map[string]int {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, password).Wait(); err != nil {
		t.Fatalf("IMAP LOGIN: %v", err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	ids := map[string]int{}
	if sel.NumMessages == 0 {
		return ids
	}
	var all imap.SeqSet
	all.AddRange(1, sel.NumMessages)
	msgs, err := c.Fetch(all, &imap.FetchOptions{Envelope: true}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	for _, m := range msgs {
		ids[m.Envelope.MessageID]++
	}
	return ids
}
