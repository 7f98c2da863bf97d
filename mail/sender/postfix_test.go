//go:build integration

package sender_test

import (
	"bytes"
	"errors"
	"net/mail"
	"slices"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// Against a real Postfix (delivering into a real Dovecot): mail for known
// users arrives with its Message-ID, an unknown user (550) and a foreign
// domain (554, relaying denied) are refused at RCPT and reported, and a
// message nobody can receive is failed. Skipped where the servers are not
// installed (failed instead under CI).
func TestAgainstPostfix(t *testing.T) {
	s := mailstack.Start(t, mailstack.Config{})
	if err := s.AddUser("alice", "alice-pw"); err != nil {
		t.Fatal(err)
	}
	if err := s.AddUser("bob", "bob-pw"); err != nil {
		t.Fatal(err)
	}

	ob := &memOutbox{}
	ob.add(outMsg(1, s.Address("alice"), s.Address("nobody"), s.Address("bob+tag")))
	ob.add(outMsg(2, s.Address("bob")))
	ob.add(outMsg(3, "someone@elsewhere.example"))
	var fails failures
	cfg := testConfig(t, s.SMTPAddr())
	cfg.OnFailed = fails.record
	snd := runSender(t, cfg, ob)
	waitFor(t, "every message dealt with", func() bool {
		return ob.count(store.OutSent) == 2 && ob.count(store.OutFailed) == 1 && len(fails.list()) == 2
	})

	f := fails.list()
	var re *sender.RecipientsError
	if !errors.As(f[0].err, &re) || len(re.Refused) != 1 || re.Refused[0].Recipient != s.Address("nobody") {
		t.Errorf("OnFailed for message 1: %v, want the unknown user refused", f[0].err)
	}
	if !errors.As(f[1].err, &re) || f[1].msg.ID != 3 || len(re.Refused) != 1 {
		t.Errorf("OnFailed for message 3: %v, want the foreign recipient refused", f[1].err)
	}
	if st := snd.Stats(); st.Sent != 2 || st.Failed != 1 || st.Refused != 1 {
		t.Errorf("stats %+v", st)
	}

	inbox := func(user, pass string, want int) []string {
		t.Helper()
		var ids []string
		waitFor(t, user+"'s mail", func() bool {
			ids = readInbox(t, s.IMAPAddr(), user, pass)
			return len(ids) >= want
		})
		slices.Sort(ids)
		return ids
	}
	if got := inbox("alice", "alice-pw", 1); !slices.Equal(got, []string{outMsg(1).MessageID}) {
		t.Errorf("alice has %v", got)
	}
	if got := inbox("bob", "bob-pw", 2); !slices.Equal(got, []string{outMsg(1).MessageID, outMsg(2).MessageID}) {
		t.Errorf("bob has %v", got)
	}
}

// readInbox returns the Message-IDs in a user's INBOX.
func readInbox(t *testing.T, addr, user, pass string) []string {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatalf("dial IMAP: %v", err)
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatalf("LOGIN %s: %v", user, err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("EXAMINE: %v", err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	var ids []string
	for _, m := range msgs {
		parsed, err := mail.ReadMessage(bytes.NewReader(m.FindBodySection(section)))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		ids = append(ids, parsed.Header.Get("Message-Id"))
	}
	if err := c.Logout().Wait(); err != nil {
		t.Logf("LOGOUT: %v", err)
	}
	return ids
}
