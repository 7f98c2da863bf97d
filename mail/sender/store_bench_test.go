package sender_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// BenchmarkDrainStore measures working off a queue of backlog messages
// from the real store, per message, over four connections to the embedded
// server: what the outbox's bookkeeping (claiming due mail in order,
// recording each result) adds to sending. The queue length is the size of
// the backlog a host has after a busy moment; the cost per message should
// not grow with it. The queue is of one priority, or mixes them as a day
// does (answers to commands between the copies of posts).
func BenchmarkDrainStore(b *testing.B) {
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, c := range []struct {
		backlog int
		mixed   bool
	}{{200, false}, {2000, false}, {20000, false}, {2000, true}, {20000, true}} {
		backlog := c.backlog
		name := fmt.Sprintf("backlog=%d", backlog)
		if c.mixed {
			name += "/mixed"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				b.StopTimer()
				st, err := store.Open(ctx, filepath.Join(b.TempDir(), "host.db"), store.Config{Logger: discard})
				if err != nil {
					b.Fatal(err)
				}
				if err := st.Update(ctx, func(tx *store.Tx) error {
					for i := range backlog {
						m := outMsg(i, fmt.Sprintf("p%d@example.org", i%25))
						if c.mixed && i%5 == 0 {
							m.Kind, m.Priority = "confirm", store.PriorityReceipt
						} else if c.mixed {
							m.Kind, m.Priority = "thread", store.PriorityThread
						}
						if _, err := tx.Enqueue(ctx, m, time.Now()); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				s, err := sender.New(sender.Config{URL: "smtp://" + srv.SMTPAddr(), Logger: discard}, sendstore.Outbox(st), nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := s.SendDue(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, ok, err := st.NextAttempt(ctx); err != nil || ok {
					b.Fatalf("mail left in the outbox (%v)", err)
				}
				st.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*backlog), "ns/msg")
		})
	}
}
