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
	s := runSender(t, cfg, st)
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
	var _ sender.Outbox = st
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

// The messages a batch hands over are recorded together, one transaction
// for the batch. When that fails, each is kept claimed (not sent again)
// and recorded before the next batch goes out.
func TestSentMessagesRecordedOncePerBatch(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const n = 30
	if err := st.Update(ctx, func(tx *store.Tx) error {
		for i := 1; i <= n; i++ {
			if _, err := tx.Enqueue(ctx, outMsg(i, fmt.Sprintf("p%d@example.org", i)), time.Now()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var got deliveries
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
	ob := &recordingOutbox{Store: st, fail: 1}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 10, 2
	s, err := sender.New(cfg, ob, nil)
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
	// The failed batch of 10, then its 10 one by one, then two batches.
	var sizes []int
	for _, c := range ob.calls {
		sizes = append(sizes, len(c))
	}
	want := []int{10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 10, 10}
	if !slices.Equal(sizes, want) {
		t.Errorf("recorded in calls of %v messages, want %v", sizes, want)
	}
}
