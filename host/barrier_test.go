package host

import (
	"context"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// The watcher reads the next deadline (Barrier) while the host handles a
// group: it gets the deadline as the latest transaction left it, at
// once, however long the group in progress holds the host.
func TestBarrierIsTheLatestCommittedDeadline(t *testing.T) {
	hs := newHarness(t)
	if b := hs.h.Barrier(); !b.IsZero() {
		t.Fatalf("Barrier %v with no game: want none", b)
	}
	hs.setUp()
	next, ok := engine.NextDeadline(hs.game("g1"))
	if !ok {
		t.Fatal("the started game has no deadline")
	}
	want := hs.h.clock.RealAt(next)
	if b := hs.h.Barrier(); !b.Equal(want) {
		t.Fatalf("Barrier %v after START, want the Day's deadline %v", b, want)
	}

	hs.h.mu.Lock() // as a group in progress does
	got := make(chan time.Time, 1)
	go func() { got <- hs.h.Barrier() }()
	select {
	case b := <-got:
		if !b.Equal(want) {
			t.Errorf("Barrier %v during a transaction, want %v", b, want)
		}
	case <-time.After(10 * time.Second):
		t.Error("Barrier waited for the transaction in progress")
	}
	hs.h.mu.Unlock()
}

// The watcher reports the watermark while the host handles a group too:
// short of the next deadline it has nothing to apply, and it is taken
// without waiting for the group.
func TestAdvanceShortOfTheDeadlineDoesNotWait(t *testing.T) {
	hs := newHarness(t)
	hs.setUp()
	deadline := hs.h.Barrier()
	w := deadline.Add(-time.Minute)

	hs.h.mu.Lock() // as a group in progress does
	done := make(chan struct{})
	go func() {
		hs.h.Advance(context.Background(), w)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("Advance short of the deadline waited for the transaction in progress")
	}
	hs.h.mu.Unlock()
	<-done
	if got, ok := hs.h.readUntil(); !ok || !got.Equal(w) {
		t.Errorf("watermark %v (%v), want %v", got, ok, w)
	}
	// An earlier watermark never lowers it.
	hs.h.Advance(context.Background(), w.Add(-time.Hour))
	if got, _ := hs.h.readUntil(); !got.Equal(w) {
		t.Errorf("watermark %v after an earlier one, want it kept at %v", got, w)
	}
}
