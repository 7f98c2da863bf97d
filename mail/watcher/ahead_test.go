package watcher_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

// While the handler works on a group, the watcher picks and fetches the
// next turns; the handler's next group holds all of them, up to a batch.
// Nothing is \Seen before the handler has returned for it, and every
// message is handled once, each in a group of its own turn's order.
func TestHandlerGetsWhatWasFetchedWhileItWorked(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	const n = 60
	for i := 1; i <= n; i++ {
		deliver(t, srv, i) // sixty senders, one message each
	}
	h := holdFirstGroup(t)
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 25
	w, err := watcher.NewGroup(cfg, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	runGroupWatcher(t, w)
	h.waitFirst(t)
	// The first group is one turn of ten (sixty senders wait, more than a
	// batch). While it is held, the watcher fetches the next turns, as
	// many as fit in a batch: two.
	waitFor(t, "the next turns fetched", func() bool {
		return w.Stats().Fetched >= 30
	})
	for id, seen := range mailboxState(t, srv.IMAPAddr(), "INBOX") {
		if seen {
			t.Errorf("%s is \\Seen while the handler still works on the first group", id)
		}
	}
	h.release()
	waitFor(t, "every message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", n) })
	waitFor(t, "the watcher to be caught up", func() bool { return w.Stats().CaughtUp })

	groups := h.handled()
	if len(groups) < 2 || len(groups[0]) != 10 || len(groups[1]) != 20 {
		t.Fatalf("groups of %v messages: want a turn of ten, then the two turns fetched meanwhile", lens(groups))
	}
	count := map[string]int{}
	for _, g := range groups {
		if len(g) > cfg.BatchSize {
			t.Errorf("a group of %d messages, more than a batch (%d)", len(g), cfg.BatchSize)
		}
		for _, id := range g {
			count[id]++
		}
	}
	for i := 1; i <= n; i++ {
		if count[msgID(i)] != 1 {
			t.Errorf("message %d handled %d times, want once", i, count[msgID(i)])
		}
	}
}

// heldFirst is a group handler that records each group's Message-IDs
// and holds its first group until release is called.
type heldFirst struct {
	mu      sync.Mutex
	groups  [][]string
	inFirst chan struct{}
	held    chan struct{}
	release func()
}

// holdFirstGroup returns a heldFirst whose first group is let go at the
// end of the test at the latest: a failing test must not leave it held.
func holdFirstGroup(t *testing.T) *heldFirst {
	h := &heldFirst{inFirst: make(chan struct{}), held: make(chan struct{})}
	var once sync.Once
	h.release = func() { once.Do(func() { close(h.held) }) }
	t.Cleanup(h.release)
	return h
}

func (h *heldFirst) handle(_ context.Context, ms []watcher.Fetched) []error {
	h.mu.Lock()
	first := len(h.groups) == 0
	var ids []string
	for _, m := range ms {
		ids = append(ids, messageID(m.Raw))
	}
	h.groups = append(h.groups, ids)
	h.mu.Unlock()
	if first {
		close(h.inFirst)
		<-h.held
	}
	return make([]error, len(ms))
}

// waitFirst waits until the handler holds its first group.
func (h *heldFirst) waitFirst(t *testing.T) {
	t.Helper()
	select {
	case <-h.inFirst:
	case <-time.After(waitLong):
		t.Fatal("the handler was not called")
	}
}

// handled returns the groups handled so far.
func (h *heldFirst) handled() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.groups)
}

func lens(groups [][]string) []int {
	var l []int
	for _, g := range groups {
		l = append(l, len(g))
	}
	return l
}

// Mail picked while the handler works was picked with the deadline as it
// stood then. When the handler's group moves the deadline (a command that
// ends the day sooner), that pick is dropped: mail that arrived after the
// new deadline waits until the watermark has passed it, as it would have
// had the pick waited for the handler.
func TestPickAheadDroppedWhenTheDeadlineMoves(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	base := time.Now().Add(-time.Minute).Truncate(time.Second)
	deadline := base.Add(-7 * time.Second)
	for i, at := range []time.Duration{-10 * time.Second, -5 * time.Second, -4 * time.Second} {
		if err := srv.DeliverAt(fmt.Sprintf("player%d@players.example.net", i+1), hostAddr, mailText(i+1), base.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var barrier time.Time // none until the first message sets it
	var order []string
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.BatchSize = 1
	cfg.Barrier = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return barrier
	}
	cfg.OnWatermark = func(at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !barrier.IsZero() && !at.Before(barrier) {
			barrier = time.Time{}
			order = append(order, "deadline")
		}
	}
	var fetchedDuring int
	var w *watcher.Watcher
	w, err := watcher.NewGroup(cfg, func(_ context.Context, ms []watcher.Fetched) []error {
		for _, m := range ms {
			id := messageID(m.Raw)
			mu.Lock()
			order = append(order, id)
			mu.Unlock()
			if id == msgID(1) {
				// The watcher picks the next message meanwhile; then
				// this one brings the deadline forward, before the
				// other two arrived.
				for end := time.Now().Add(waitLong); w.Stats().Fetched < 2 && time.Now().Before(end); {
					time.Sleep(5 * time.Millisecond)
				}
				mu.Lock()
				fetchedDuring = int(w.Stats().Fetched)
				barrier = deadline
				mu.Unlock()
			}
		}
		return make([]error, len(ms))
	})
	if err != nil {
		t.Fatal(err)
	}
	runGroupWatcher(t, w)
	waitFor(t, "every message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 3) })

	mu.Lock()
	defer mu.Unlock()
	if fetchedDuring < 2 {
		t.Fatalf("%d message(s) fetched while the first was handled; the test needs the next one fetched ahead", fetchedDuring)
	}
	got := strings.Join(order, " ")
	want := strings.Join([]string{msgID(1), "deadline", msgID(2), msgID(3)}, " ")
	if got != want {
		t.Fatalf("order %s, want %s: the two that arrived after the new deadline come after it", got, want)
	}
	if s := w.Stats(); s.Handled != 3 {
		t.Errorf("%d messages handled, want 3", s.Handled)
	}
}

// Short of a backlog, mail that comes while the handler works goes into
// its very next group, beside what was fetched ahead for it, rather than
// waiting for that group to be handled first.
func TestMailThatCameDuringAGroupJoinsTheNextOne(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	deliver(t, srv, 1, 2, 3)
	h := holdFirstGroup(t)
	cfg := testConfig(t, srv.IMAPAddr())
	// Three senders wait, more than a batch: the first group is a turn of
	// two, and the third message is fetched ahead while it is held.
	cfg.BatchSize = 2
	w, err := watcher.NewGroup(cfg, h.handle)
	if err != nil {
		t.Fatal(err)
	}
	runGroupWatcher(t, w)
	h.waitFirst(t)
	waitFor(t, "the third message fetched ahead", func() bool { return w.Stats().Fetched >= 3 })
	// The watcher has nothing more to fetch until the handler is done:
	// the fourth message comes after its last search.
	deliver(t, srv, 4)
	h.release()
	waitFor(t, "every message \\Seen", func() bool { return allSeen(t, srv.IMAPAddr(), "INBOX", 4) })

	groups := h.handled()
	want := [][]string{{msgID(1), msgID(2)}, {msgID(3), msgID(4)}}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("groups %v, want %v: the fourth message should join the group fetched ahead", groups, want)
	}
}
