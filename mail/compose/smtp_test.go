package compose_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/reply"
)

// TestThroughARealServer sends a game's mail through a real SMTP server
// (the embedded one, on loopback), reads each reader's mailbox over IMAP,
// and checks that every copy arrives as composed; then answers one as a
// player would, with a plain Reply, and checks that the answer reaches the
// host at the right address and holds only the player's words.
func TestThroughARealServer(t *testing.T) {
	t.Parallel()
	srv, err := mailserver.Start(mailserver.Config{
		Domain:       "example.org",
		ExtraDomains: []string{"players.example.net", "watchers.example.net"},
		Users:        map[string]string{"host": "hostpw"},
		// Every player's mailbox is made when mail first comes for it.
		AutoCreateUsers: true, AutoCreatePassword: "pw",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	h := started(t)
	alice, bob := h.town()[0], h.town()[1]
	h.ok(h.player(bob), engine.Thread, "VOTE "+alice, vote(alice))
	h.ok(h.player(bob), engine.Thread, "", post("Alice is far too quiet."))
	h.ok(h.player(alice), engine.Private, "STATUS", verb(engine.CmdStatus))

	c, err := smtp.Dial(srv.SMTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	perReader := map[string][]compose.Outgoing{}
	for _, m := range h.all {
		if err := c.SendMail(m.From, m.To, bytes.NewReader(m.Raw)); err != nil {
			t.Fatalf("SMTP refused %s to %v: %v", m.MessageID, m.To, err)
		}
		perReader[m.To[0]] = append(perReader[m.To[0]], m.Outgoing)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}

	aliceAddr := addrFor(alice)
	got := fetchAll(t, srv, "alice", "pw")
	if len(got) != len(perReader[aliceAddr]) {
		t.Fatalf("Alice's mailbox holds %d messages, %d were sent", len(got), len(perReader[aliceAddr]))
	}
	var thread *compose.Outgoing
	for i, raw := range got {
		sent := perReader[aliceAddr][i]
		a, b := readBack(t, raw), readBack(t, sent.Raw)
		if id, _ := a.header.MessageID(); "<"+id+">" != sent.MessageID || a.text != b.text || a.html != b.html {
			t.Errorf("message %d arrived changed: %s, sent %s", i, id, sent.MessageID)
		}
		if sent.Kind == compose.KindThread {
			thread = &perReader[aliceAddr][i]
		}
	}
	if thread == nil {
		t.Fatal("Alice got no thread mail")
	}

	// Alice presses Reply on thread mail and writes one line above the
	// quote, as Gmail lays it out.
	p := readBack(t, thread.Raw)
	rt, err := p.header.AddressList("Reply-To")
	if err != nil || len(rt) != 1 {
		t.Fatalf("Reply-To %v (%v)", rt, err)
	}
	var quoted strings.Builder
	for _, l := range strings.Split(strings.TrimRight(p.text, "\n"), "\n") {
		quoted.WriteString("> " + l + "\r\n")
	}
	answer := fmt.Sprintf("From: %s <%s>\r\nTo: %s\r\nSubject: Re: [dec26] Day 1\r\n"+
		"Message-ID: <answer1@players.example.net>\r\nIn-Reply-To: %s\r\nReferences: %s %s\r\n\r\n"+
		"VOTE %s\r\n\r\nOn Tue, Dec 1, 2026 at 10:00 AM Mafia dec26 <host@example.org> wrote:\r\n%s",
		alice, aliceAddr, rt[0].Address, thread.MessageID, p.header.Get("References"), thread.MessageID, bob, quoted.String())
	c2, err := smtp.Dial(srv.SMTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.SendMail(aliceAddr, []string{rt[0].Address}, strings.NewReader(answer)); err != nil {
		t.Fatalf("the Reply-To address is not deliverable: %v", err)
	}
	inbox := fetchAll(t, srv, "host", "hostpw")
	if len(inbox) != 1 {
		t.Fatalf("the host got %d messages, want the one answer", len(inbox))
	}
	if !strings.Contains(string(inbox[0]), "Delivered-To: host+dec26-t-"+tokenFor(alice)+"@example.org") {
		t.Errorf("the answer did not arrive at Alice's thread address:\n%s", inbox[0])
	}
	body := readPlain(t, inbox[0])
	parts := reply.Split(body)
	res := command.Parse(parts.New, command.Thread)
	if len(res.Commands) != 1 || res.Commands[0].Verb != command.Vote || res.Commands[0].Target != bob ||
		len(res.Errors) != 0 || res.Discussion != "" {
		t.Errorf("the answer reads as %+v, want only VOTE %s (new text %q)", res, bob, parts.New)
	}
}

// fetchAll logs in over IMAP and returns every message of INBOX, in order.
func fetchAll(t *testing.T, srv *mailserver.Server, user, pass string) [][]byte {
	t.Helper()
	c, err := imapclient.DialInsecure(srv.IMAPAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatalf("LOGIN %s: %v", user, err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, m := range msgs {
		out = append(out, m.FindBodySection(section))
	}
	return out
}

// readPlain is the body of a single-part plain message.
func readPlain(t *testing.T, raw []byte) string {
	t.Helper()
	i := bytes.Index(raw, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatalf("no body in %q", raw)
	}
	return strings.ReplaceAll(string(raw[i+4:]), "\r\n", "\n")
}
