package watcher_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/mail"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/store"
)

// Mail that is waiting when the watcher starts is processed in UID order,
// through several batches, and ends up \Seen.
func TestProcessesMailWaitingAtStart(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const n = 12
	var want []string
	for i := 1; i <= n; i++ {
		deliver(t, srv, i)
		want = append(want, msgID(i))
	}

	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 5       // three batches
	cfg.MaxBatchBytes = 600 // about one message per FETCH of bodies
	w := runWatcher(t, cfg, rec.handle)

	waitFor(t, "every message handled", func() bool { return rec.count() >= n })
	waitFor(t, "every message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", n) })
	waitFor(t, "the watcher to be caught up", func() bool { return w.Stats().CaughtUp })

	if got := rec.ids(); !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v in UID order", got, want)
	}
	var prevUID uint32
	for _, m := range rec.handled() {
		if m.Mailbox != "INBOX" || m.UIDValidity == 0 || m.UID <= prevUID {
			t.Errorf("message %+v: want mailbox INBOX, a UIDVALIDITY and increasing UIDs", m)
		}
		if !bytes.Contains(m.Raw, []byte("\r\n\r\nVOTE Alice")) {
			t.Errorf("UID %d: body not delivered whole: %q", m.UID, m.Raw)
		}
		prevUID = m.UID
	}
	st := w.Stats()
	if st.Handled != n || st.HandlerErrors != 0 || st.Connects != 1 || !st.Connected {
		t.Errorf("stats %+v: want %d handled, no errors, one connection", st, n)
	}
}

// Mail that arrives while the watcher is in IDLE is processed at once: the
// refresh interval is an hour and there is no polling, so only the
// server's push can have woken the watcher.
func TestProcessesMailArrivingDuringIdle(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.IdleRefresh = time.Hour
	cfg.PollInterval = time.Hour
	w := runWatcher(t, cfg, rec.handle)

	for i := 1; i <= 3; i++ {
		waitFor(t, "the watcher to be in IDLE", func() bool { return w.Stats().Idling })
		deliver(t, srv, i)
		waitFor(t, fmt.Sprintf("message %d handled", i), func() bool { return rec.count() == i })
	}
	waitFor(t, "all \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })
	if got, want := rec.ids(), []string{msgID(1), msgID(2), msgID(3)}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
	if st := w.Stats(); st.Connects != 1 || st.Disconnects != 0 {
		t.Errorf("stats %+v: want one connection that never failed", st)
	}
}

// Where IDLE is not used, the watcher polls.
func TestPollsWithoutIdle(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.DisableIdle = true
	cfg.PollInterval = 50 * time.Millisecond
	w := runWatcher(t, cfg, rec.handle)

	waitFor(t, "the watcher to be caught up", func() bool { return w.Stats().CaughtUp })
	deliver(t, srv, 1, 2)
	waitFor(t, "both messages handled", func() bool { return rec.count() == 2 })
	waitFor(t, "several polls", func() bool { return w.Stats().Scans >= 5 })
	waitFor(t, "both \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 2) })
}

// A handler error leaves the message unseen; it is offered again (after a
// backoff) until the handler succeeds, and the messages after it are not
// held up meanwhile.
func TestHandlerErrorLeavesMessageUnseenAndRetries(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	var failing atomic.Bool
	failing.Store(true)
	var attempts atomic.Int32
	rec := &recorder{fail: func(m watcher.Fetched) error {
		if messageID(m.Raw) != msgID(1) {
			return nil
		}
		attempts.Add(1)
		if failing.Load() {
			return errors.New("database is locked")
		}
		return nil
	}}
	cfg := testConfig(t, srv.IMAPAddr())
	w := runWatcher(t, cfg, rec.handle)

	deliver(t, srv, 1, 2)
	waitFor(t, "message 2 handled", func() bool { return rec.count() == 1 })
	waitFor(t, "message 1 to be retried", func() bool { return attempts.Load() >= 3 })

	st := mailboxState(t, srv.IMAPAddr(), "INBOX")
	if seen, ok := st[msgID(1)]; !ok || seen {
		t.Fatalf("message 1 (handler failing): present %v, seen %v; want present and unseen", ok, seen)
	}
	if !st[msgID(2)] {
		t.Errorf("message 2 (handled) is not \\Seen")
	}
	if s := w.Stats(); s.HandlerErrors < 2 || s.Deferred != 1 {
		t.Errorf("stats %+v: want at least 2 handler errors and 1 deferred message", s)
	}

	failing.Store(false)
	waitFor(t, "message 1 handled", func() bool { return rec.count() == 2 })
	waitFor(t, "both \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 2) })
	if got, want := rec.ids(), []string{msgID(2), msgID(1)}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
	waitFor(t, "no deferred message", func() bool { s := w.Stats(); return s.CaughtUp && s.Deferred == 0 })
}

// A panicking handler is an error like any other: the watcher survives and
// offers the message again.
func TestHandlerPanicIsRetried(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	var calls atomic.Int32
	rec := &recorder{fail: func(watcher.Fetched) error {
		if calls.Add(1) == 1 {
			panic("bug in the rules")
		}
		return nil
	}}
	w := runWatcher(t, testConfig(t, srv.IMAPAddr()), rec.handle)
	deliver(t, srv, 1)
	waitFor(t, "message handled after the panic", func() bool { return rec.count() == 1 })
	waitFor(t, "message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 1) })
	if s := w.Stats(); s.HandlerErrors != 1 || s.Disconnects != 0 {
		t.Errorf("stats %+v: want 1 handler error and no disconnection", s)
	}
}

// \Seen is set only after the handler has returned nil: while the handler
// is still working, another client sees the message unseen.
func TestSeenOnlyAfterHandlerReturns(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	inHandler := make(chan struct{})
	release := make(chan struct{})
	rec := &recorder{fail: func(watcher.Fetched) error {
		close(inHandler)
		<-release
		return nil
	}}
	runWatcher(t, testConfig(t, srv.IMAPAddr()), rec.handle)
	deliver(t, srv, 1)

	select {
	case <-inHandler:
	case <-time.After(waitLong):
		t.Fatal("the handler was not called")
	}
	st := mailboxState(t, srv.IMAPAddr(), "INBOX")
	if seen, ok := st[msgID(1)]; !ok || seen {
		t.Errorf("while the handler runs: present %v, seen %v; want present and unseen", ok, seen)
	}
	close(release)
	waitFor(t, "message \\Seen after the handler returned", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 1) })
}

// When the server goes away, the watcher reconnects with backoff, again
// and again, and processes mail once a server is back on the same port.
func TestReconnectsAfterServerRestart(t *testing.T) {
	srv, err := mailserver.Start(mailserver.Config{Users: map[string]string{hostUser: hostPass}, Logger: discard})
	if err != nil {
		t.Fatalf("mailserver.Start: %v", err)
	}
	defer srv.Close()
	addr := srv.IMAPAddr()

	rec := &recorder{}
	cfg := testConfig(t, addr)
	w := runWatcher(t, cfg, rec.handle)
	deliver(t, srv, 1)
	waitFor(t, "message 1 handled", func() bool { return rec.count() == 1 })
	waitFor(t, "message 1 \\Seen", func() bool { return allSeen(t, addr, "INBOX", 1) })

	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitFor(t, "several failed reconnections", func() bool { return w.Stats().Disconnects >= 4 })
	if st := w.Stats(); st.Connected || st.CaughtUp || st.LastError == "" {
		t.Errorf("server down, stats %+v: want disconnected with an error", st)
	}

	// The new server lost everything (it keeps mail in memory): a new
	// mailbox with mail of its own.
	srv2 := startServer(t, mailserver.Config{IMAPAddr: addr})
	deliver(t, srv2, 2, 3)
	waitFor(t, "mail on the new server handled", func() bool { return rec.count() == 3 })
	waitFor(t, "mail on the new server \\Seen", func() bool { return allSeen(t, addr, "INBOX", 2) })
	if got, want := rec.ids(), []string{msgID(1), msgID(2), msgID(3)}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v", got, want)
	}
	if st := w.Stats(); st.Connects != 2 || !st.Connected {
		t.Errorf("stats %+v: want connected, 2 logins", st)
	}
}

// A server that drops the connection (BYE, as on a restart) is
// reconnected to at once, and mail delivered meanwhile is processed
// before the watcher goes back to IDLE.
func TestReconnectsAfterBye(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	w := runWatcher(t, cfg, rec.handle)
	waitFor(t, "the watcher to be idle", func() bool { return w.Stats().CaughtUp })

	for round := 1; round <= 3; round++ {
		if n := srv.DropConnections(hostUser); n != 1 {
			t.Fatalf("round %d: dropped %d connections, want 1", round, n)
		}
		deliver(t, srv, round)
		waitFor(t, fmt.Sprintf("message %d handled", round), func() bool { return rec.count() == round })
		waitFor(t, "a new login", func() bool { st := w.Stats(); return st.Connects == uint64(round+1) && st.CaughtUp })
	}
	waitFor(t, "all \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })
}

// A connection that goes silent (no BYE, no RST) is noticed when the watcher
// leaves IDLE for its periodic check: DONE or NOOP gets no answer within
// the command timeout, and the watcher reconnects.
func TestNoticesDeadConnection(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	px := startProxy(t, srv.IMAPAddr())
	rec := &recorder{}
	cfg := testConfig(t, px.addr())
	cfg.IdleRefresh = 200 * time.Millisecond
	cfg.CommandTimeout = time.Second
	w := runWatcher(t, cfg, rec.handle)
	waitFor(t, "the watcher to be idle", func() bool { return w.Stats().CaughtUp })

	if n := px.freeze(); n != 1 {
		t.Fatalf("froze %d connections, want 1", n)
	}
	deliver(t, srv, 1)
	waitFor(t, "message handled over a new connection", func() bool { return rec.count() == 1 })
	st := w.Stats()
	if st.Connects != 2 || st.Disconnects < 1 || !strings.Contains(st.LastError, "no answer") {
		t.Errorf("stats %+v: want a second login after a command timed out", st)
	}
}

// A wrong password is not fatal: the watcher keeps trying, with backoff,
// until the password works (here: until the server accepts it).
func TestKeepsTryingAfterLoginFailure(t *testing.T) {
	srv := startServer(t, mailserver.Config{Users: map[string]string{hostUser: "another password"}})
	rec := &recorder{}
	w := runWatcher(t, testConfig(t, srv.IMAPAddr()), rec.handle)
	waitFor(t, "failed logins", func() bool { return w.Stats().Disconnects >= 3 })
	if st := w.Stats(); !strings.Contains(st.LastError, "log in as") || strings.Contains(st.LastError, hostPass) {
		t.Errorf("last error %q: want a login error that does not show the password", st.LastError)
	}
	if err := srv.SetPassword(hostUser, hostPass); err != nil {
		t.Fatal(err)
	}
	deliver(t, srv, 1)
	waitFor(t, "message handled", func() bool { return rec.count() == 1 })
}

// Both login methods work.
func TestAuthMethods(t *testing.T) {
	for _, method := range []string{"plain", "login", ""} {
		t.Run("auth="+method, func(t *testing.T) {
			srv := startServer(t, mailserver.Config{})
			deliver(t, srv, 1)
			rec := &recorder{}
			cfg := testConfig(t, srv.IMAPAddr())
			cfg.Auth = method
			runWatcher(t, cfg, rec.handle)
			waitFor(t, "message handled", func() bool { return rec.count() == 1 })
		})
	}
}

// With MoveTo, processed mail leaves the INBOX for that folder, \Seen; the
// folder is created when missing.
func TestMovesProcessedMail(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	// Message 0 was processed, but its MOVE was cut off after \Seen.
	deliver(t, srv, 0)
	markAllSeen(t, srv.IMAPAddr())
	deliver(t, srv, 1, 2)
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.MoveTo = "Processed"
	w := runWatcher(t, cfg, rec.handle)
	waitFor(t, "both handled", func() bool { return rec.count() == 2 })
	waitFor(t, "all three moved", func() bool { return allSeen(t, srv.IMAPAddr(), "Processed", 3) })
	if got, want := rec.ids(), []string{msgID(1), msgID(2)}; !slices.Equal(got, want) {
		t.Errorf("handled %v, want %v (message 0 was processed before)", got, want)
	}
	if st := mailboxState(t, srv.IMAPAddr(), "INBOX"); len(st) != 0 {
		t.Errorf("INBOX still holds %v", st)
	}

	deliver(t, srv, 3)
	waitFor(t, "the third handled", func() bool { return rec.count() == 3 })
	waitFor(t, "four moved", func() bool { return allSeen(t, srv.IMAPAddr(), "Processed", 4) })
	// A reconnection finds the folder there and does not fail on it.
	srv.DropConnections(hostUser)
	deliver(t, srv, 4)
	waitFor(t, "five moved", func() bool { return allSeen(t, srv.IMAPAddr(), "Processed", 5) })
	if st := w.Stats(); st.Connects != 2 {
		t.Errorf("stats %+v: want 2 logins", st)
	}
}

// When the server loses its UID state (new UIDVALIDITY, all old mail back
// and unseen), the watcher offers the old mail again and a handler built on
// the store's Message-ID dedupe applies none of it twice.
func TestUIDValidityChangeDoesNotReapply(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })

	var applied, duplicates atomic.Int32
	handler := func(ctx context.Context, m watcher.Fetched) error {
		dup := store.NotDuplicate
		hdr, err := mail.ReadMessage(bytes.NewReader(m.Raw))
		if err != nil {
			return err
		}
		err = st.Update(ctx, func(tx *store.Tx) error {
			in, d, err := tx.RecordInbound(ctx, store.Inbound{
				Mailbox: m.Mailbox, UIDValidity: m.UIDValidity, UID: m.UID,
				MessageID: hdr.Header.Get("Message-Id"), Raw: m.Raw, ReceivedAt: time.Now(),
			})
			if err != nil {
				return err
			}
			if dup = d; d != store.NotDuplicate {
				return nil
			}
			return tx.SetInboundOutcome(ctx, in.ID, store.OutcomeApplied, "", "")
		})
		if err != nil {
			return err
		}
		if dup == store.NotDuplicate {
			applied.Add(1)
		} else {
			duplicates.Add(1)
		}
		return nil
	}

	cfg := testConfig(t, srv.IMAPAddr())
	w := runWatcher(t, cfg, handler)
	deliver(t, srv, 1, 2, 3)
	waitFor(t, "three applied", func() bool { return applied.Load() == 3 })
	waitFor(t, "three \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })
	oldUV := w.Stats().UIDValidity

	newUV, err := srv.ResetMailbox(hostUser)
	if err != nil {
		t.Fatalf("ResetMailbox: %v", err)
	}
	if newUV == oldUV {
		t.Fatalf("UIDVALIDITY stayed %d", newUV)
	}
	waitFor(t, "the old mail offered again", func() bool { return duplicates.Load() == 3 })
	waitFor(t, "the old mail \\Seen again", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })
	if s := w.Stats(); s.UIDValidity != newUV {
		t.Errorf("stats UIDVALIDITY %d, want %d", s.UIDValidity, newUV)
	}
	deliver(t, srv, 4)
	waitFor(t, "new mail applied", func() bool { return applied.Load() == 4 })
	if got := duplicates.Load(); got != 3 {
		t.Errorf("%d duplicates, want 3", got)
	}
	pending, err := st.InboundByOutcome(ctx, store.OutcomeApplied, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 4 {
		t.Errorf("%d inbox rows applied, want 4", len(pending))
	}
}

// OnCaughtUp is called on every pass that leaves nothing unprocessed.
func TestOnCaughtUp(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	deliver(t, srv, 1, 2)
	rec := &recorder{}
	caught := make(chan watcher.Stats, 16)
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.IdleRefresh = time.Hour
	cfg.OnCaughtUp = func(s watcher.Stats) {
		select {
		case caught <- s:
		default:
		}
	}
	w := runWatcher(t, cfg, rec.handle)
	select {
	case s := <-caught:
		if s.Handled != 2 || !s.CaughtUp || s.Scans != 1 {
			t.Errorf("first OnCaughtUp with %+v: want both handled, caught up, scan 1", s)
		}
	case <-time.After(waitLong):
		t.Fatal("OnCaughtUp was not called")
	}
	waitFor(t, "the watcher to be in IDLE", func() bool { return w.Stats().Idling })
	deliver(t, srv, 3)
	select {
	case s := <-caught:
		if s.Handled != 3 {
			t.Errorf("second OnCaughtUp with %+v: want 3 handled", s)
		}
	case <-time.After(waitLong):
		t.Fatal("OnCaughtUp was not called after new mail")
	}
}

// Run returns promptly once its context ends, in IDLE and while the
// server is unreachable.
func TestRunReturnsWhenContextEnds(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	for _, addr := range []string{srv.IMAPAddr(), "127.0.0.1:1"} {
		cfg := testConfig(t, addr)
		cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour
		w, err := watcher.New(cfg, (&recorder{}).handle)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		waitFor(t, "connected or failed", func() bool { s := w.Stats(); return s.CaughtUp || s.Disconnects > 0 })
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: Run returned %v, want nil", addr, err)
			}
		case <-time.After(waitLong):
			t.Fatalf("%s: Run did not return", addr)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	h := (&recorder{}).handle
	good := watcher.Config{URL: "imaps://imap.example.org", Username: "u", Password: "p"}
	for name, mod := range map[string]func(*watcher.Config){
		"no username":      func(c *watcher.Config) { c.Username = "" },
		"no password":      func(c *watcher.Config) { c.Password = "" },
		"bad scheme":       func(c *watcher.Config) { c.URL = "https://imap.example.org" },
		"credentials":      func(c *watcher.Config) { c.URL = "imaps://u:p@imap.example.org" },
		"path":             func(c *watcher.Config) { c.URL = "imaps://imap.example.org/Archive" },
		"no host":          func(c *watcher.Config) { c.URL = "imaps://" },
		"bad auth":         func(c *watcher.Config) { c.Auth = "cram-md5" },
		"move to watched":  func(c *watcher.Config) { c.MoveTo = "inbox" },
		"unparsable url":   func(c *watcher.Config) { c.URL = "imaps://imap.example.org:99999999999x" },
		"password in url2": func(c *watcher.Config) { c.URL = "imap://u:hunter2@[::1" },
	} {
		cfg := good
		mod(&cfg)
		_, err := watcher.New(cfg, h)
		if err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %q shows the password", name, err)
		}
	}
	if _, err := watcher.New(good, nil); err == nil {
		t.Error("New accepted a nil handler")
	}
	if _, err := watcher.New(good, h); err != nil {
		t.Errorf("New(%+v): %v", good, err)
	}
}

// BenchmarkBacklog measures how fast a backlog of unseen mail is handled
// and marked \Seen over loopback, per message.
func BenchmarkBacklog(b *testing.B) {
	const backlog = 200
	for range b.N {
		b.StopTimer()
		srv, err := mailserver.Start(mailserver.Config{Users: map[string]string{hostUser: hostPass}, Logger: discard})
		if err != nil {
			b.Fatal(err)
		}
		for i := range backlog {
			if err := srv.Deliver("p@players.example.net", hostAddr, mailText(i)); err != nil {
				b.Fatal(err)
			}
		}
		var handled atomic.Int64
		done := make(chan struct{})
		w, err := watcher.New(watcher.Config{
			URL: "imap://" + srv.IMAPAddr(), Username: hostUser, Password: hostPass, Logger: discard,
			OnCaughtUp: func(s watcher.Stats) {
				if s.Handled == backlog {
					select {
					case <-done:
					default:
						close(done)
					}
				}
			},
		}, func(context.Context, watcher.Fetched) error { handled.Add(1); return nil })
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		b.StartTimer()
		go func() { w.Run(ctx); close(stopped) }()
		<-done
		b.StopTimer()
		cancel()
		<-stopped
		srv.Close()
		if handled.Load() != backlog {
			b.Fatalf("handled %d, want %d", handled.Load(), backlog)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*backlog), "µs/msg")
}

// A backlog is worked off with the senders taking turns: mail from five
// players that came after a flood of 200 messages from one address is
// handled in the first batch, not after the flood, and each sender's own
// mail keeps its order.
func TestFloodDoesNotHoldUpOthers(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const flood = 200
	flooder := "flood@players.example.net"
	for i := 1; i <= flood; i++ {
		deliverFrom(t, srv, flooder, 1000+i)
	}
	deliver(t, srv, 1, 2, 3, 4, 5)

	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 20
	runWatcher(t, cfg, rec.handle)
	waitFor(t, "every message handled", func() bool { return rec.count() >= flood+5 })

	pos := map[string]int{}
	for i, m := range rec.handled() {
		pos[messageID(m.Raw)] = i
	}
	for n := 1; n <= 5; n++ {
		// Five players and the flooder share the first batch of ten.
		if p, ok := pos[msgID(n)]; !ok || p >= 10 {
			t.Errorf("player %d's message was handled at position %d (found %v), after the flood's; want it in the first batch of ten", n, p, ok)
		}
	}
	for i := 1; i < flood; i++ {
		a, b := pos[msgID(1000+i)], pos[msgID(1000+i+1)]
		if a >= b {
			t.Errorf("the flood's message %d was handled at %d, its next at %d: one sender's mail must keep its order", i, a, b)
			break
		}
	}
}

// A crowd of senders working off backlogs (auto-responders, a flood) must
// not keep a sender who has just written waiting: they share the handler
// in fair turns, and the newcomer goes ahead of all of them.
func TestNewSenderGoesAheadOfBacklogs(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const senders, each = 15, 20
	for i := range senders * each {
		deliverFrom(t, srv, fmt.Sprintf("busy%d@players.example.net", i%senders), 1000+i)
	}
	// The newcomer writes once the backlog is well under way.
	const writesAt = 40
	var once sync.Once
	wrote := make(chan int, 1)
	rec := &recorder{}
	rec.fail = func(watcher.Fetched) error {
		if len(rec.handled()) == writesAt {
			once.Do(func() {
				if err := srv.Deliver("player1@players.example.net", hostAddr, mailText(1)); err != nil {
					t.Errorf("deliver the newcomer's message: %v", err)
				}
				wrote <- writesAt
			})
		}
		return nil
	}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 20
	runWatcher(t, cfg, rec.handle)
	waitFor(t, "every message handled", func() bool { return rec.count() >= senders*each+1 })

	at := <-wrote
	ids := rec.ids()
	pos := slices.Index(ids, msgID(1))
	// It arrived while the handler worked on a group from position at.
	// It goes into the next turn picked, which is handed over after
	// the rest of that group and, at worst, a whole batch fetched
	// before it came; a turn is handled in UID order, so it comes last
	// in its turn of ten.
	if pos < 0 || pos >= at+2*cfg.BatchSize+10 {
		t.Errorf("the newcomer's message was handled at position %d, %d after it arrived; want it in the turn after those already fetched", pos, pos-at)
	}
	// The busy senders took turns: after the first 15 messages, every
	// sender had one handled; each sender's mail kept its order.
	last := map[string]int{}
	for i, m := range rec.handled() {
		from := senderOf(m.Raw)
		if i < senders && last[from] != 0 {
			t.Errorf("%s had a second message handled among the first %d, before every sender had one", from, senders)
		}
		n := 0
		fmt.Sscanf(messageID(m.Raw), "<vote-%d@", &n)
		if n < last[from] {
			t.Errorf("%s's message %d was handled after its %d", from, n, last[from])
		}
		last[from] = n
	}
}

func senderOf(raw []byte) string {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	a, err := mail.ParseAddress(m.Header.Get("From"))
	if err != nil {
		return ""
	}
	return a.Address
}

// However many people write, a sender working off a backlog keeps one
// place in each batch: it is held back, never stopped.
func TestBacklogKeepsMovingAmongNewcomers(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const flood, others = 60, 90
	flooder := "flood@players.example.net"
	for i := 1; i <= flood; i++ {
		deliverFrom(t, srv, flooder, 1000+i)
	}
	for n := 1; n <= others; n++ {
		deliver(t, srv, n)
	}
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 20
	runWatcher(t, cfg, rec.handle)
	waitFor(t, "every message handled", func() bool { return rec.count() >= flood+others })

	// Ten batches of ten: nine of the others and one of the flood each.
	fromFlood := 0
	for _, m := range rec.handled()[:100] {
		if senderOf(m.Raw) == flooder {
			fromFlood++
		}
	}
	if fromFlood != 10 {
		t.Errorf("%d of the first 100 messages handled came from the flood, want one in each batch of ten", fromFlood)
	}
}

// A message over MaxMessageBytes reaches the handler as its header alone,
// with its size, in its place among the others, and is flagged \Seen once
// handled like any other.
func TestOversizedMessageHandedOverAsHeader(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	deliver(t, srv, 1)
	big := strings.Replace(string(mailText(2)), "VOTE Alice", "VOTE Alice\r\n\r\n"+strings.Repeat("x", 200<<10), 1)
	if err := srv.Deliver("player2@players.example.net", hostAddr, []byte(big)); err != nil {
		t.Fatal(err)
	}
	deliver(t, srv, 3)
	rec := &recorder{}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.MaxMessageBytes = 64 << 10
	runWatcher(t, cfg, rec.handle)
	waitFor(t, "three messages handled", func() bool { return rec.count() >= 3 })

	ms := rec.handled()
	if got := []string{messageID(ms[0].Raw), messageID(ms[1].Raw), messageID(ms[2].Raw)}; !slices.Equal(got, []string{msgID(1), msgID(2), msgID(3)}) {
		t.Fatalf("handled %v, want the three in UID order", got)
	}
	for i, m := range ms {
		if wantHeader := i == 1; m.HeaderOnly != wantHeader {
			t.Errorf("message %d: HeaderOnly %v, want %v", i+1, m.HeaderOnly, wantHeader)
		}
	}
	if m := ms[1]; m.Size < 200<<10 || len(m.Raw) > 4<<10 || bytes.Contains(m.Raw, []byte("VOTE")) || !bytes.HasSuffix(m.Raw, []byte("\r\n\r\n")) {
		t.Errorf("the large message: size %d, %d bytes handed over; want its full size and its header alone", m.Size, len(m.Raw))
	}
	if m := ms[0]; m.Size != int64(len(m.Raw)) {
		t.Errorf("a whole message: size %d for %d bytes", m.Size, len(m.Raw))
	}
	waitFor(t, "all three flagged \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })
}

// deliverFrom delivers message n (mailText) as sent from the address from.
func deliverFrom(t *testing.T, srv *mailserver.Server, from string, n int) {
	t.Helper()
	raw := strings.Replace(string(mailText(n)), fmt.Sprintf("Player %d <player%d@players.example.net>", n, n), "<"+from+">", 1)
	if err := srv.Deliver(from, hostAddr, []byte(raw)); err != nil {
		t.Fatal(err)
	}
}
