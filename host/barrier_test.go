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
	t.Parallel()
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
	t.Parallel()
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

// D8: with arrival order, a digest goes out at its time without waiting
// for the mail that reached the mailbox before it (a post read after it
// goes into the next one), and the watcher's barrier is the next ordered
// deadline, not the digest: mail that came after the digest is not held
// back for it. The ordered deadline still waits for the watermark.
func TestD8_ADigestDoesNotWaitForTheWatermark(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.arrivalOrder = true
	hs.restart()
	hs.setUp()
	hs.send(addr("Carol"), "host+g1-p-"+hs.token("g1", addr("Carol"))+"@example.org", "MAIL DIGEST")
	hs.send(addr("Dave"), hs.thread("Dave"), "Carol is quiet today.")
	s := hs.game("g1")
	digestAt, _ := engine.NextDeadline(s)
	ordered, ok := engine.NextOrderedDeadline(s)
	if !ok || !digestAt.Before(ordered) || s.DigestPending == 0 {
		t.Fatalf("no digest due before the next ordered deadline: digest %v, ordered %v (%v), %d gathered", digestAt, ordered, ok, s.DigestPending)
	}
	if b := hs.h.Barrier(); !b.Equal(hs.h.clock.RealAt(ordered)) {
		t.Fatalf("Barrier %v with a digest due at %v, want the ordered deadline %v", b, digestAt, ordered)
	}
	if _, read := hs.h.readUntil(); read {
		t.Fatal("the harness reported a watermark")
	}

	digests := len(hs.mailTo(addr("Carol"), 0))
	hs.now = hs.h.clock.RealAt(digestAt).Add(time.Second)
	hs.tick()
	if s := hs.game("g1"); s.DigestPending != 0 || !s.LastDigest.Equal(digestAt) {
		t.Fatalf("the digest due at %v waited for the watermark: %d gathered, last digest %v", digestAt, s.DigestPending, s.LastDigest)
	}
	if len(hs.mailTo(addr("Carol"), 0)) != digests+1 {
		t.Fatal("Carol got no digest")
	}

	hs.now = hs.h.clock.RealAt(ordered).Add(time.Second)
	hs.tick()
	if o, _ := engine.NextOrderedDeadline(hs.game("g1")); !o.Equal(ordered) {
		t.Fatalf("the ordered deadline at %v was applied with no watermark past it (next %v)", ordered, o)
	}
	hs.h.Advance(context.Background(), hs.now)
	hs.checkSchedule()
	if o, _ := engine.NextOrderedDeadline(hs.game("g1")); o.Equal(ordered) {
		t.Fatalf("the ordered deadline at %v was not applied once the watermark passed it", ordered)
	}
}
