package watcher_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

// junkText is a message to a thread address no game knows.
func junkText(n int) []byte {
	return []byte(fmt.Sprintf("From: <forged%d@junk.example.net>\r\nTo: host+g1-t-zzzzzzzzzzz@example.org\r\n"+
		"Subject: x\r\nMessage-ID: <junk-%d@junk.example.net>\r\n\r\nVOTE Alice\r\n", n, n))
}

// isGameMail is a Triage that knows one thread address.
func isGameMail(header []byte) bool { return bytes.Contains(header, []byte("host+g1-t-abcdefghijk@")) }

// Each message comes with its arrival: INTERNALDATE, never later than the
// moment it was read.
func TestMessagesComeWithTheirArrival(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	then := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := srv.DeliverAt("player1@players.example.net", hostAddr, mailText(1), then); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	deliver(t, srv, 2)
	rec := &recorder{}
	runWatcher(t, testConfig(t, srv.IMAPAddr()), rec.handle)
	waitFor(t, "two messages", func() bool { return rec.count() == 2 })
	got := rec.handled()
	if !got[0].Arrived.Equal(then) {
		t.Errorf("the message that arrived an hour ago came with %v, want %v", got[0].Arrived, then)
	}
	if a := got[1].Arrived; a.Before(before.Truncate(time.Second)) || a.After(time.Now()) {
		t.Errorf("the message that arrived just now came with %v", a)
	}
}

// Mail that Triage refuses goes after every message it accepts, however
// it lies in the mailbox, and comes marked as set aside; a flood of it is
// reported once, with its size.
func TestSetAsideMailGoesLastAndIsReportedOnce(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	for n := range 120 {
		if err := srv.Deliver(fmt.Sprintf("forged%d@junk.example.net", n), hostAddr, junkText(n)); err != nil {
			t.Fatal(err)
		}
	}
	deliver(t, srv, 1, 2, 3)
	rec := &recorder{}
	var mu sync.Mutex
	var floods []watcher.Flood
	var marks []time.Time
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.Triage = isGameMail
	cfg.FloodSize, cfg.FloodQuiet = 100, 200*time.Millisecond
	cfg.ArrivalSlack = 10 * time.Millisecond
	cfg.OnFlood = func(f watcher.Flood) {
		mu.Lock()
		floods = append(floods, f)
		mu.Unlock()
	}
	cfg.OnWatermark = func(at time.Time) {
		mu.Lock()
		marks = append(marks, at)
		mu.Unlock()
	}
	runWatcher(t, cfg, rec.handle)
	waitFor(t, "every message", func() bool { return rec.count() == 123 })
	got := rec.handled()
	for i, m := range got[:3] {
		if m.SetAside || !strings.HasPrefix(messageID(m.Raw), "<vote-") {
			t.Fatalf("message %d handled was %s (set aside: %v); the three game messages go first", i, messageID(m.Raw), m.SetAside)
		}
	}
	for _, m := range got[3:] {
		if !m.SetAside || !m.Flood {
			t.Fatalf("%s: set aside %v, flood %v; want both", messageID(m.Raw), m.SetAside, m.Flood)
		}
	}
	waitFor(t, "the flood's report, and a watermark past the game mail", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(floods) > 0 && len(marks) > 0 && !marks[len(marks)-1].Before(got[2].Arrived)
	})
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(floods) != 1 || floods[0].Messages != 120 {
		t.Errorf("floods reported: %+v, want one of 120 messages", floods)
	}
}

// Mail that arrived after the next deadline (the barrier) waits until the
// mail that arrived before it has been handled and the watermark has
// passed it, whatever their order in the mailbox.
func TestMailAfterTheBarrierWaitsForTheWatermark(t *testing.T) {
	srv := startServer(t, mailserver.Config{})
	barrier := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i, at := range []time.Duration{time.Second, -time.Second, -2 * time.Second} {
		if err := srv.DeliverAt(fmt.Sprintf("player%d@players.example.net", i+1), hostAddr, mailText(i+1), barrier.Add(at)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	applied := false // the handler's deadline, applied once the watermark passes it
	var order []string
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.Barrier = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if applied {
			return time.Time{}
		}
		return barrier
	}
	cfg.OnWatermark = func(at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !applied && !at.Before(barrier) {
			applied = true
			order = append(order, "deadline")
		}
	}
	rec := &recorder{}
	runWatcher(t, cfg, func(ctx context.Context, m watcher.Fetched) error {
		mu.Lock()
		order = append(order, messageID(m.Raw))
		mu.Unlock()
		return rec.handle(ctx, m)
	})
	waitFor(t, "three messages", func() bool { return rec.count() == 3 })
	mu.Lock()
	defer mu.Unlock()
	got := strings.Join(order, " ")
	if want := strings.Join([]string{msgID(2), msgID(3), "deadline", msgID(1)}, " "); got != want {
		t.Fatalf("order %s, want %s: the two that arrived before the deadline, the deadline, then the one after it", got, want)
	}
}
