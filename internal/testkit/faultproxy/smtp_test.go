package faultproxy

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
)

const (
	faultySender = "fault@players.test"
	goodSender   = "ok@players.test"
	bob          = "bob@upstream.test"
	carol        = "carol@upstream.test"
)

// decider records what decide was asked and injects fault into the first
// transaction of faultySender only, so that a client's retry goes through,
// as after a real temporary fault.
type decider struct {
	fault Fault
	mu    sync.Mutex
	asked []string
}

func (d *decider) decide(from string) Fault {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, from)
	if from == faultySender && !slices.Contains(d.asked[:len(d.asked)-1], faultySender) {
		return d.fault
	}
	return None
}

func (d *decider) Asked() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.asked...)
}

func startSMTP(t *testing.T, upstreamAddr string, decide func(string) Fault) *SMTP {
	t.Helper()
	p, err := NewSMTP(upstreamAddr, decide, testlog.New(t, slog.LevelDebug))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

func dialSMTP(t *testing.T, addr string) *smtp.Client {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	c.CommandTimeout = waitTimeout
	c.SubmissionTimeout = waitTimeout
	t.Cleanup(func() { c.Close() })
	if err := c.Hello("client.test"); err != nil {
		t.Fatalf("EHLO: %v", err)
	}
	return c
}

// wantSMTPError fails t unless err is the SMTP reply code with the enhanced
// status code enh.
func wantSMTPError(t *testing.T, what string, err error, code int, enh smtp.EnhancedCode) {
	t.Helper()
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v, want SMTP reply %d %v", what, err, code, enh)
	}
	if se.Code != code || se.EnhancedCode != enh {
		t.Fatalf("%s: reply %d %v %q, want %d %v", what, se.Code, se.EnhancedCode, se.Message, code, enh)
	}
}

// wantConnectionLost fails t unless err is a lost connection rather than
// an SMTP reply.
func wantConnectionLost(t *testing.T, what string, err error) {
	t.Helper()
	var se *smtp.SMTPError
	switch {
	case err == nil:
		t.Fatalf("%s succeeded, want the connection lost", what)
	case errors.As(err, &se):
		t.Fatalf("%s: SMTP reply %d %q, want the connection lost", what, se.Code, se.Message)
	}
}

func wantMessages(t *testing.T, u *upstream, want ...message) {
	t.Helper()
	got := u.Messages()
	if len(got) != len(want) {
		t.Fatalf("upstream took %d messages, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].from != want[i].from || !slices.Equal(got[i].to, want[i].to) {
			t.Errorf("message %d: envelope %q -> %q, want %q -> %q", i, got[i].from, got[i].to, want[i].from, want[i].to)
		}
		if !bytes.Equal(got[i].data, want[i].data) {
			t.Errorf("message %d: %d bytes differ from the %d sent (first difference at %d)",
				i, len(got[i].data), len(want[i].data), firstDifference(got[i].data, want[i].data))
		}
	}
}

func count(events []string, e string) int {
	n := 0
	for _, x := range events {
		if x == e {
			n++
		}
	}
	return n
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func wantInjected(t *testing.T, p *SMTP, want map[Fault]int64) {
	t.Helper()
	if got := p.Injected(); !mapsEqual(got, want) {
		t.Errorf("Injected() = %v, want %v", got, want)
	}
}

func mapsEqual(a, b map[Fault]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestEHLOHidesWhatTheProxyCannotFollow(t *testing.T) {
	u := startUpstream(t)
	p := startSMTP(t, u.addr, nil)

	hidden := []string{"PIPELINING", "CHUNKING", "STARTTLS", "BINARYMIME"}
	kept := map[string]string{"8BITMIME": "", "ENHANCEDSTATUSCODES": "", "SMTPUTF8": "", "DSN": "", "SIZE": "67108864", "AUTH": "PLAIN LOGIN"}

	direct := dialSMTP(t, u.addr)
	for _, ext := range hidden {
		if ok, _ := direct.Extension(ext); !ok {
			t.Fatalf("upstream itself does not offer %s: the test proves nothing", ext)
		}
	}
	c := dialSMTP(t, p.Addr())
	for _, ext := range hidden {
		if ok, _ := c.Extension(ext); ok {
			t.Errorf("EHLO through the proxy offers %s", ext)
		}
	}
	for ext, param := range kept {
		if ok, got := c.Extension(ext); !ok || got != param {
			t.Errorf("EHLO through the proxy: %s offered %v with %q, want offered with %q", ext, ok, got, param)
		}
	}

	// The rewritten reply is well formed: textproto checks that every line
	// but the last continues the reply, and the client sees the
	// extensions through a second EHLO too.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tp := textproto.NewConn(conn)
	if _, _, err := tp.ReadResponse(220); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	for range 2 {
		if err := tp.PrintfLine("EHLO raw.test"); err != nil {
			t.Fatal(err)
		}
		_, msg, err := tp.ReadResponse(250)
		if err != nil {
			t.Fatalf("EHLO: %v", err)
		}
		lines := strings.Split(msg, "\n")
		if len(lines) != 1+len(kept) || lines[0] != "Hello raw.test" {
			t.Errorf("EHLO reply through the proxy:\n%s\nwant the greeting line and %d extensions", msg, len(kept))
		}
	}
	// A client that asks for STARTTLS anyway is refused, and the session
	// goes on in plain text.
	if err := tp.PrintfLine("STARTTLS"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tp.ReadResponse(502); err != nil {
		t.Errorf("STARTTLS: %v, want 502", err)
	}
	if err := tp.PrintfLine("NOOP"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tp.ReadResponse(250); err != nil {
		t.Errorf("NOOP after STARTTLS: %v", err)
	}
}

func TestNoneDeliversTheExactBytes(t *testing.T) {
	u := startUpstream(t)
	p := startSMTP(t, u.addr, nil)

	// The client dot-stuffs each line that starts with a dot; upstream
	// takes the stuffing off again. Anything the proxy did to the dots
	// would show as a difference.
	dots := mail("dots", ".", "..", "...", ".leading dot", "trailing dot.", " . ", ".\t", "", ".")
	long := mail("long", strings.Repeat("x", 100<<10), ".after a line longer than the proxy's buffer", strings.Repeat("y", 64<<10-2), ".")
	// 30 MiB in numbered blocks of numbered lines, so that a lost,
	// repeated or reordered piece shows.
	var block bytes.Buffer
	for i := 0; block.Len() < 1<<20; i++ {
		if i%1000 == 0 {
			block.WriteString(".a dot-stuffed line\r\n")
		}
		fmt.Fprintf(&block, "%05d %s\r\n", i, strings.Repeat("abcdefghij", 7))
	}
	var big bytes.Buffer
	big.Grow(31 << 20)
	big.Write(mail("big"))
	for i := range 30 {
		fmt.Fprintf(&big, "block %d\r\n", i)
		big.Write(block.Bytes())
	}
	bodies := [][]byte{mail("plain", "Hello Bob."), dots, long, big.Bytes()}

	c := dialSMTP(t, p.Addr())
	var want []message
	for i, body := range bodies {
		to := []string{bob, carol}[:1+i%2]
		if err := c.SendMail(goodSender, to, bytes.NewReader(body)); err != nil {
			t.Fatalf("message %d (%d bytes): %v", i, len(body), err)
		}
		want = append(want, message{from: goodSender, to: to, data: body})
	}
	if err := c.Quit(); err != nil {
		t.Errorf("QUIT: %v", err)
	}
	wantMessages(t, u, want...)
	wantInjected(t, p, map[Fault]int64{})
}

func TestFaults(t *testing.T) {
	body := mail("faulty", "VOTE Bob")
	retry := mail("retry", "VOTE Bob again")

	t.Run("TempFailMail", func(t *testing.T) {
		u := startUpstream(t)
		d := &decider{fault: TempFailMail}
		p := startSMTP(t, u.addr, d.decide)
		c := dialSMTP(t, p.Addr())

		wantSMTPError(t, "MAIL", c.SendMail(faultySender, []string{bob}, bytes.NewReader(body)), 451, smtp.EnhancedCode{4, 3, 0})
		// The session goes on: the client tries again on it.
		if err := c.SendMail(faultySender, []string{bob}, bytes.NewReader(retry)); err != nil {
			t.Fatalf("retry on the same connection: %v", err)
		}
		wantMessages(t, u, message{faultySender, []string{bob}, retry})
		if got := u.Events(); count(got, "mail:"+faultySender) != 1 {
			t.Errorf("upstream saw the refused MAIL FROM: %q", got)
		}
		if got, want := d.Asked(), []string{faultySender, faultySender}; !slices.Equal(got, want) {
			t.Errorf("decide was asked about %q, want %q", got, want)
		}
		wantInjected(t, p, map[Fault]int64{TempFailMail: 1})
	})

	t.Run("TempFailRcpt", func(t *testing.T) {
		u := startUpstream(t)
		p := startSMTP(t, u.addr, (&decider{fault: TempFailRcpt}).decide)
		c := dialSMTP(t, p.Addr())

		if err := c.Mail(faultySender, nil); err != nil {
			t.Fatalf("MAIL: %v", err)
		}
		wantSMTPError(t, "first RCPT", c.Rcpt(bob, nil), 451, smtp.EnhancedCode{4, 3, 0})
		// The transaction goes on: the second recipient is taken.
		if err := c.Rcpt(carol, nil); err != nil {
			t.Fatalf("second RCPT: %v", err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatalf("DATA: %v", err)
		}
		if _, err := w.Write(body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("end of DATA: %v", err)
		}
		// And so does the session.
		if err := c.SendMail(faultySender, []string{bob}, bytes.NewReader(retry)); err != nil {
			t.Fatalf("next transaction: %v", err)
		}
		wantMessages(t, u, message{faultySender, []string{carol}, body}, message{faultySender, []string{bob}, retry})
		if got := u.Events(); count(got, "rcpt:"+bob) != 1 {
			t.Errorf("upstream saw the refused RCPT TO: %q", got)
		}
		wantInjected(t, p, map[Fault]int64{TempFailRcpt: 1})
	})

	t.Run("TempFailData", func(t *testing.T) {
		u := startUpstream(t)
		p := startSMTP(t, u.addr, (&decider{fault: TempFailData}).decide)
		c := dialSMTP(t, p.Addr())

		wantSMTPError(t, "end of DATA", c.SendMail(faultySender, []string{bob}, bytes.NewReader(body)), 451, smtp.EnhancedCode{4, 3, 0})
		if err := c.SendMail(faultySender, []string{bob}, bytes.NewReader(retry)); err != nil {
			t.Fatalf("retry on the same connection: %v", err)
		}
		wantMessages(t, u, message{faultySender, []string{bob}, retry})
		// Upstream had the envelope, got RSET instead of DATA, then the
		// retry.
		want := []string{"mail:" + faultySender, "rcpt:" + bob, "reset", "mail:" + faultySender, "rcpt:" + bob, "data"}
		if got := u.Events(); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			t.Errorf("upstream saw %q, want it to begin with %q", got, want)
		}
		wantInjected(t, p, map[Fault]int64{TempFailData: 1})
	})

	t.Run("Shutdown", func(t *testing.T) {
		u := startUpstream(t)
		p := startSMTP(t, u.addr, (&decider{fault: Shutdown}).decide)
		c := dialSMTP(t, p.Addr())

		wantSMTPError(t, "MAIL", c.Mail(faultySender, nil), 421, smtp.EnhancedCode{4, 3, 2})
		wantConnectionLost(t, "NOOP after 421", c.Noop())
		eventually(t, "the proxy closed its upstream connection", func() bool { return u.ln.open.Load() == 0 })
		if got := u.Events(); slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "mail:") }) {
			t.Errorf("upstream saw %q, want no MAIL", got)
		}
		wantMessages(t, u)
		wantInjected(t, p, map[Fault]int64{Shutdown: 1})
	})

	t.Run("DropBeforeDelivery", func(t *testing.T) {
		u := startUpstream(t)
		p := startSMTP(t, u.addr, (&decider{fault: DropBeforeDelivery}).decide)
		c := dialSMTP(t, p.Addr())

		wantConnectionLost(t, "sending", c.SendMail(faultySender, []string{bob}, bytes.NewReader(body)))
		eventually(t, "the proxy closed its upstream connection", func() bool { return u.ln.open.Load() == 0 })
		wantMessages(t, u)
		if got, want := u.Events(), []string{"mail:" + faultySender, "rcpt:" + bob, "logout"}; !slices.Equal(got, want) {
			t.Errorf("upstream saw %q, want %q", got, want)
		}
		// The client's retry on a new connection is the one delivery.
		c2 := dialSMTP(t, p.Addr())
		if err := c2.SendMail(faultySender, []string{bob}, bytes.NewReader(body)); err != nil {
			t.Fatalf("retry: %v", err)
		}
		wantMessages(t, u, message{faultySender, []string{bob}, body})
		wantInjected(t, p, map[Fault]int64{DropBeforeDelivery: 1})
	})

	t.Run("DropAfterDelivery", func(t *testing.T) {
		u := startUpstream(t)
		p := startSMTP(t, u.addr, (&decider{fault: DropAfterDelivery}).decide)
		c := dialSMTP(t, p.Addr())

		wantConnectionLost(t, "sending", c.SendMail(faultySender, []string{bob}, bytes.NewReader(body)))
		eventually(t, "the proxy closed its upstream connection", func() bool { return u.ln.open.Load() == 0 })
		wantMessages(t, u, message{faultySender, []string{bob}, body})
		// The client cannot know; its retry makes a duplicate.
		c2 := dialSMTP(t, p.Addr())
		if err := c2.SendMail(faultySender, []string{bob}, bytes.NewReader(body)); err != nil {
			t.Fatalf("retry: %v", err)
		}
		wantMessages(t, u, message{faultySender, []string{bob}, body}, message{faultySender, []string{bob}, body})
		wantInjected(t, p, map[Fault]int64{DropAfterDelivery: 1})
	})
}

// A fault chosen for a transaction that cannot carry it is not injected,
// and not counted.
func TestFaultsThatCannotHappenAreNotCounted(t *testing.T) {
	u := startUpstream(t)
	p := startSMTP(t, u.addr, func(from string) Fault {
		switch from {
		case "rcpt@players.test":
			return TempFailRcpt
		case "after@players.test":
			return DropAfterDelivery
		}
		return None
	})
	c := dialSMTP(t, p.Addr())

	// TempFailRcpt, but the transaction ends before any RCPT.
	if err := c.Mail("rcpt@players.test", nil); err != nil {
		t.Fatalf("MAIL: %v", err)
	}
	if err := c.Reset(); err != nil {
		t.Fatalf("RSET: %v", err)
	}
	// DropAfterDelivery, but upstream delivers nothing: no recipient.
	if err := c.Mail("after@players.test", nil); err != nil {
		t.Fatalf("MAIL: %v", err)
	}
	wantSMTPError(t, "RCPT", c.Rcpt(refusedRcpt, nil), 550, smtp.EnhancedCode{5, 1, 1})
	_, err := c.Data()
	var se *smtp.SMTPError
	if !errors.As(err, &se) || se.Code/100 != 5 {
		t.Fatalf("DATA without recipients: %v, want upstream's refusal", err)
	}
	if err := c.Reset(); err != nil {
		t.Fatalf("RSET: %v", err)
	}
	// The null sender passes, and decide sees it as "".
	body := mail("bounce", "Delivery failed.")
	if err := c.SendMail("", []string{bob}, bytes.NewReader(body)); err != nil {
		t.Fatalf("null sender: %v", err)
	}
	wantMessages(t, u, message{"", []string{bob}, body})
	wantInjected(t, p, map[Fault]int64{})
}

func TestAuthPassesThrough(t *testing.T) {
	u := startUpstream(t)
	p := startSMTP(t, u.addr, nil)

	for _, mech := range []struct {
		name   string
		client func(user, pass string) sasl.Client
	}{
		{"PLAIN", func(user, pass string) sasl.Client { return sasl.NewPlainClient("", user, pass) }},
		{"LOGIN", sasl.NewLoginClient},
	} {
		c := dialSMTP(t, p.Addr())
		if err := c.Auth(mech.client(authUser, authPassword)); err != nil {
			t.Fatalf("AUTH %s: %v", mech.name, err)
		}
		body := mail("auth-"+mech.name, "Hello.")
		if err := c.SendMail(goodSender, []string{bob}, bytes.NewReader(body)); err != nil {
			t.Fatalf("send after AUTH %s: %v", mech.name, err)
		}
		c2 := dialSMTP(t, p.Addr())
		wantSMTPError(t, "AUTH "+mech.name+" with a wrong password", c2.Auth(mech.client(authUser, "wrong")), 535, smtp.EnhancedCode{5, 7, 8})
	}
	if got := u.Events(); slices.Index(got, "auth:"+authUser) < 0 || len(u.Messages()) != 2 {
		t.Errorf("upstream saw %q and %d messages, want two logins and two messages", got, len(u.Messages()))
	}

	// AUTH PLAIN without an initial response, and a cancelled AUTH LOGIN:
	// continuation lines both, which no go-smtp client sends.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tp := textproto.NewConn(conn)
	steps := []struct {
		send string
		code int
	}{
		{"", 220},
		{"EHLO raw.test", 250},
		{"AUTH LOGIN", 334},
		{"*", 501},
		{"AUTH PLAIN", 334},
		{base64.StdEncoding.EncodeToString([]byte("\x00" + authUser + "\x00" + authPassword)), 235},
		{"NOOP", 250},
	}
	for _, s := range steps {
		if s.send != "" {
			if err := tp.PrintfLine("%s", s.send); err != nil {
				t.Fatal(err)
			}
		}
		if _, msg, err := tp.ReadResponse(s.code); err != nil {
			t.Fatalf("after %q: %v (%s)", s.send, err, msg)
		}
	}
}

// Clients that go away at any point of a session: the proxy closes the
// upstream connection each time and keeps serving.
func TestClientDisconnectsAnywhere(t *testing.T) {
	u := startUpstream(t)
	p := startSMTP(t, u.addr, (&decider{fault: None}).decide)

	scripts := map[string]string{
		"before the greeting":        "",
		"after EHLO":                 "EHLO x.test\r\n",
		"in the middle of a command": "EHLO x.test\r\nMAIL FROM:<a@play",
		"in the middle of AUTH":      "EHLO x.test\r\nAUTH LOGIN\r\n",
		"in the middle of a message": "EHLO x.test\r\nMAIL FROM:<a@players.test>\r\nRCPT TO:<bob@upstream.test>\r\nDATA\r\nSubject: cut\r\n\r\nhalf a li",
		"after the final dot":        "EHLO x.test\r\nMAIL FROM:<a@players.test>\r\nRCPT TO:<bob@upstream.test>\r\nDATA\r\nSubject: whole\r\n\r\nall here\r\n.\r\n",
		"after QUIT":                 "EHLO x.test\r\nQUIT\r\n",
	}
	for name, script := range scripts {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, script); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		eventually(t, "the proxy closed upstream after a client left "+name, func() bool { return u.ln.open.Load() == 0 })
	}
	// The proxy still serves.
	c := dialSMTP(t, p.Addr())
	if err := c.SendMail(goodSender, []string{bob}, bytes.NewReader(mail("still", "here"))); err != nil {
		t.Fatalf("after the disconnections: %v", err)
	}
}

// Close ends sessions in every state, and every goroutine with them.
func TestSMTPCloseEndsEverything(t *testing.T) {
	u := startUpstream(t)
	p, err := NewSMTP(u.addr, nil, testlog.New(t, slog.LevelDebug))
	if err != nil {
		t.Fatal(err)
	}
	scripts := []string{
		"",
		"EHLO x.test\r\nAUTH LOGIN\r\n",
		"EHLO x.test\r\nMAIL FROM:<a@players.test>\r\nRCPT TO:<bob@upstream.test>\r\nDATA\r\nSubject: cut\r\n\r\nhalf a li",
	}
	var conns []net.Conn
	for _, script := range scripts {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := io.WriteString(conn, script); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, conn)
	}
	eventually(t, "every session reached upstream", func() bool { return u.ln.open.Load() == int64(len(scripts)) })
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	checkNoProxyGoroutines(t)
	for i, conn := range conns {
		// The end is an EOF, or a reset where the proxy closed the
		// connection with the client's bytes unread; not a timeout.
		conn.SetReadDeadline(time.Now().Add(waitTimeout))
		if _, err := io.Copy(io.Discard, conn); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("client %d: %v, want the connection closed", i, err)
		}
	}
	eventually(t, "upstream connections closed", func() bool { return u.ln.open.Load() == 0 })
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Error("the proxy still accepts connections after Close")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A client that stops talking is cut off after the idle timeout, and its
// upstream connection with it.
func TestIdleSessionsEnd(t *testing.T) {
	u := startUpstream(t)
	// Short for the test, long enough that a loaded machine still greets
	// and answers EHLO within it.
	p, err := newSMTP(u.addr, nil, testlog.New(t, slog.LevelDebug), limits{timeout: 2 * time.Second, maxBody: maxBody})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(waitTimeout))
	tp := textproto.NewConn(conn)
	if _, _, err := tp.ReadResponse(220); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	if err := tp.PrintfLine("EHLO idle.test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tp.ReadResponse(250); err != nil {
		t.Fatalf("EHLO: %v", err)
	}
	// Now silence, until the proxy hangs up.
	if rest, err := io.ReadAll(tp.R); err != nil || len(rest) > 0 {
		t.Fatalf("after going idle: read %q, %v; want the connection closed", rest, err)
	}
	eventually(t, "the proxy closed upstream", func() bool { return u.ln.open.Load() == 0 })
}

// What the proxy cannot or will not carry is refused in plain SMTP: a
// message over its limit (the session goes on), a line longer than its
// buffer and BDAT (the session cannot go on).
func TestRefusals(t *testing.T) {
	u := startUpstream(t)
	p, err := newSMTP(u.addr, nil, testlog.New(t, slog.LevelDebug), limits{timeout: waitTimeout, maxBody: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	c := dialSMTP(t, p.Addr())
	big := mail("big", strings.Repeat("x", 2<<10))
	wantSMTPError(t, "message over the limit", c.SendMail(goodSender, []string{bob}, bytes.NewReader(big)), 552, smtp.EnhancedCode{5, 3, 4})
	small := mail("small", "fits")
	if err := c.SendMail(goodSender, []string{bob}, bytes.NewReader(small)); err != nil {
		t.Fatalf("next message on the same connection: %v", err)
	}
	wantMessages(t, u, message{goodSender, []string{bob}, small})
	if got := u.Events(); count(got, "data") != 1 || count(got, "reset") < 1 {
		t.Errorf("upstream saw %q, want the refused message reset and only the small one's DATA", got)
	}

	for name, script := range map[string]string{
		"long line": "EHLO x.test\r\nNOOP " + strings.Repeat("x", lineBuffer) + "\r\n",
		"BDAT":      "EHLO x.test\r\nMAIL FROM:<a@players.test>\r\nRCPT TO:<bob@upstream.test>\r\nBDAT 5 LAST\r\nhello",
	} {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go io.WriteString(conn, script)
		conn.SetReadDeadline(time.Now().Add(waitTimeout))
		tp := textproto.NewConn(conn)
		for _, code := range []int{220, 250} {
			if _, _, err := tp.ReadResponse(code); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if name == "BDAT" {
			for _, code := range []int{250, 250} {
				if _, _, err := tp.ReadResponse(code); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
		want := map[string]int{"long line": 500, "BDAT": 502}[name]
		if _, msg, err := tp.ReadResponse(want); err != nil {
			t.Errorf("%s: %v %s, want %d", name, err, msg, want)
		}
		if rest, err := io.ReadAll(tp.R); errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s: still open after %q", name, rest)
		}
	}
	eventually(t, "upstream connections closed", func() bool { return u.ln.open.Load() == 1 })
}

// With upstream down, clients are told to come back later.
func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := startSMTP(t, addr, nil)
	c, err := smtp.Dial(p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wantSMTPError(t, "greeting", c.Hello("client.test"), 421, smtp.EnhancedCode{4, 4, 1})
}

// BenchmarkSMTPMessage measures what the proxy adds to sending a 1 MiB
// message over an open connection.
func BenchmarkSMTPMessage(b *testing.B) {
	var body bytes.Buffer
	for i := 0; body.Len() < 1<<20; i++ {
		fmt.Fprintf(&body, "%06d %s\r\n", i, strings.Repeat("abcdefghij", 7))
	}
	for _, via := range []string{"direct", "proxied"} {
		b.Run(via, func(b *testing.B) {
			u := startUpstream(b)
			u.mu.Lock()
			u.discard = true
			u.mu.Unlock()
			addr := u.addr
			if via == "proxied" {
				p, err := NewSMTP(u.addr, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				addr = p.Addr()
			}
			c, err := smtp.Dial(addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.SetBytes(int64(body.Len()))
			for b.Loop() {
				if err := c.SendMail(goodSender, []string{bob}, bytes.NewReader(body.Bytes())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
