package sender_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// The sender drains the real store: messages enqueued before and while it
// runs (woken by the store's outbox signal) all go out through a server
// that fails for a while; a rejected one ends failed, with OnFailed.
func TestDrainsTheStoresOutbox(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })

	rejected := outMsg(7, "p7@example.org").MessageID
	var got deliveries
	var transactions atomic.Int64
	faults := []mailserver.Fault{mailserver.FaultTempFail, mailserver.FaultShutdown, mailserver.FaultDropAfterDelivery, mailserver.FaultDropBeforeDelivery}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add, Fault: func(m mailserver.Delivery) mailserver.Fault {
		if headerID(m.Data) == rejected {
			return mailserver.FaultReject
		}
		if n := transactions.Add(1); n <= 25 {
			return faults[n%int64(len(faults))]
		}
		return mailserver.FaultNone
	}})

	enqueue := func(from, to int) {
		t.Helper()
		err := st.Update(ctx, func(tx *store.Tx) error {
			for i := from; i <= to; i++ {
				if _, err := tx.Enqueue(ctx, outMsg(i, fmt.Sprintf("p%d@example.org", i)), time.Now()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("enqueue %d-%d: %v", from, to, err)
		}
	}
	enqueue(1, 10)

	var fails failures
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.OnFailed = fails.record
	s := runSender(t, cfg, sendstore.Outbox(st))
	stopKicks := make(chan struct{})
	kicksDone := make(chan struct{})
	go func() {
		defer close(kicksDone)
		for {
			select {
			case <-st.OutboxSignal():
				s.Kick()
			case <-stopKicks:
				return
			}
		}
	}()
	t.Cleanup(func() {
		close(stopKicks)
		<-kicksDone
	})

	enqueue(11, 20)
	sentOrFailed := func() bool {
		sent, err := st.OutMessages(ctx, store.OutSent)
		if err != nil {
			t.Fatal(err)
		}
		failed, err := st.OutMessages(ctx, store.OutFailed)
		if err != nil {
			t.Fatal(err)
		}
		return len(sent) == 19 && len(failed) == 1
	}
	waitFor(t, "19 sent and 1 failed", sentOrFailed)

	delivered := got.delivered()
	for i := 1; i <= 20; i++ {
		id := outMsg(i).MessageID
		if n := len(delivered[id]); (id == rejected) != (n == 0) {
			t.Errorf("%s delivered %d times", id, n)
		}
	}
	f := fails.list()
	var se *smtp.SMTPError
	if len(f) != 1 || f[0].msg.MessageID != rejected || f[0].msg.Game != "g1" || !errors.As(f[0].err, &se) || se.Code != 554 {
		t.Errorf("OnFailed calls %+v: want one for %s with a 554", f, rejected)
	}
	if st := s.Stats(); st.Retried == 0 || st.Sent != 19 || st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
}

// queuedStore opens a store whose outbox holds messages 1 to n, message i
// to p<to(i)>@example.org.
func queuedStore(t *testing.T, n int, to func(i int) int) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Update(ctx, func(tx *store.Tx) error {
		for i := 1; i <= n; i++ {
			if _, err := tx.Enqueue(ctx, outMsg(i, fmt.Sprintf("p%d@example.org", to(i))), time.Now()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return st
}

// recordingOutbox is the store, counting the calls that record sent
// messages; the first fail, as a full disk would.
type recordingOutbox struct {
	*store.Store
	mu    sync.Mutex
	calls [][]int64
	fail  int
}

func (o *recordingOutbox) MarkAllSent(ctx context.Context, ids []int64, now time.Time) error {
	o.mu.Lock()
	o.calls = append(o.calls, append([]int64(nil), ids...))
	fail := len(o.calls) <= o.fail
	o.mu.Unlock()
	if fail {
		return errors.New("disk I/O error")
	}
	return o.Store.MarkAllSent(ctx, ids, now)
}

// The messages a batch hands over are recorded together, in one
// transaction for all those sent since the last: when the batch claims
// more, and when it ends. When that fails, each is kept claimed (not sent
// again), the batch claims no more, and each is recorded before anything
// claimed later goes out.
func TestSentMessagesRecordedOncePerBatch(t *testing.T) {
	ctx := context.Background()
	const n = 30
	st := queuedStore(t, n, func(i int) int { return i })
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	ob := &recordingOutbox{Store: st, fail: 1}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 10, 2
	s, err := sender.New(cfg, sendstore.Outbox(ob), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendDue(ctx); err != nil {
		t.Fatalf("SendDue: %v", err)
	}
	sent, err := st.OutMessages(ctx, store.OutSent)
	if err != nil || len(sent) != n {
		t.Fatalf("%d of %d messages recorded as sent (%v)", len(sent), n, err)
	}
	for id, copies := range got.delivered() {
		if len(copies) != 1 {
			t.Errorf("%s delivered %d times, want once", id, len(copies))
		}
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	// The first record failed. The first claim held messages 1 to 10,
	// in queue order; those it failed to record are recorded one by one
	// before any message claimed later is.
	failed := ob.calls[0]
	alone := map[int64]bool{}
	for i, c := range ob.calls[1:] {
		if len(alone) < len(failed) && slices.ContainsFunc(c, func(id int64) bool { return id > int64(cfg.BatchSize) }) {
			t.Errorf("record %d, %v, holds mail claimed after the failed record %v was written again", i+1, c, failed)
		}
		if len(c) == 1 && slices.Contains(failed, c[0]) {
			alone[c[0]] = true
		}
	}
	if len(alone) != len(failed) {
		t.Errorf("of the failed record %v, %d were recorded again one by one", failed, len(alone))
	}
	// Recorded together: the failed ones aside, far fewer records than
	// messages.
	if rest := len(ob.calls) - 1 - len(failed); rest > n/5 {
		t.Errorf("%d records for %d messages: %v", rest, n, ob.calls)
	}
}

// claimingOutbox is the store, noting at each claim how many messages
// claimed before are still unrecorded: being handed over.
type claimingOutbox struct {
	*store.Store
	mu          sync.Mutex
	outstanding map[int64]bool
	claims      []int // messages outstanding at each claim
}

func (o *claimingOutbox) ClaimDue(ctx context.Context, now time.Time, limit int) ([]store.OutMessage, error) {
	o.mu.Lock()
	o.claims = append(o.claims, len(o.outstanding))
	o.mu.Unlock()
	msgs, err := o.Store.ClaimDue(ctx, now, limit)
	o.mu.Lock()
	for _, m := range msgs {
		o.outstanding[m.ID] = true
	}
	o.mu.Unlock()
	return msgs, err
}

func (o *claimingOutbox) MarkAllSent(ctx context.Context, ids []int64, now time.Time) error {
	err := o.Store.MarkAllSent(ctx, ids, now)
	if err == nil {
		o.mu.Lock()
		for _, id := range ids {
			delete(o.outstanding, id)
		}
		o.mu.Unlock()
	}
	return err
}

// With no budget to weigh, a batch claims the next messages while its
// last are still being handed over, instead of waiting for every
// connection to finish and for the outbox: each message still goes once,
// and each recipient's in the order queued.
func TestABatchClaimsMoreWhileItSends(t *testing.T) {
	ctx := context.Background()
	const n = 60
	// Six recipients, ten messages each, interleaved.
	st := queuedStore(t, n, func(i int) int { return i % 6 })
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	ob := &claimingOutbox{Store: st, outstanding: map[int64]bool{}}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 5, 3
	s, err := sender.New(cfg, sendstore.Outbox(ob), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SendDue(ctx); err != nil {
		t.Fatalf("SendDue: %v", err)
	}
	if sent, err := st.OutMessages(ctx, store.OutSent); err != nil || len(sent) != n {
		t.Fatalf("%d of %d messages recorded as sent (%v)", len(sent), n, err)
	}
	for id, copies := range got.delivered() {
		if len(copies) != 1 {
			t.Errorf("%s delivered %d times, want once", id, len(copies))
		}
	}
	last := map[string]int{}
	for _, d := range got.all() {
		var i int
		if id := headerID(d.Data); !d.Delivered {
			continue
		} else if _, err := fmt.Sscanf(id, "<m%d.", &i); err != nil {
			t.Fatalf("Message-ID %q: %v", id, err)
		}
		to := d.To[0]
		if i < last[to] {
			t.Errorf("message %d to %s after message %d", i, to, last[to])
		}
		last[to] = i
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	overlapped := 0
	for _, c := range ob.claims {
		if c > 0 {
			overlapped++
		}
	}
	if overlapped == 0 {
		t.Errorf("every claim waited for the mail claimed before it to be recorded: %v", ob.claims)
	}
}

// Mail that is due but may not go yet, held back behind a message to the
// same reader that waits for its retry, or too large for the budget's
// room, makes the sender wait until that may change: it does not open
// connection after connection meanwhile (before, it opened hundreds a
// second, which to a provider looks like the abuse its limits are for).
func TestWaitsWithoutConnectingWhileDueMailIsHeldBack(t *testing.T) {
	t.Parallel() // it waits on the sender's clock; other tests run meanwhile
	t.Run("behind a retry", func(t *testing.T) {
		var mu sync.Mutex
		transactions := 0
		srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Fault: func(mailserver.Delivery) mailserver.Fault {
			mu.Lock()
			defer mu.Unlock()
			if transactions++; transactions == 1 {
				return mailserver.FaultTempFail
			}
			return mailserver.FaultNone
		}})
		st := openStore(t)
		enqueueTo(t, st, [][]string{{"alice@example.org"}, {"alice@example.org"}})
		cfg := testConfig(t, srv.SMTPAddr())
		cfg.Connections = 1
		cfg.MinBackoff, cfg.MaxBackoff = 400*time.Millisecond, time.Second
		s := runSender(t, cfg, sendstore.Outbox(st))
		waitFor(t, "both sent", func() bool {
			sent, _ := st.OutMessages(context.Background(), store.OutSent)
			return len(sent) == 2
		})
		if c := s.Stats().Connects; c > 4 {
			t.Errorf("%d connections while the second message waited for the first one's retry; want a few", c)
		}
	})
	t.Run("too large for the room", func(t *testing.T) {
		srv := startServer(t, mailserver.Config{AutoCreateUsers: true})
		st := openStore(t)
		enqueueTo(t, st, [][]string{{"a@example.org", "b@example.org"}, {"c@example.org", "d@example.org"}})
		cfg := testConfig(t, srv.SMTPAddr())
		cfg.Ledger = sendstore.Ledger(st)
		cfg.Budget = sender.Budget{RecipientsPerDay: 3, Day: 400 * time.Millisecond}
		cfg.MinBackoff, cfg.MaxBackoff = time.Second, time.Second
		s := runSender(t, cfg, sendstore.Outbox(st))
		waitFor(t, "both sent", func() bool {
			sent, _ := st.OutMessages(context.Background(), store.OutSent)
			return len(sent) == 2
		})
		if c := s.Stats().Connects; c > 3 {
			t.Errorf("%d connections while the second message waited for room in the window; want a few", c)
		}
	})
}

// enqueueTo queues a message to each list of recipients, numbered from 1.
func enqueueTo(t *testing.T, st *store.Store, rcpts [][]string) {
	t.Helper()
	err := st.Update(context.Background(), func(tx *store.Tx) error {
		for i, to := range rcpts {
			if _, err := tx.Enqueue(context.Background(), outMsg(i+1, to...), time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
