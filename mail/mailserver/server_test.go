package mailserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// start runs a server for one test and closes it at the end.
func start(t *testing.T, opts Config) *Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// send submits one message; user "" sends without AUTH.
func send(t *testing.T, s *Server, user, pass, from string, to []string, data string) error {
	t.Helper()
	c, err := smtp.Dial(s.SMTPAddr())
	if err != nil {
		t.Fatalf("smtp.Dial: %v", err)
	}
	defer c.Close()
	if user != "" {
		if err := c.Auth(sasl.NewPlainClient("", user, pass)); err != nil {
			return err
		}
	}
	return c.SendMail(from, to, strings.NewReader(data))
}

func login(t *testing.T, s *Server, user, pass string, opts *imapclient.Options) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(s.IMAPAddr(), opts)
	if err != nil {
		t.Fatalf("imapclient.DialInsecure: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatalf("LOGIN %s: %v", user, err)
	}
	return c
}

// readInbox selects INBOX and returns every message with its UID, flags and
// full text.
func readInbox(t *testing.T, c *imapclient.Client) (*imap.SelectData, []*imapclient.FetchMessageBuffer) {
	t.Helper()
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatalf("SELECT INBOX: %v", err)
	}
	if sel.NumMessages == 0 {
		return sel, nil
	}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{
		UID:         true,
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}},
	}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	return sel, msgs
}

func body(m *imapclient.FetchMessageBuffer) string {
	return string(m.FindBodySection(&imap.FetchItemBodySection{Peek: true}))
}

func smtpCode(err error) int {
	var se *smtp.SMTPError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

const note = "From: alice@example.org\r\nTo: host+game-t-abc@example.org\r\nSubject: hi\r\nMessage-ID: <1@example.org>\r\n\r\nVOTE Bob\r\n"

func TestPlusAddressingDeliversToUserWithTraceHeaders(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw", "alice": "alicepw"}})
	if err := send(t, s, "alice", "alicepw", "alice@example.org", []string{"host+game-t-abc@example.org"}, note); err != nil {
		t.Fatalf("SendMail: %v", err)
	}

	c := login(t, s, "host", "hostpw", nil)
	_, msgs := readInbox(t, c)
	if len(msgs) != 1 {
		t.Fatalf("host has %d messages, want 1", len(msgs))
	}
	got := body(msgs[0])
	wantHead := "Return-Path: <alice@example.org>\r\nDelivered-To: host+game-t-abc@example.org\r\nReceived: "
	if !strings.HasPrefix(got, wantHead) {
		t.Errorf("delivered message starts with %q, want prefix %q", got[:min(len(got), 120)], wantHead)
	}
	if !strings.HasSuffix(got, note) {
		t.Errorf("delivered message does not end with the original bytes:\n%s", got)
	}
	for _, f := range msgs[0].Flags {
		if f == imap.FlagSeen {
			t.Errorf("BODY.PEEK[] set \\Seen")
		}
	}

	rec := s.Messages()
	if len(rec) != 1 {
		t.Fatalf("recorder has %d transactions, want 1", len(rec))
	}
	m := rec[0]
	if m.Seq != 1 || m.Auth != "alice" || m.From != "alice@example.org" || !m.Delivered || m.Fault != FaultNone ||
		len(m.To) != 1 || m.To[0] != "host+game-t-abc@example.org" || string(m.Data) != note {
		t.Errorf("recorded %+v", m)
	}
}

func TestOneCopyPerRecipientAndCaseInsensitiveUsers(t *testing.T) {
	s := start(t, Config{Domain: "example.org", ExtraDomains: []string{"example.net"},
		Users: map[string]string{"host": "hostpw", "Bob": "bobpw"}})
	to := []string{"host+g1-t-aaa@example.org", "HOST+g1-p-bbb@Example.NET", "bob@example.org"}
	if err := send(t, s, "", "", "alice@elsewhere.test", to, note); err != nil {
		t.Fatalf("SendMail: %v", err)
	}
	// Login by full address works too.
	c := login(t, s, "host@example.org", "hostpw", nil)
	_, msgs := readInbox(t, c)
	if len(msgs) != 2 {
		t.Fatalf("host has %d messages, want one per recipient address (2)", len(msgs))
	}
	var delivered []string
	for _, m := range msgs {
		line := strings.SplitN(body(m), "\r\n", 3)[1]
		delivered = append(delivered, line)
	}
	want := []string{"Delivered-To: host+g1-t-aaa@example.org", "Delivered-To: HOST+g1-p-bbb@Example.NET"}
	if fmt.Sprint(delivered) != fmt.Sprint(want) {
		t.Errorf("Delivered-To lines %q, want %q", delivered, want)
	}
	cb := login(t, s, "bob", "bobpw", nil)
	if _, msgs := readInbox(t, cb); len(msgs) != 1 {
		t.Errorf("bob has %d messages, want 1", len(msgs))
	}
}

func TestRefusesUnknownUsersForeignDomainsAndBadLogins(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
	if err := send(t, s, "", "", "a@b.test", []string{"nobody@example.org"}, note); smtpCode(err) != 550 {
		t.Errorf("unknown user: err %v, want 550", err)
	}
	if err := send(t, s, "", "", "a@b.test", []string{"host@elsewhere.test"}, note); smtpCode(err) != 550 {
		t.Errorf("foreign domain: err %v, want 550 (no relaying)", err)
	}
	if err := send(t, s, "host", "wrong", "host@example.org", []string{"host@example.org"}, note); smtpCode(err) != 535 {
		t.Errorf("bad SMTP password: err %v, want 535", err)
	}
	c, err := imapclient.DialInsecure(s.IMAPAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("host", "wrong").Wait(); err == nil {
		t.Errorf("IMAP LOGIN with a wrong password succeeded")
	}
	if len(s.Messages()) != 0 {
		t.Errorf("refused envelopes reached DATA: %+v", s.Messages())
	}
}

func TestRequireAuth(t *testing.T) {
	s := start(t, Config{RequireAuth: true, Users: map[string]string{"host": "hostpw"}})
	if err := send(t, s, "", "", "host@example.org", []string{"host@example.org"}, note); smtpCode(err) != 530 {
		t.Errorf("MAIL without AUTH: err %v, want 530", err)
	}
	if err := send(t, s, "host@example.org", "hostpw", "host@example.org", []string{"host@example.org"}, note); err != nil {
		t.Errorf("after AUTH PLAIN: %v", err)
	}
}

func TestAutoCreateUsers(t *testing.T) {
	s := start(t, Config{AutoCreateUsers: true, AutoCreatePassword: "botpw"})
	if err := send(t, s, "", "", "host@example.org", []string{"bot7+x@example.org"}, note); err != nil {
		t.Fatalf("SendMail to an unknown user: %v", err)
	}
	if !s.HasUser("bot7") {
		t.Fatalf("bot7 was not created")
	}
	c := login(t, s, "bot7", "botpw", nil)
	if _, msgs := readInbox(t, c); len(msgs) != 1 {
		t.Errorf("bot7 has %d messages, want 1", len(msgs))
	}
	// A first login creates the mailbox as well.
	c2 := login(t, s, "bot8", "botpw", nil)
	if _, msgs := readInbox(t, c2); len(msgs) != 0 {
		t.Errorf("new bot8 has %d messages", len(msgs))
	}
}

func TestMaxMessageBytes(t *testing.T) {
	s := start(t, Config{MaxMessageBytes: 1024, Users: map[string]string{"host": "hostpw"}})
	big := note + strings.Repeat(strings.Repeat("x", 70)+"\r\n", 30)
	if err := send(t, s, "", "", "a@b.test", []string{"host@example.org"}, big); smtpCode(err) != 552 {
		t.Errorf("oversized message: err %v, want 552", err)
	}
}

func TestFaults(t *testing.T) {
	cases := []struct {
		fault         Fault
		code          int // 0: the connection breaks instead
		wantDelivered bool
	}{
		{FaultTempFail, 451, false},
		{FaultShutdown, 421, false},
		{FaultReject, 554, false},
		{FaultDropBeforeDelivery, 0, false},
		{FaultDropAfterDelivery, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.fault.String(), func(t *testing.T) {
			s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
			var (
				mu   sync.Mutex
				seen []Delivery
			)
			s.SetFault(func(m Delivery) Fault {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, m)
				return tc.fault
			})
			c, err := smtp.Dial(s.SMTPAddr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			err = c.SendMail("a@b.test", []string{"host+t@example.org"}, strings.NewReader(note))
			if err == nil {
				t.Fatalf("SendMail succeeded despite %v", tc.fault)
			}
			if code := smtpCode(err); code != tc.code {
				t.Errorf("reply code %d (%v), want %d", code, err, tc.code)
			}
			if tc.code == 0 || tc.code == 421 {
				// The server must have closed the connection.
				if err := c.Noop(); err == nil {
					t.Errorf("connection still usable after %v", tc.fault)
				}
			} else if err := c.Noop(); err != nil {
				t.Errorf("connection broken after %v: %v", tc.fault, err)
			}

			// The server records a transaction before it answers or drops the
			// connection, so the recorder is complete by now.
			rec := s.Messages()
			mu.Lock()
			if len(seen) != 1 || string(seen[0].Data) != note || seen[0].From != "a@b.test" {
				t.Errorf("fault function saw %+v", seen)
			}
			mu.Unlock()
			if len(rec) != 1 || rec[0].Fault != tc.fault || rec[0].Delivered != tc.wantDelivered {
				t.Fatalf("recorded %+v", rec)
			}
			ic := login(t, s, "host", "hostpw", nil)
			_, msgs := readInbox(t, ic)
			if got := len(msgs) == 1; got != tc.wantDelivered {
				t.Errorf("%d messages in INBOX, delivered=%v", len(msgs), tc.wantDelivered)
			}

			// Faults are per transaction: the next one succeeds.
			s.SetFault(nil)
			if err := send(t, s, "", "", "a@b.test", []string{"host@example.org"}, note); err != nil {
				t.Errorf("after clearing the fault: %v", err)
			}
		})
	}
}

func TestIdleSeesNewMail(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
	exists := make(chan uint32, 16)
	c := login(t, s, "host", "hostpw", &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					exists <- *d.NumMessages
				}
			},
		},
	})
	if !c.Caps().Has(imap.CapIdle) && !c.Caps().Has(imap.CapIMAP4rev2) {
		t.Fatalf("server does not advertise IDLE: %v", c.Caps())
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	idle, err := c.Idle()
	if err != nil {
		t.Fatalf("IDLE: %v", err)
	}
	if err := send(t, s, "", "", "a@b.test", []string{"host@example.org"}, note); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-exists:
		if n != 1 {
			t.Errorf("EXISTS %d, want 1", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no EXISTS while idling")
	}
	if err := idle.Close(); err != nil {
		t.Fatal(err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestResetMailboxChangesUIDValidityAndRedelivers(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
	for i := range 3 {
		msg := strings.Replace(note, "<1@", fmt.Sprintf("<%d@", i), 1)
		if err := send(t, s, "", "", "a@b.test", []string{"host@example.org"}, msg); err != nil {
			t.Fatal(err)
		}
	}
	c := login(t, s, "host", "hostpw", nil)
	sel, msgs := readInbox(t, c)
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3", len(msgs))
	}
	var all imap.UIDSet
	for _, m := range msgs {
		all.AddNum(m.UID)
	}
	if err := c.Store(all, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Flags: []imap.Flag{imap.FlagSeen}}, nil).Close(); err != nil {
		t.Fatal(err)
	}

	uv, err := s.ResetMailbox("host")
	if err != nil {
		t.Fatalf("ResetMailbox: %v", err)
	}
	if uv == sel.UIDValidity {
		t.Errorf("UIDVALIDITY unchanged (%d)", uv)
	}
	select {
	case <-c.Closed():
	case <-time.After(30 * time.Second):
		t.Fatalf("old IMAP connection was not dropped")
	}

	c2 := login(t, s, "host", "hostpw", nil)
	sel2, msgs2 := readInbox(t, c2)
	if sel2.UIDValidity != uv || len(msgs2) != 3 {
		t.Fatalf("after reset: UIDVALIDITY %d (want %d), %d messages (want 3)", sel2.UIDValidity, uv, len(msgs2))
	}
	for i, m := range msgs2 {
		if len(m.Flags) != 0 {
			t.Errorf("message %d kept flags %v", i, m.Flags)
		}
		if !bytes.Equal([]byte(body(m)), []byte(body(msgs[i]))) {
			t.Errorf("message %d changed by the reset", i)
		}
	}
}

func TestDeliverInjectsRawMail(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
	// Bare LF line ends, as some broken clients send: the IMAP side serves
	// them with CRLF, as real servers do.
	raw := []byte("Subject: bare LF\n\nno CRLF here\n")
	if err := s.Deliver("", "host+x@example.org", raw); err != nil {
		t.Fatal(err)
	}
	if err := s.Deliver("", "nobody@example.org", raw); err == nil {
		t.Errorf("Deliver to an unknown user succeeded")
	}
	c := login(t, s, "host", "hostpw", nil)
	_, msgs := readInbox(t, c)
	if len(msgs) != 1 {
		t.Fatalf("%d messages, want 1", len(msgs))
	}
	got := body(msgs[0])
	if !strings.HasPrefix(got, "Return-Path: <>\r\nDelivered-To: host+x@example.org\r\n") ||
		!strings.Contains(got, "Subject: bare LF\r\n\r\nno CRLF here\n") {
		t.Fatalf("got %q", got)
	}
}

func TestOnMessageHookAndReceiveOnlyUsers(t *testing.T) {
	hooked := make(chan Delivery, 4)
	s := start(t, Config{
		AutoCreateUsers: true, // no AutoCreatePassword: receive-only mailboxes
		OnMessage:       func(m Delivery) { hooked <- m },
	})
	if err := send(t, s, "", "", "a@b.test", []string{"carol+x@example.org"}, note); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-hooked:
		if m.Seq != 1 || !m.Delivered || m.To[0] != "carol+x@example.org" || string(m.Data) != note {
			t.Errorf("hook got %+v", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("OnMessage was not called")
	}

	c, err := imapclient.DialInsecure(s.IMAPAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("carol", "").Wait(); err == nil {
		t.Errorf("a receive-only mailbox logged in with an empty password")
	}
	if err := s.SetPassword("carol", "carolpw"); err != nil {
		t.Fatal(err)
	}
	cc := login(t, s, "carol", "carolpw", nil)
	if _, msgs := readInbox(t, cc); len(msgs) != 1 {
		t.Errorf("carol has %d messages, want 1", len(msgs))
	}
}

// TestSinksAreReportedNotKept: mail to a sink reaches OnMessage, with the
// transactions numbered on, but neither its INBOX nor Messages; a
// transaction that also goes to a user who is not a sink is kept whole.
func TestSinksAreReportedNotKept(t *testing.T) {
	var mu sync.Mutex
	var hooked []Delivery
	s := start(t, Config{
		Users:     map[string]string{"load": "loadpw", "host": "hostpw"},
		Sinks:     []string{"Load"},
		OnMessage: func(m Delivery) { mu.Lock(); hooked = append(hooked, m); mu.Unlock() },
	})
	if err := send(t, s, "", "", "a@b.test", []string{"load+p1@example.org"}, note); err != nil {
		t.Fatal(err)
	}
	if err := send(t, s, "", "", "a@b.test", []string{"load+p2@example.org", "host@example.org"}, note); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	var got []string
	for _, m := range hooked {
		got = append(got, fmt.Sprintf("%d %v %v", m.Seq, m.Delivered, m.To))
	}
	mu.Unlock()
	want := []string{"1 true [load+p1@example.org]", "2 true [load+p2@example.org host@example.org]"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("OnMessage saw %q, want %q", got, want)
	}
	if ms := s.Messages(); len(ms) != 1 || ms[0].Seq != 2 {
		t.Errorf("Messages kept %+v, want the second transaction alone", ms)
	}
	if _, msgs := readInbox(t, login(t, s, "load", "loadpw", nil)); len(msgs) != 0 {
		t.Errorf("the sink's INBOX holds %d messages", len(msgs))
	}
	if _, msgs := readInbox(t, login(t, s, "host", "hostpw", nil)); len(msgs) != 1 {
		t.Errorf("host has %d messages, want 1", len(msgs))
	}
	if _, err := Start(Config{Sinks: []string{"nobody"}}); err == nil {
		t.Error("a sink that is no user was accepted")
	}
}

// TestRestartChangesUIDValidity: a restarted server numbers its mail from
// UID 1 again, so it must report another UIDVALIDITY, or a client that
// keeps state across the restart (the host) would take new mail for old.
func TestRestartChangesUIDValidity(t *testing.T) {
	seen := map[uint32]bool{}
	for range 3 {
		srv, err := Start(Config{Users: map[string]string{"host": "pw"}})
		if err != nil {
			t.Fatal(err)
		}
		c, err := imapclient.DialInsecure(srv.IMAPAddr(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Login("host", "pw").Wait(); err != nil {
			t.Fatal(err)
		}
		sel, err := c.Select("INBOX", nil).Wait()
		if err != nil {
			t.Fatal(err)
		}
		if seen[sel.UIDValidity] {
			t.Fatalf("UIDVALIDITY %d again after a restart", sel.UIDValidity)
		}
		seen[sel.UIDValidity] = true
		c.Close()
		srv.Close()
	}
}

// TestCloseRightAfterStart: Close must not wait forever for a Serve
// goroutine that had not started when it was called.
func TestCloseRightAfterStart(t *testing.T) {
	for range 200 {
		srv, err := Start(Config{})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			srv.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("Close hung")
		}
	}
}

// The mailbox reports each message's arrival as its INTERNALDATE: the
// moment of delivery, or the one DeliverAt names.
func TestInternalDateIsTheArrival(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw"}})
	before := time.Now().Truncate(time.Second)
	if err := s.Deliver("", "host@example.org", []byte("Subject: now\r\n\r\nnow\r\n")); err != nil {
		t.Fatal(err)
	}
	earlier := time.Date(2026, 12, 1, 17, 59, 58, 0, time.UTC)
	if err := s.DeliverAt("", "host@example.org", []byte("Subject: then\r\n\r\nthen\r\n"), earlier); err != nil {
		t.Fatal(err)
	}
	c := login(t, s, "host", "hostpw", nil)
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Fetch(imap.SeqSetNum(1, 2), &imap.FetchOptions{InternalDate: true}).Collect()
	if err != nil || len(msgs) != 2 {
		t.Fatalf("fetch INTERNALDATE: %d messages, %v", len(msgs), err)
	}
	if got := msgs[0].InternalDate; got.Before(before) || got.After(time.Now()) {
		t.Errorf("INTERNALDATE of a message delivered now: %v, want between %v and now", got, before)
	}
	if got := msgs[1].InternalDate; !got.Equal(earlier) {
		t.Errorf("INTERNALDATE of a message delivered at %v: %v", earlier, got)
	}
}
