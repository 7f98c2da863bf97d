package watcher_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

const (
	hostUser = "host"
	hostPass = "s3cret-pa55"
	hostAddr = "host@example.org"
	// waitLong bounds every wait for the watcher: generous, because the
	// tests must pass on a loaded two-core machine; a passing test never
	// waits this long.
	waitLong = 30 * time.Second
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// startServer runs an embedded mail server with the host's account.
func startServer(t *testing.T, opts mailserver.Config) *mailserver.Server {
	t.Helper()
	if opts.Users == nil {
		opts.Users = map[string]string{hostUser: hostPass}
	}
	return mailtest.StartServer(t, opts)
}

// testConfig is a configuration for srv with short backoffs, so that
// reconnections happen within the tests' time.
func testConfig(t *testing.T, imapAddr string) watcher.Config {
	return watcher.Config{
		URL:            "imap://" + imapAddr,
		Username:       hostUser,
		Password:       hostPass,
		MinBackoff:     10 * time.Millisecond,
		MaxBackoff:     200 * time.Millisecond,
		CommandTimeout: 10 * time.Second,
		// Short, so that mail the embedded server fails to push (it does
		// not report mail that arrived just before IDLE began) is
		// picked up soon anyway; the test of IDLE itself sets an hour.
		IdleRefresh: time.Second,
		Logger:      testlog.New(t, slog.LevelDebug),
	}
}

// runWatcher starts Run and, at the end of the test, stops it and checks
// that it returned nil in time.
func runWatcher(t *testing.T, cfg watcher.Config, h watcher.Handler) *watcher.Watcher {
	t.Helper()
	w, err := watcher.New(cfg, h)
	if err != nil {
		t.Fatalf("watcher.New: %v", err)
	}
	mailtest.RunDuringTest(t, waitLong, w.Run)
	return w
}

// recorder is a handler that remembers what it was given; fail, if set,
// decides whether a call fails.
type recorder struct {
	fail func(m watcher.Fetched) error

	mu   sync.Mutex
	msgs []watcher.Fetched
}

func (r *recorder) handle(_ context.Context, m watcher.Fetched) error {
	if r.fail != nil {
		if err := r.fail(m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	return nil
}

func (r *recorder) handled() []watcher.Fetched {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]watcher.Fetched(nil), r.msgs...)
}

// ids returns the Message-IDs of the handled messages, in handling order.
func (r *recorder) ids() []string {
	var ids []string
	for _, m := range r.handled() {
		ids = append(ids, messageID(m.Raw))
	}
	return ids
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs)
}

func messageID(raw []byte) string {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "unparsable: " + err.Error()
	}
	return m.Header.Get("Message-Id")
}

func msgID(n int) string { return fmt.Sprintf("<vote-%d@players.example.net>", n) }

// mailText is a player's message, number n.
func mailText(n int) []byte {
	return []byte(strings.ReplaceAll(fmt.Sprintf(`From: Player %[1]d <player%[1]d@players.example.net>
To: host+g1-t-abcdefghijk@example.org
Subject: Re: Day 1
Message-ID: %[2]s
Date: Mon, 2 Jun 2025 10:00:%02[1]d +0000
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

VOTE Alice
`, n, msgID(n)), "\n", "\r\n"))
}

func deliver(t *testing.T, s *mailserver.Server, nums ...int) {
	t.Helper()
	for _, n := range nums {
		if err := s.Deliver(fmt.Sprintf("player%d@players.example.net", n), hostAddr, mailText(n)); err != nil {
			t.Fatalf("Deliver %d: %v", n, err)
		}
	}
}

// mailboxState reads a mailbox over a separate, read-only connection and
// returns whether each message (by Message-ID) is \Seen.
func mailboxState(t *testing.T, imapAddr, mailbox string) map[string]bool {
	t.Helper()
	c, err := imapclient.DialInsecure(imapAddr, nil)
	if err != nil {
		t.Fatalf("dial IMAP: %v", err)
	}
	defer c.Close()
	if err := c.Login(hostUser, hostPass).Wait(); err != nil {
		t.Fatalf("LOGIN: %v", err)
	}
	sel, err := c.Select(mailbox, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("EXAMINE %s: %v", mailbox, err)
	}
	state := map[string]bool{}
	if sel.NumMessages == 0 {
		return state
	}
	section := &imap.FetchItemBodySection{Peek: true}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{
		Flags:       true,
		BodySection: []*imap.FetchItemBodySection{section},
	}).Collect()
	if err != nil {
		t.Fatalf("FETCH: %v", err)
	}
	for _, m := range msgs {
		seen := false
		for _, f := range m.Flags {
			if f == imap.FlagSeen {
				seen = true
			}
		}
		state[messageID(m.FindBodySection(section))] = seen
	}
	if err := c.Logout().Wait(); err != nil {
		t.Logf("LOGOUT: %v", err)
	}
	return state
}

// markAllSeen sets \Seen on every message in INBOX, as another client
// would.
func markAllSeen(t *testing.T, imapAddr string) {
	t.Helper()
	c, err := imapclient.DialInsecure(imapAddr, nil)
	if err != nil {
		t.Fatalf("dial IMAP: %v", err)
	}
	defer c.Close()
	if err := c.Login(hostUser, hostPass).Wait(); err != nil {
		t.Fatalf("LOGIN: %v", err)
	}
	if _, err := c.Select("INBOX", nil).Wait(); err != nil {
		t.Fatalf("SELECT: %v", err)
	}
	store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen}}
	if err := c.Store(imap.SeqSet{{Start: 1, Stop: 0}}, store, nil).Close(); err != nil {
		t.Fatalf("STORE: %v", err)
	}
	if err := c.Logout().Wait(); err != nil {
		t.Logf("LOGOUT: %v", err)
	}
}

// allSeen reports whether the mailbox holds exactly want messages, all \Seen.
func allSeen(t *testing.T, imapAddr, mailbox string, want int) bool {
	st := mailboxState(t, imapAddr, mailbox)
	if len(st) != want {
		return false
	}
	for _, seen := range st {
		if !seen {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds, failing the test after waitLong.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mailtest.WaitFor(t, what, waitLong, 10*time.Millisecond, cond)
}

// proxy forwards TCP connections to a server and can cut existing ones
// off silently, as a NAT that forgot a connection or a peer that vanished
// does: nothing arrives any more, and nothing says so.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	pairs []*pair
	wg    sync.WaitGroup
}

type pair struct {
	client, server net.Conn
	frozen         atomic.Bool
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, pr := range p.pairs {
			pr.client.Close()
			pr.server.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		pr := &pair{client: c, server: s}
		p.mu.Lock()
		p.pairs = append(p.pairs, pr)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(pr, s, c)
		go p.pipe(pr, c, s)
	}
}

func (p *proxy) pipe(pr *pair, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !pr.frozen.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// freeze silently swallows everything on the connections open now; later
// connections work.
func (p *proxy) freeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.pairs {
		pr.frozen.Store(true)
	}
	return len(p.pairs)
}
