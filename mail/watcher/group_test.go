package watcher_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

// A group handler gets the messages of each FETCH together, in UID order;
// only the messages it returned nil for are flagged \Seen, and one it
// failed is offered again, alone, while the others of its group stay
// done.
func TestGroupHandlerGetsEachFetchTogether(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const n = 12
	for i := 1; i <= n; i++ {
		deliver(t, srv, i)
	}
	var mu sync.Mutex
	var groups [][]string
	failed := false
	handler := func(_ context.Context, ms []watcher.Fetched) []error {
		mu.Lock()
		defer mu.Unlock()
		var ids []string
		errs := make([]error, len(ms))
		for i, m := range ms {
			ids = append(ids, messageID(m.Raw))
			if messageID(m.Raw) == msgID(3) && !failed {
				failed = true
				errs[i] = errors.New("database is locked")
			}
		}
		groups = append(groups, ids)
		return errs
	}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 5
	w, err := watcher.NewGroup(cfg, handler)
	if err != nil {
		t.Fatal(err)
	}
	runGroupWatcher(t, w)
	waitFor(t, "every message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", n) })
	waitFor(t, "the watcher to be caught up", func() bool { s := w.Stats(); return s.CaughtUp && s.Deferred == 0 })

	mu.Lock()
	defer mu.Unlock()
	var flat []string
	for _, g := range groups {
		flat = append(flat, g...)
		if len(g) > cfg.BatchSize {
			t.Errorf("a group of %d messages, more than a FETCH asks for (%d)", len(g), cfg.BatchSize)
		}
	}
	want := []string{msgID(1), msgID(2), msgID(3), msgID(4), msgID(5)}
	if len(groups) < 3 || !slices.Equal(groups[0], want) {
		t.Fatalf("groups %v: want the first FETCH's five messages together, in UID order", groups)
	}
	// Message 3 comes again, alone; no other message is handled twice.
	seen := map[string]int{}
	for _, id := range flat {
		seen[id]++
	}
	for i := 1; i <= n; i++ {
		want := 1
		if i == 3 {
			want = 2
		}
		if seen[msgID(i)] != want {
			t.Errorf("message %d offered %d times, want %d (groups %v)", i, seen[msgID(i)], want, groups)
		}
	}
	if s := w.Stats(); s.Handled != n || s.HandlerErrors != 1 {
		t.Errorf("stats %+v: want %d handled and 1 handler error", s, n)
	}
}

// A group handler that panics fails its whole group, which is offered
// again; the watcher goes on.
func TestGroupHandlerPanicIsRetried(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	deliver(t, srv, 1, 2)
	var mu sync.Mutex
	calls, handled := 0, 0
	w, err := watcher.NewGroup(testConfig(t, srv.IMAPAddr()), func(_ context.Context, ms []watcher.Fetched) []error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			panic("bug in the rules")
		}
		handled += len(ms)
		return make([]error, len(ms))
	})
	if err != nil {
		t.Fatal(err)
	}
	runGroupWatcher(t, w)
	waitFor(t, "both \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 2) })
	mu.Lock()
	defer mu.Unlock()
	if handled != 2 {
		t.Errorf("%d messages handled after the panic, want 2", handled)
	}
	if s := w.Stats(); s.HandlerErrors < 1 || s.Disconnects != 0 {
		t.Errorf("stats %+v: want handler errors and no disconnection", s)
	}
}

// runGroupWatcher runs w during the test, as runWatcher does.
func runGroupWatcher(t *testing.T, w *watcher.Watcher) {
	t.Helper()
	mailtest.RunDuringTest(t, waitLong, w.Run)
}
