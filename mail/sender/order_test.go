package sender_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// Each recipient's mail reaches the SMTP server in the order it was
// queued, over several connections at once, with priorities that favour
// the later messages, and with temporary failures that make some of them
// wait for a retry: a message is never handed over before one queued
// earlier for the same recipient.
func TestEachRecipientsMailGoesInQueueOrder(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: discard})
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })

	const n, readers = 120, 6
	var (
		mu       sync.Mutex
		accepted = map[string][]int{} // recipient → message numbers, as accepted
	)
	var transactions atomic.Int64
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Fault: func(m mailserver.Delivery) mailserver.Fault {
		k := transactions.Add(1)
		time.Sleep(time.Duration(k%3) * time.Millisecond)
		if k%7 == 0 && k < 4*n {
			return mailserver.FaultTempFail
		}
		num, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(headerID(m.Data), "<m"), ".g1@host.example.org>"))
		mu.Lock()
		for _, to := range m.To {
			accepted[to] = append(accepted[to], num)
		}
		mu.Unlock()
		return mailserver.FaultNone
	}})

	// Later messages are more urgent: a close after the posts before it.
	err = st.Update(ctx, func(tx *store.Tx) error {
		for i := 1; i <= n; i++ {
			m := outMsg(i, fmt.Sprintf("p%d@example.org", i%readers))
			m.Priority = store.PriorityReceipt - (i*store.PriorityReceipt)/n
			if _, err := tx.Enqueue(ctx, m, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.BatchSize, cfg.Connections = 40, 4
	runSender(t, cfg, sendstore.Outbox(st))
	waitFor(t, "all sent", func() bool {
		sent, err := st.OutMessages(ctx, store.OutSent)
		if err != nil {
			t.Fatal(err)
		}
		return len(sent) == n
	})
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for to, nums := range accepted {
		total += len(nums)
		for i := 1; i < len(nums); i++ {
			if nums[i] < nums[i-1] {
				t.Errorf("%s was handed message %d after message %d: %v", to, nums[i-1], nums[i], nums)
				break
			}
		}
	}
	if total < n {
		t.Errorf("%d messages accepted, want %d", total, n)
	}
}

// Priority orders mail only while the budget is tight. With no budget, or
// one with room for all that is due, mail goes in the order it was
// queued, so a receipt does not wait behind the thread's copies queued
// after it. Once more is due than the budget takes now (here a
// messages_per_minute with room for three of ten), the most urgent goes
// first: the role mail queued last leads.
func TestPriorityOrdersMailOnlyUnderATightBudget(t *testing.T) {
	ctx := context.Background()
	// Ten messages to a reader each: six posts, a receipt, two posts,
	// a role mail.
	priorities := []int{
		store.PriorityThread, store.PriorityThread, store.PriorityThread,
		store.PriorityThread, store.PriorityThread, store.PriorityThread,
		store.PriorityReceipt, store.PriorityThread, store.PriorityThread,
		store.PriorityGame,
	}
	var inQueue []string
	for i := range priorities {
		inQueue = append(inQueue, outMsg(i+1).MessageID)
	}
	for _, tc := range []struct {
		name   string
		ledger bool
		budget sender.Budget
		want   []string
	}{
		{"no budget", false, sender.Budget{}, inQueue},
		{"room for all", true, sender.Budget{RecipientsPerDay: 100, MessagesPerMinute: 50}, inQueue},
		{"tight", true, sender.Budget{MessagesPerMinute: 3, Minute: time.Hour},
			[]string{outMsg(10).MessageID, outMsg(1).MessageID, outMsg(2).MessageID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got deliveries
			srv := startServer(t, mailserver.Config{AutoCreateUsers: true, OnMessage: got.add})
			st := openStore(t)
			enqueuePriorities(t, st, 1, priorities...)
			cfg := testConfig(t, srv.SMTPAddr())
			cfg.Connections = 1
			if tc.ledger {
				cfg.Ledger, cfg.Budget = sendstore.Ledger(st), tc.budget
			}
			s, err := sender.New(cfg, sendstore.Outbox(st), time.Now)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SendDue(ctx); err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, d := range got.all() {
				order = append(order, headerID(d.Data))
			}
			if fmt.Sprint(order) != fmt.Sprint(tc.want) {
				t.Errorf("handed over\n %v\nwant\n %v", order, tc.want)
			}
		})
	}
}
