// Package mailtest holds what the tests of the mail packages (the watcher,
// the sender, the fault proxies) need alike: a self-signed certificate for
// a loopback server, a listener that records every byte its clients send,
// a wait for a condition, a loop run for the length of a test, the
// embedded mail servers for one test, and an IMAP session on a mailbox
// behind the host's back.
package mailtest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/mail/mailserver"
)

// SelfSigned makes a certificate for a server on 127.0.0.1 or localhost,
// and the pool that a client trusting it uses.
func SelfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// Wire keeps every byte that the clients of a listener sent, for the tests
// that check what went over the network in clear text (no password before
// TLS, no command after a refused STARTTLS).
type Wire struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Record wraps ln so that what its connections read is kept in w.
func (w *Wire) Record(ln net.Listener) net.Listener { return recordingListener{ln, w} }

// String is everything the clients sent so far.
func (w *Wire) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

type recordingListener struct {
	net.Listener
	w *Wire
}

func (l recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return recordingConn{c, l.w}, nil
}

type recordingConn struct {
	net.Conn
	w *Wire
}

func (c recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.w.mu.Lock()
	c.w.buf.Write(p[:n])
	c.w.mu.Unlock()
	return n, err
}

// WaitFor polls cond every poll until it holds, failing the test after
// limit with what it waited for.
func WaitFor(t testing.TB, what string, limit, poll time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(poll)
	}
}

// RunDuringTest runs loop in the background until the test ends; then it
// cancels loop's context and checks that loop returned nil within limit.
func RunDuringTest(t testing.TB, limit time.Duration, loop func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(limit):
			t.Errorf("Run did not return within %v of its context ending", limit)
		}
	})
}

// StartServer runs the embedded mail servers for the test, quiet unless
// opts names a logger, and closes them when it ends.
func StartServer(t testing.TB, opts mailserver.Config) *mailserver.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := mailserver.Start(opts)
	if err != nil {
		t.Fatalf("mailserver.Start: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// IMAP logs in as user to the IMAP server at addr, in clear text, and
// selects mailbox unless it is "": the start of what a test does to a
// mailbox as a person or a provider would (read it, delete from it),
// which the host must then cope with. The caller closes the client.
func IMAP(t testing.TB, addr, user, password, mailbox string) *imapclient.Client {
	t.Helper()
	c, err := imapclient.DialInsecure(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Login(user, password).Wait(); err != nil {
		c.Close()
		t.Fatal(err)
	}
	if mailbox != "" {
		if _, err := c.Select(mailbox, nil).Wait(); err != nil {
			c.Close()
			t.Fatal(err)
		}
	}
	return c
}

// AddFlags adds flags to the messages of uids in the selected mailbox.
func AddFlags(t testing.TB, c *imapclient.Client, uids imap.UIDSet, flags ...imap.Flag) {
	t.Helper()
	if err := c.Store(uids, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: flags}, nil).Close(); err != nil {
		t.Fatal(err)
	}
}
