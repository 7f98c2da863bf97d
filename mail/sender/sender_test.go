package sender_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// With Connections 1, messages due at start go out over one connection,
// each exactly once, with its bytes (dot-stuffing undone by the server)
// and envelope.
func TestSendsDueMessagesOverOneConnection(t *testing.T) {
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	ob := &memOutbox{}
	var want []string
	for i := 1; i <= 10; i++ {
		m := outMsg(i, fmt.Sprintf("player%d@example.org", i), "referee@example.org")
		ob.add(m)
		want = append(want, m.MessageID)
	}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Connections = 1
	s := runSender(t, cfg, ob)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == 10 })

	delivered := got.delivered()
	for i, id := range want {
		tx := delivered[id]
		if len(tx) != 1 || !slices.Equal(tx[0], []string{fmt.Sprintf("player%d@example.org", i+1), "referee@example.org"}) {
			t.Errorf("%s delivered in %v, want one transaction to player%d and the referee", id, tx, i+1)
		}
	}
	for _, m := range got.all() {
		if m.From != "host@example.org" || !strings.Contains(string(m.Data), "\r\n.a line that starts with a dot\r\n") {
			t.Errorf("transaction %d: from %q, data %q", m.Seq, m.From, m.Data)
		}
	}
	for _, m := range ob.snapshot() {
		if m.Attempts != 1 || m.SentAt.IsZero() {
			t.Errorf("message %d: %d attempts, sent at %v; want 1 attempt and a time", m.ID, m.Attempts, m.SentAt)
		}
	}
	st := s.Stats()
	if st.Connects != 1 || st.Sent != 10 || st.Retried != 0 || st.Failed != 0 {
		t.Errorf("stats %+v: want 10 sent over 1 connection", st)
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
}

// The server answers 451 and 421, drops connections before and after
// taking the message, and goes away entirely for a while; every message is
// delivered once it recovers, none is failed, and a message is delivered
// twice only where the server dropped the connection after taking it.
func TestDeliversEverythingAfterAnOutage(t *testing.T) {
	var got deliveries
	var transactions atomic.Int64
	var outage atomic.Bool
	outage.Store(true)
	faults := []mailserver.Fault{
		mailserver.FaultTempFail, mailserver.FaultShutdown, mailserver.FaultDropBeforeDelivery,
		mailserver.FaultTempFail, mailserver.FaultDropAfterDelivery, mailserver.FaultShutdown,
	}
	fault := func(mailserver.Delivery) mailserver.Fault {
		n := transactions.Add(1)
		if !outage.Load() {
			return mailserver.FaultNone
		}
		return faults[int(n)%len(faults)]
	}
	opts := mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: fault}
	srv, err := mailserver.Start(func() mailserver.Config { o := opts; o.Logger = discard; return o }())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.SMTPAddr()

	ob := &memOutbox{}
	const n = 40
	for i := 1; i <= n; i++ {
		ob.add(outMsg(i, fmt.Sprintf("player%d@example.org", i)))
	}
	var fails failures
	cfg := testConfig(t, addr)
	cfg.OnFailed = fails.record
	s := runSender(t, cfg, ob)

	waitFor(t, "many refused transactions", func() bool { return transactions.Load() >= 60 })
	// Now the server is gone altogether.
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	failuresBefore := s.Stats().ConnectFailures
	waitFor(t, "failed connections", func() bool { return s.Stats().ConnectFailures >= failuresBefore+5 })
	// Back, still failing for a while.
	opts.SMTPAddr = addr
	srv2 := startServer(t, opts)
	before := transactions.Load()
	waitFor(t, "more refused transactions", func() bool { return transactions.Load() >= before+30 })
	outage.Store(false)
	waitFor(t, "all sent", func() bool { return ob.count(store.OutSent) == n })

	delivered := got.delivered()
	droppedAfter := map[string]int{}
	for _, m := range got.all() {
		if m.Fault == mailserver.FaultDropAfterDelivery {
			droppedAfter[headerID(m.Data)]++
		}
	}
	for i := 1; i <= n; i++ {
		id := outMsg(i).MessageID
		if c := len(delivered[id]); c < 1 || c > 1+droppedAfter[id] {
			t.Errorf("%s delivered %d times; the server dropped %d connections after taking it", id, c, droppedAfter[id])
		}
	}
	if f := fails.list(); len(f) != 0 {
		t.Errorf("OnFailed called for %v", f)
	}
	if c := ob.count(store.OutFailed); c != 0 {
		t.Errorf("%d messages failed", c)
	}
	st := s.Stats()
	if st.Retried == 0 || st.ConnectFailures == 0 || st.Sent != n {
		t.Errorf("stats %+v: want retries, failed connections and %d sent", st, n)
	}
	if bad := ob.misuse(); len(bad) > 0 {
		t.Errorf("outbox misuse: %v", bad)
	}
	_ = srv2
}

// A 5xx marks the message failed and calls OnFailed with the server's
// error; the other messages go out, over the same connection (a single
// one here, to see that the 5xx does not end it).
func TestPermanentFailureIsReported(t *testing.T) {
	rejected := outMsg(2, "bob@example.org").MessageID
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Fault: func(m mailserver.Delivery) mailserver.Fault {
		if headerID(m.Data) == rejected {
			return mailserver.FaultReject
		}
		return mailserver.FaultNone
	}})
	ob := &memOutbox{}
	ob.add(outMsg(1, "alice@example.org"), outMsg(2, "bob@example.org"), outMsg(3, "carol@example.org"))
	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.OnFailed = fails.record
	cfg.Connections = 1
	s := runSender(t, cfg, ob)
	waitFor(t, "two sent, one failed", func() bool { return ob.count(store.OutSent) == 2 && len(fails.list()) == 1 })

	f := fails.list()[0]
	var se *smtp.SMTPError
	if f.msg.MessageID != rejected || !errors.As(f.err, &se) || se.Code != 554 {
		t.Errorf("OnFailed(%s, %v): want %s with a 554", f.msg.MessageID, f.err, rejected)
	}
	m := ob.snapshot()[1]
	if m.Status != store.OutFailed || m.Attempts != 1 || !strings.Contains(m.LastError, "554") {
		t.Errorf("rejected message: %s after %d attempts, error %q; want failed after 1 with the 554", m.Status, m.Attempts, m.LastError)
	}
	if st := s.Stats(); st.Failed != 1 || st.Sent != 2 || st.Connects != 1 {
		t.Errorf("stats %+v", st)
	}
}

// Recipients refused for good (550 at RCPT) do not stop the message for
// the others: it is sent, and the refusals are reported. A message every
// recipient refuses is failed.
func TestRefusedRecipientsAreReported(t *testing.T) {
	var got deliveries
	srv := startServer(t, mailserver.Config{
		Users:     map[string]string{"alice": "", "bob": ""},
		OnMessage: got.add,
	})
	ob := &memOutbox{}
	ob.add(outMsg(1, "alice@example.org", "nobody@example.org", "bob@example.org", "x@elsewhere.example"))
	ob.add(outMsg(2, "nobody@example.org"))
	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.OnFailed = fails.record
	s := runSender(t, cfg, ob)
	waitFor(t, "both reported", func() bool { return len(fails.list()) == 2 })

	ms := ob.snapshot()
	if ms[0].Status != store.OutSent || ms[1].Status != store.OutFailed {
		t.Errorf("statuses %s, %s; want sent, failed", ms[0].Status, ms[1].Status)
	}
	if tx := got.delivered()[ms[0].MessageID]; len(tx) != 1 || !slices.Equal(tx[0], []string{"alice@example.org", "bob@example.org"}) {
		t.Errorf("message 1 delivered in %v, want one transaction to alice and bob", tx)
	}
	for i, f := range fails.list() {
		var re *sender.RecipientsError
		if !errors.As(f.err, &re) {
			t.Errorf("OnFailed %d: %T %v, want a *RecipientsError", i, f.err, f.err)
			continue
		}
		var refused []string
		for _, r := range re.Refused {
			refused = append(refused, r.Recipient)
		}
		want := []string{"nobody@example.org", "x@elsewhere.example"}
		if i == 1 {
			want = want[:1]
		}
		if !slices.Equal(refused, want) {
			t.Errorf("OnFailed %d refused %v, want %v", i, refused, want)
		}
		if !strings.Contains(re.Error(), "550 5.1.1") {
			t.Errorf("error %q does not show the server's answer", re.Error())
		}
	}
	if st := s.Stats(); st.Sent != 1 || st.Failed != 1 || st.Refused != 2 {
		t.Errorf("stats %+v: want 1 sent with 2 refused, 1 failed", st)
	}
}

// A server that takes few recipients per transaction gets the message in
// several.
func TestSplitsRecipientsAtTheServersLimit(t *testing.T) {
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, MaxRecipients: 3, OnMessage: got.add})
	var to []string
	for i := range 7 {
		to = append(to, fmt.Sprintf("p%d@example.org", i))
	}
	ob := &memOutbox{}
	ob.add(outMsg(1, to...))
	runSender(t, testConfig(t, srv.SMTPAddr()), ob)
	waitFor(t, "sent", func() bool { return ob.count(store.OutSent) == 1 })
	tx := got.delivered()[outMsg(1).MessageID]
	var all []string
	for _, rcpts := range tx {
		if len(rcpts) > 3 {
			t.Errorf("a transaction with %d recipients", len(rcpts))
		}
		all = append(all, rcpts...)
	}
	if len(tx) != 3 || !slices.Equal(all, to) {
		t.Errorf("transactions %v, want 3 covering %v", tx, to)
	}
}

// With a username, the sender authenticates; with a wrong password it
// keeps trying, with backoff, and claims nothing meanwhile.
func TestAuthenticatesAndWaitsOutWrongPassword(t *testing.T) {
	srv := startServer(t, mailserver.Config{RequireAuth: true, AutoCreateUsers: true, Users: map[string]string{"host": "other"}})
	ob := &memOutbox{}
	ob.add(outMsg(1, "alice@example.org"))
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.Password = "host", "right password"
	s := runSender(t, cfg, ob)
	waitFor(t, "failed logins", func() bool { return s.Stats().ConnectFailures >= 3 })
	if m := ob.snapshot()[0]; m.Attempts != 0 || m.Status != store.OutPending {
		t.Errorf("while AUTH fails: message %s after %d attempts, want pending and untouched", m.Status, m.Attempts)
	}
	if e := s.Stats().LastError; !strings.Contains(e, "AUTH PLAIN as \"host\"") || strings.Contains(e, "right password") {
		t.Errorf("last error %q: want the AUTH failure, without the password", e)
	}
	if err := srv.SetPassword("host", "right password"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "sent", func() bool { return ob.count(store.OutSent) == 1 })
	if auth := srv.Messages()[0].Auth; auth != "host" {
		t.Errorf("the message was sent as %q, want host", auth)
	}
}

// Without AUTH, a server that demands it is a configuration error: the
// message is retried, never failed.
func TestMissingAuthIsNotTheMessagesFault(t *testing.T) {
	srv := startServer(t, mailserver.Config{RequireAuth: true, AutoCreateUsers: true})
	ob := &memOutbox{}
	ob.add(outMsg(1, "alice@example.org"))
	s := runSender(t, testConfig(t, srv.SMTPAddr()), ob)
	waitFor(t, "retries", func() bool { return s.Stats().Retried >= 3 })
	if m := ob.snapshot()[0]; m.Status == store.OutFailed || !strings.Contains(m.LastError, "530") {
		t.Errorf("message %s, error %q: want it pending with the 530", m.Status, m.LastError)
	}
}

// Kick wakes a sender that has nothing due.
func TestKickWakesTheSender(t *testing.T) {
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true})
	ob := &memOutbox{}
	s := runSender(t, testConfig(t, srv.SMTPAddr()), ob)
	waitFor(t, "a first pass", func() bool { return s.Stats().Drains >= 1 })
	for i := 1; i <= 3; i++ {
		ob.add(outMsg(i, "alice@example.org"))
		s.Kick()
		waitFor(t, fmt.Sprintf("message %d sent", i), func() bool { return ob.count(store.OutSent) == i })
	}
	// Nothing due: no connection was opened for nothing. A kick that
	// comes while the last message's connection is still open may use it,
	// so a busy machine sees fewer.
	if st := s.Stats(); st.Connects < 1 || st.Connects > 3 {
		t.Errorf("stats %+v: want at most one connection per kick with mail", st)
	}
}

// The sender waits for a message's next attempt time and sends it then.
func TestSendsRetriedMessageWhenDue(t *testing.T) {
	var tempFails atomic.Int32
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Fault: func(mailserver.Delivery) mailserver.Fault {
		if tempFails.Add(1) <= 3 {
			return mailserver.FaultTempFail
		}
		return mailserver.FaultNone
	}})
	ob := &memOutbox{}
	ob.add(outMsg(1, "alice@example.org"))
	runSender(t, testConfig(t, srv.SMTPAddr()), ob)
	waitFor(t, "sent", func() bool { return ob.count(store.OutSent) == 1 })
	if m := ob.snapshot()[0]; m.Attempts != 4 {
		t.Errorf("sent after %d attempts, want 4", m.Attempts)
	}
}

// Run returns promptly once its context ends, whether it waits for work or
// for a server that is down.
func TestRunReturnsWhenContextEnds(t *testing.T) {
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true})
	for _, addr := range []string{srv.SMTPAddr(), "127.0.0.1:1"} {
		ob := &memOutbox{}
		ob.add(outMsg(1, "alice@example.org"))
		cfg := testConfig(t, addr)
		cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour
		s, err := sender.New(cfg, ob, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.Run(ctx) }()
		waitFor(t, "a pass or a failure", func() bool { st := s.Stats(); return st.Drains > 0 || st.ConnectFailures > 0 })
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: Run returned %v", addr, err)
			}
		case <-time.After(waitLong):
			t.Fatalf("%s: Run did not return", addr)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ob := &memOutbox{}
	good := sender.Config{URL: "smtps://smtp.example.org", Username: "u", Password: "p"}
	for name, mod := range map[string]func(*sender.Config){
		"bad scheme":           func(c *sender.Config) { c.URL = "imap://smtp.example.org" },
		"credentials":          func(c *sender.Config) { c.URL = "smtps://u:hunter2@smtp.example.org" },
		"path":                 func(c *sender.Config) { c.URL = "smtps://smtp.example.org/x" },
		"no host":              func(c *sender.Config) { c.URL = "smtp://" },
		"bad auth":             func(c *sender.Config) { c.Auth = "cram-md5" },
		"bad helo":             func(c *sender.Config) { c.Helo = "two words" },
		"no username":          func(c *sender.Config) { c.Username = "" },
		"unparsable":           func(c *sender.Config) { c.URL = "smtp://u:hunter2@[::1" },
		"negative connections": func(c *sender.Config) { c.Connections = -1 },
		"too many connections": func(c *sender.Config) { c.Connections = sender.MaxConnections + 1 },
	} {
		cfg := good
		mod(&cfg)
		_, err := sender.New(cfg, ob, nil)
		if err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %q shows the password", name, err)
		}
	}
	if _, err := sender.New(good, nil, nil); err == nil {
		t.Error("New accepted a nil outbox")
	}
	if _, err := sender.New(good, ob, nil); err != nil {
		t.Errorf("New(%+v): %v", good, err)
	}
}

// An address that is not plain never reaches the envelope: the injection
// of ORCPT through a quoted local part, read unquoted, cannot redirect a
// seat's mail to the victim's mailbox on a real server.
func TestEnvelopeTakesOnlyPlainAddresses(t *testing.T) {
	var got deliveries
	srv := startServer(t, mailserver.Config{
		Users:     map[string]string{"alice": "", "victim": ""},
		OnMessage: got.add,
	})
	ob := &memOutbox{}
	injected := "victim@example.org> ORCPT=rfc822;x@evil.example"
	ob.add(outMsg(1, "alice@example.org", injected))
	ob.add(outMsg(2, injected))
	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.OnFailed = fails.record
	runSender(t, cfg, ob)
	waitFor(t, "both reported", func() bool { return len(fails.list()) == 2 })
	if ms := ob.snapshot(); ms[0].Status != store.OutSent || ms[1].Status != store.OutFailed {
		t.Errorf("statuses %s, %s; want sent to alice alone, failed", ms[0].Status, ms[1].Status)
	}
	for _, m := range got.all() {
		for _, r := range m.To {
			if r != "alice@example.org" {
				t.Errorf("the server was given RCPT %q", r)
			}
		}
	}
	for _, f := range fails.list() {
		if !strings.Contains(f.err.Error(), "not a plain mail address") {
			t.Errorf("failure %v does not say the address is not plain", f.err)
		}
	}
}
