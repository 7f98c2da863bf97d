package faultproxy

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
)

// startIMAP runs go-imap's in-memory server with one user and an INBOX.
func startIMAP(t *testing.T) (addr string, user *imapmemserver.User) {
	t.Helper()
	mem := imapmemserver.New()
	user = imapmemserver.NewUser("host", "pw")
	if err := user.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(user)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
		Logger:       slog.NewLogLogger(testlog.New(t, slog.LevelDebug).Handler(), slog.LevelWarn),
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return ln.Addr().String(), user
}

func appendMessage(t *testing.T, user *imapmemserver.User, id string) {
	t.Helper()
	msg := []byte("From: alice@players.test\r\nMessage-ID: <" + id + "@players.test>\r\nSubject: " + id + "\r\n\r\nVOTE Bob\r\n")
	if _, err := user.Append("INBOX", bytes.NewReader(msg), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitCommand returns the command's error, or fails t if it takes longer
// than waitTimeout.
func waitCommand(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(waitTimeout):
		t.Fatalf("%s: no answer within %v", what, waitTimeout)
		return nil
	}
}

func TestTCPStallsAnIMAPSession(t *testing.T) {
	addr, user := startIMAP(t)
	p := startTCP(t, addr)

	exists := make(chan uint32, 16)
	c, err := imapclient.DialInsecure(p.Addr(), &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(data *imapclient.UnilateralDataMailbox) {
				if data.NumMessages != nil {
					exists <- *data.NumMessages
				}
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login("host", "pw").Wait(); err != nil {
		t.Fatalf("LOGIN: %v", err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatalf("SELECT: %v", err)
	}

	// A command during a stall gets no answer, and nothing is closed.
	p.Stall()
	noop := make(chan error, 1)
	go func() { noop <- c.Noop().Wait() }()
	select {
	case err := <-noop:
		t.Fatalf("NOOP answered through a stalled proxy: %v", err)
	case <-time.After(quiet):
	}
	if p.Conns() != 1 {
		t.Errorf("Conns() = %d during the stall, want 1", p.Conns())
	}
	p.Resume()
	if err := waitCommand(t, noop, "NOOP after Resume"); err != nil {
		t.Fatalf("NOOP after Resume: %v", err)
	}

	// New mail pushed during IDLE waits for the network too. The embedded
	// server answers IDLE a moment before it watches the mailbox, and an
	// update in between waits for the next one: messages are appended
	// until one is pushed, so that the server is known to be watching.
	idle, err := c.Idle()
	if err != nil {
		t.Fatalf("IDLE: %v", err)
	}
	appended := uint32(0)
	deadline := time.Now().Add(waitTimeout)
	for seen := uint32(0); seen < appended || appended == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages appended in IDLE were pushed", seen, appended)
		}
		if seen == 0 {
			appended++
			appendMessage(t, user, fmt.Sprintf("before-stall-%d", appended))
		}
		select {
		case n := <-exists:
			seen = max(seen, n)
		case <-time.After(quiet):
		}
	}
	p.Stall()
	appendMessage(t, user, "during-stall")
	select {
	case n := <-exists:
		t.Fatalf("EXISTS %d pushed through a stalled proxy", n)
	case <-time.After(quiet):
	}
	p.Resume()
	select {
	case n := <-exists:
		if n != appended+1 {
			t.Errorf("EXISTS %d after Resume, want %d", n, appended+1)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no EXISTS after Resume")
	}
	if err := idle.Close(); err != nil {
		t.Fatalf("leave IDLE: %v", err)
	}
	if err := idle.Wait(); err != nil {
		t.Fatalf("IDLE: %v", err)
	}

	// DropAll: the client sees its connection end.
	p.DropAll()
	select {
	case <-c.Closed():
	case <-time.After(waitTimeout):
		t.Fatal("the client did not notice DropAll")
	}
	if err := c.Noop().Wait(); err == nil {
		t.Error("NOOP succeeded after DropAll")
	}

	// A new session works, and Close ends it and every goroutine.
	c2, err := imapclient.DialInsecure(p.Addr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Login("host", "pw").Wait(); err != nil {
		t.Fatalf("LOGIN after DropAll: %v", err)
	}
	data, err := c2.Status("INBOX", &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil || data.NumMessages == nil || *data.NumMessages != appended+1 {
		t.Fatalf("STATUS after DropAll: %+v, %v; want %d messages", data, err, appended+1)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	checkNoProxyGoroutines(t)
	select {
	case <-c2.Closed():
	case <-time.After(waitTimeout):
		t.Fatal("the client did not notice Close")
	}
	if err := c2.Noop().Wait(); err == nil {
		t.Error("NOOP succeeded after Close")
	}
}
