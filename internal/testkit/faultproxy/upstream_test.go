package faultproxy

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
)

// upstream is an in-process go-smtp server that records what reaches it.
type upstream struct {
	addr string
	ln   *countingListener

	mu       sync.Mutex
	events   []string // "mail:FROM", "rcpt:TO", "reset", "data", "auth:USER", "logout", in order
	messages []message
	discard  bool // keep no events nor messages, for benchmarks
}

// message is one message upstream took.
type message struct {
	from string
	to   []string
	data []byte
}

const (
	authUser     = "alice"
	authPassword = "secret"
	// refusedRcpt is a recipient upstream refuses, as a server refuses an
	// unknown user.
	refusedRcpt = "nobody@upstream.test"
)

// startUpstream starts the server, offering every extension the proxy must
// hide (STARTTLS, with a throwaway certificate, CHUNKING, BINARYMIME,
// PIPELINING) and some it must pass on, AUTH among them.
func startUpstream(t testing.TB) *upstream {
	t.Helper()
	u := &upstream{ln: listen(t)}
	u.addr = u.ln.Addr().String()
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &upstreamSession{u: u}, nil
	}))
	srv.Domain = "upstream.test"
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.MaxMessageBytes = 64 << 20
	srv.MaxLineLength = 1 << 20 // the tests send a line longer than the proxy's buffer
	srv.AllowInsecureAuth = true
	srv.EnableSMTPUTF8 = true
	srv.EnableBINARYMIME = true
	srv.EnableDSN = true
	cert, _ := mailtest.SelfSigned(t)
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ErrorLog = slog.NewLogLogger(testlog.New(t, slog.LevelDebug).Handler(), slog.LevelWarn)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(u.ln); err != nil && !errors.Is(err, smtp.ErrServerClosed) {
			t.Errorf("upstream SMTP server: %v", err)
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return u
}

func (u *upstream) record(event string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.discard {
		u.events = append(u.events, event)
	}
}

func (u *upstream) Events() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.events...)
}

func (u *upstream) Messages() []message {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]message(nil), u.messages...)
}

type upstreamSession struct {
	u    *upstream
	from string
	to   []string
}

func (s *upstreamSession) Mail(from string, _ *smtp.MailOptions) error {
	s.u.record("mail:" + from)
	s.from, s.to = from, nil
	return nil
}

func (s *upstreamSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == refusedRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.u.record("rcpt:" + to)
	s.to = append(s.to, to)
	return nil
}

func (s *upstreamSession) Data(r io.Reader) error {
	var data bytes.Buffer
	data.Grow(1 << 20)
	if _, err := data.ReadFrom(r); err != nil {
		return err
	}
	s.u.mu.Lock()
	if !s.u.discard {
		s.u.events = append(s.u.events, "data")
		s.u.messages = append(s.u.messages, message{from: s.from, to: s.to, data: data.Bytes()})
	}
	s.u.mu.Unlock()
	return nil
}

func (s *upstreamSession) Reset() {
	s.u.record("reset")
	s.from, s.to = "", nil
}

func (s *upstreamSession) Logout() error {
	s.u.record("logout")
	return nil
}

func (s *upstreamSession) AuthMechanisms() []string { return []string{sasl.Plain, sasl.Login} }

func (s *upstreamSession) Auth(mech string) (sasl.Server, error) {
	check := func(username, password string) error {
		if username != authUser || password != authPassword {
			return smtp.ErrAuthFailed
		}
		s.u.record("auth:" + username)
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			return check(username, password)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// loginServer is the server side of AUTH LOGIN, which go-sasl lacks: two
// challenges, so two continuation lines through the proxy.
type loginServer struct {
	check    func(username, password string) error
	step     int
	username string
}

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	l.step++
	switch l.step {
	case 1:
		if response != nil {
			l.username = string(response)
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 2:
		l.username = string(response)
		return []byte("Password:"), false, nil
	case 3:
		return nil, true, l.check(l.username, string(response))
	}
	return nil, false, errors.New("unexpected response")
}

// mail builds a message with CRLF line endings.
func mail(id string, bodyLines ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: sender@players.test\r\nTo: bob@upstream.test\r\nMessage-ID: <%s@players.test>\r\nSubject: %s\r\n\r\n", id, id)
	for _, l := range bodyLines {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	return []byte(b.String())
}
