package watcher

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// tlsServer is an in-process IMAP server with a self-signed certificate,
// either speaking TLS from the first byte or offering STARTTLS.
type tlsServer struct {
	addr   string
	user   *imapmemserver.User
	client *tls.Config // trusts the server's certificate
}

func startTLSServer(t *testing.T, implicit bool) *tlsServer {
	t.Helper()
	cert, pool := mailtest.SelfSigned(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{cert}}
	mem := imapmemserver.New()
	u := imapmemserver.NewUser("host", "pw")
	if err := u.Create("INBOX", nil); err != nil {
		t.Fatal(err)
	}
	mem.AddUser(u)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:      imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		TLSConfig: serverTLS,
		Logger:    nopLogger{},
	})
	var ln net.Listener
	var err error
	if implicit {
		ln, err = tls.Listen("tcp", "127.0.0.1:0", serverTLS)
	} else {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
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
	return &tlsServer{addr: ln.Addr().String(), user: u, client: &tls.Config{RootCAs: pool}}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func testMessage(id string) []byte {
	return []byte("From: a@example.net\r\nTo: host@example.org\r\nMessage-ID: <" + id + ">\r\nSubject: x\r\n\r\nVOTE Alice\r\n")
}

// runUntilHandled runs w until it has handled n messages.
func runUntilHandled(t *testing.T, w *Watcher, got *handledLog, n int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return")
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for got.len() < n {
		if time.Now().After(deadline) {
			t.Fatalf("handled %d messages, want %d; stats %+v", got.len(), n, w.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type handledLog struct {
	mu   sync.Mutex
	msgs []Fetched
}

func (h *handledLog) handle(_ context.Context, m Fetched) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, m)
	return nil
}

func (h *handledLog) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.msgs)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testCfg(url string, tc *tls.Config) Config {
	return Config{
		URL: url, Username: "host", Password: "pw", TLSConfig: tc, Logger: quiet(),
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, CommandTimeout: 10 * time.Second,
	}
}

func TestImplicitTLS(t *testing.T) {
	srv := startTLSServer(t, true)
	if _, err := srv.user.Append("INBOX", bytes.NewReader(testMessage("tls-1@x")), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	got := &handledLog{}
	w, err := New(testCfg("imaps://"+srv.addr, srv.client), got.handle)
	if err != nil {
		t.Fatal(err)
	}
	runUntilHandled(t, w, got, 1)

	// Without trust in the certificate, nothing gets through.
	got2 := &handledLog{}
	w2, err := New(testCfg("imaps://"+srv.addr, nil), got2.handle)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w2.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for w2.Stats().Disconnects < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no failed connection with an untrusted certificate")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if st := w2.Stats(); st.Connects != 0 || got2.len() != 0 || !strings.Contains(st.LastError, "certificate") {
		t.Errorf("untrusted certificate: stats %+v, %d handled; want no login and a certificate error", st, got2.len())
	}
}

// STARTTLS, as required for imap:// to a remote host, works where the
// server offers it; where it does not, the watcher refuses to go on in
// plain text and never sends the password. The servers run on loopback,
// so the policy a remote host would get is forced here.
func TestStartTLSRequired(t *testing.T) {
	srv := startTLSServer(t, false)
	if _, err := srv.user.Append("INBOX", bytes.NewReader(testMessage("starttls-1@x")), &imap.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	got := &handledLog{}
	w, err := New(testCfg("imap://"+srv.addr, srv.client), got.handle)
	if err != nil {
		t.Fatal(err)
	}
	if w.ep.Security != mailurl.Plain {
		t.Fatalf("loopback imap:// gave %v, want plain", w.ep.Security)
	}
	w.ep.Security = mailurl.StartTLS
	runUntilHandled(t, w, got, 1)

	// A server that does not offer STARTTLS, listening on a socket that
	// records what the client says.
	rec := startRecordingServer(t)
	w2, err := New(testCfg("imap://"+rec.addr(), nil), (&handledLog{}).handle)
	if err != nil {
		t.Fatal(err)
	}
	w2.ep.Security = mailurl.StartTLS
	err = w2.runSession(context.Background(), func() {})
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("runSession against a server without STARTTLS: %v, want a STARTTLS error", err)
	}
	if said := rec.received(); strings.Contains(said, "pw") || strings.Contains(strings.ToUpper(said), "LOGIN") ||
		strings.Contains(strings.ToUpper(said), "AUTHENTICATE") {
		t.Errorf("the client sent %q in plain text", said)
	}
}

// recordingServer is an IMAP server without TLS that answers STARTTLS with
// NO and records every byte the client sends.
type recordingServer struct {
	ln   net.Listener
	wire mailtest.Wire
	wg   sync.WaitGroup
}

func startRecordingServer(t *testing.T) *recordingServer {
	t.Helper()
	mem := imapmemserver.New()
	u := imapmemserver.NewUser("host", "pw")
	u.Create("INBOX", nil)
	mem.AddUser(u)
	srv := imapserver.New(&imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return mem.NewSession(), nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}},
		InsecureAuth: true,
		Logger:       nopLogger{},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recordingServer{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		srv.Serve(r.wire.Record(ln))
	}()
	t.Cleanup(func() {
		srv.Close()
		r.wg.Wait()
	})
	return r
}

func (r *recordingServer) addr() string { return r.ln.Addr().String() }

func (r *recordingServer) received() string { return r.wire.String() }
