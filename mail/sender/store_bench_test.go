package sender_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// BenchmarkDrainStore measures working off a queue of backlog messages
// from the real store, per message, over four connections to the embedded
// server: what the outbox's bookkeeping (claiming due mail in order,
// recording each result) adds to sending. The queue length is the size of
// the backlog a host has after a busy moment; the cost per message should
// not grow with it.
func BenchmarkDrainStore(b *testing.B) {
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, Logger: discard})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	for _, backlog := range []int{200, 2000, 20000} {
		b.Run(fmt.Sprintf("backlog=%d", backlog), func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				b.StopTimer()
				st, err := store.Open(ctx, filepath.Join(b.TempDir(), "host.db"), store.Config{Logger: discard})
				if err != nil {
					b.Fatal(err)
				}
				if err := st.Update(ctx, func(tx *store.Tx) error {
					for i := range backlog {
						if _, err := tx.Enqueue(ctx, outMsg(i, fmt.Sprintf("p%d@example.org", i%25)), time.Now()); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				s, err := sender.New(sender.Config{URL: "smtp://" + srv.SMTPAddr(), Logger: discard}, st, nil)
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
