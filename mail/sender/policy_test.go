package sender

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// sink is an SMTP server for the tests of this file: it records what it
// receives, can require TLS (implicit or STARTTLS), offers the given AUTH
// mechanisms, and can refuse RCPT with 452 after a number of recipients per
// transaction.
type sink struct {
	addr   string
	client *tls.Config // trusts the server's certificate

	mu       sync.Mutex
	received []sunk
	wire     mailtest.Wire // everything clients sent
}

type sunk struct {
	from string
	to   []string
	data []byte
	tls  bool
	auth string
}

type sinkOptions struct {
	implicitTLS, startTLS bool
	mechs                 []string // AUTH mechanisms; user "host", password "pw"
	rcptLimit             int      // 452 after this many, 0 for none
}

func startSink(t *testing.T, o sinkOptions) *sink {
	t.Helper()
	cert, pool := mailtest.SelfSigned(t)
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	k := &sink{client: &tls.Config{RootCAs: pool}}
	srv := smtp.NewServer(&sinkBackend{k: k, o: o})
	srv.Domain = "sink.example"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = time.Minute, time.Minute
	srv.ErrorLog = nopLogger{}
	if o.startTLS {
		srv.TLSConfig = tc
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k.addr = ln.Addr().String()
	ln = k.wire.Record(ln)
	if o.implicitTLS {
		ln = tls.NewListener(ln, tc)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	return k
}

func (k *sink) messages() []sunk {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]sunk(nil), k.received...)
}

func (k *sink) wireText() string { return k.wire.String() }

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}

type sinkBackend struct {
	k *sink
	o sinkOptions
}

func (b *sinkBackend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &sinkSession{b: b, c: c}, nil
}

type sinkSession struct {
	b    *sinkBackend
	c    *smtp.Conn
	auth string
	cur  sunk
}

func (s *sinkSession) AuthMechanisms() []string { return s.b.o.mechs }

func (s *sinkSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != "host" || pass != "pw" {
			return smtp.ErrAuthFailed
		}
		s.auth = mech + ":" + user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if len(s.b.o.mechs) > 0 && s.auth == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := s.c.TLSConnectionState()
	s.cur = sunk{from: from, tls: isTLS, auth: s.auth}
	return nil
}

func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.b.o.rcptLimit > 0 && len(s.cur.to) >= s.b.o.rcptLimit {
		return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 5, 3}, Message: "Too many recipients"}
	}
	s.cur.to = append(s.cur.to, to)
	return nil
}

func (s *sinkSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.cur.data = data
	s.b.k.mu.Lock()
	s.b.k.received = append(s.b.k.received, s.cur)
	s.b.k.mu.Unlock()
	return nil
}

func (s *sinkSession) Reset()        { s.cur = sunk{} }
func (s *sinkSession) Logout() error { return nil }

// loginServer is the server side of SASL LOGIN, which go-sasl lacks.
type loginServer struct {
	step  int
	user  string
	check func(user, pass string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if resp == nil {
			return []byte("Username:"), false, nil
		}
		l.user = string(resp)
		l.step = 2
		return []byte("Password:"), false, nil
	case 1:
		l.user = string(resp)
		l.step = 2
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

// nopOutbox satisfies New; these tests drive connections directly.
type nopOutbox struct{}

func (nopOutbox) ClaimDue(context.Context, time.Time, int) ([]Message, error) {
	return nil, nil
}
func (nopOutbox) MarkAllSent(context.Context, []int64, time.Time) error     { return nil }
func (nopOutbox) MarkRetry(context.Context, int64, time.Time, string) error { return nil }
func (nopOutbox) Release(context.Context, int64, time.Time, string) error   { return nil }
func (nopOutbox) MarkFailed(context.Context, int64, string) error           { return nil }
func (nopOutbox) NextAttempt(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, nil
}
func (nopOutbox) NextAttemptAfter(context.Context, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

func newTestSender(t *testing.T, url string, mod func(*Config)) *Sender {
	t.Helper()
	cfg := Config{URL: url, Helo: "host.example.org", CommandTimeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg, nopOutbox{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testMsg(to ...string) Message {
	raw := "From: host@example.org\r\nTo: " + strings.Join(to, ", ") + "\r\nMessage-ID: <t1@host.example.org>\r\nSubject: t\r\n\r\nhello\r\n"
	return Message{ID: 1, MessageID: "<t1@host.example.org>", From: "host@example.org", To: to, Raw: []byte(raw)}
}

// sendOne connects and sends one message, as a drain does.
func sendOne(t *testing.T, s *Sender, m Message) result {
	t.Helper()
	c, err := s.connect(context.Background())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer c.quit()
	return c.send(context.Background(), m)
}

func TestImplicitTLS(t *testing.T) {
	k := startSink(t, sinkOptions{implicitTLS: true, mechs: []string{sasl.Plain}})
	s := newTestSender(t, "smtps://"+k.addr, func(c *Config) {
		c.TLSConfig, c.Username, c.Password = k.client, "host", "pw"
	})
	if r := sendOne(t, s, testMsg("a@example.net")); !r.sent || r.err != nil {
		t.Fatalf("send over TLS: %+v", r)
	}
	if got := k.messages(); len(got) != 1 || !got[0].tls || got[0].auth != "PLAIN:host" {
		t.Errorf("received %+v: want one message over TLS after AUTH PLAIN", got)
	}

	// A certificate nobody vouches for stops the sender before it says
	// anything.
	s2 := newTestSender(t, "smtps://"+k.addr, func(c *Config) { c.Username, c.Password = "host", "pw" })
	if _, err := s2.connect(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("connect with an untrusted certificate: %v, want a certificate error", err)
	}
}

// STARTTLS is what smtp:// to a remote host gets (forced here, as the test
// server is on loopback): it works where offered, and where it is not the
// sender stops before AUTH or MAIL.
func TestStartTLSRequired(t *testing.T) {
	k := startSink(t, sinkOptions{startTLS: true, mechs: []string{sasl.Plain}})
	s := newTestSender(t, "smtp://"+k.addr, func(c *Config) {
		c.TLSConfig, c.Username, c.Password = k.client, "host", "pw"
	})
	if s.ep.Security != mailurl.Plain {
		t.Fatalf("loopback smtp:// gave %v, want plain", s.ep.Security)
	}
	s.ep.Security = mailurl.StartTLS
	if r := sendOne(t, s, testMsg("a@example.net")); !r.sent {
		t.Fatalf("send after STARTTLS: %+v", r)
	}
	if got := k.messages(); len(got) != 1 || !got[0].tls {
		t.Errorf("received %+v: want one message over TLS", got)
	}

	plain := startSink(t, sinkOptions{mechs: []string{sasl.Plain}})
	s2 := newTestSender(t, "smtp://"+plain.addr, func(c *Config) { c.Username, c.Password = "host", "pw" })
	s2.ep.Security = mailurl.StartTLS
	_, err := s2.connect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("connect to a server without STARTTLS: %v, want a STARTTLS error", err)
	}
	if w := strings.ToUpper(plain.wireText()); strings.Contains(w, "AUTH") || strings.Contains(w, "MAIL FROM") {
		t.Errorf("the sender said %q in plain text", w)
	}
}

func TestAuthLogin(t *testing.T) {
	k := startSink(t, sinkOptions{mechs: []string{sasl.Login}})
	s := newTestSender(t, "smtp://"+k.addr, func(c *Config) { c.Username, c.Password = "host", "pw" })
	if r := sendOne(t, s, testMsg("a@example.net")); !r.sent {
		t.Fatalf("send: %+v", r)
	}
	if got := k.messages(); len(got) != 1 || got[0].auth != "LOGIN:host" {
		t.Errorf("received %+v: want one message after AUTH LOGIN", got)
	}

	bad := newTestSender(t, "smtp://"+k.addr, func(c *Config) { c.Username, c.Password = "host", "wrong" })
	if _, err := bad.connect(context.Background()); err == nil || strings.Contains(err.Error(), "wrong") {
		t.Errorf("connect with a wrong password: %v, want an error that does not show it", err)
	}
}

// A server that answers 452 to RCPT once it has enough recipients (without
// announcing a limit) gets the rest in further transactions.
func TestTooManyRecipientsSplitsTransactions(t *testing.T) {
	k := startSink(t, sinkOptions{rcptLimit: 2})
	s := newTestSender(t, "smtp://"+k.addr, nil)
	to := []string{"a@x.example", "b@x.example", "c@x.example", "d@x.example", "e@x.example"}
	if r := sendOne(t, s, testMsg(to...)); !r.sent || len(r.refused) != 0 {
		t.Fatalf("send: %+v", r)
	}
	var tx [][]string
	for _, m := range k.messages() {
		tx = append(tx, m.to)
	}
	want := [][]string{to[:2], to[2:4], to[4:]}
	if !slices.EqualFunc(tx, want, slices.Equal) {
		t.Errorf("transactions %v, want %v", tx, want)
	}
}

func TestFailureClassification(t *testing.T) {
	for _, tc := range []struct {
		err               error
		permanent, broken bool
	}{
		{&smtp.SMTPError{Code: 451}, false, false},
		{&smtp.SMTPError{Code: 452}, false, false},
		{&smtp.SMTPError{Code: 421}, false, true},
		{&smtp.SMTPError{Code: 550}, true, false},
		{&smtp.SMTPError{Code: 554}, true, false},
		{&smtp.SMTPError{Code: 530}, false, true},
		{&smtp.SMTPError{Code: 535}, false, true},
		{io.ErrUnexpectedEOF, false, true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, false, true},
	} {
		r := failure("X", tc.err)
		if r.permanent != tc.permanent || r.broken != tc.broken || !errors.Is(r.err, tc.err) {
			t.Errorf("failure(%v) = %+v, want permanent %v, broken %v", tc.err, r, tc.permanent, tc.broken)
		}
	}
	if got := describe(fmt.Errorf("x: %w", &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"})); got != "550 5.1.1 No such user" {
		t.Errorf("describe = %q", got)
	}
}

func TestRcptMax(t *testing.T) {
	for in, want := range map[string]int{"RCPTMAX=1000": 1000, "MAILMAX=5 RCPTMAX=3": 3, "rcptmax=7": 7, "MAILMAX=5": 0, "RCPTMAX=x": 0, "": 0} {
		if got := rcptMax(in); got != want {
			t.Errorf("rcptMax(%q) = %d, want %d", in, got, want)
		}
	}
}
