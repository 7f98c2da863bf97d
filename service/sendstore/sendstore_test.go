package sendstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// TestAdaptsTheStore: what the sender claims through the adapters is the
// store's rows, field for field; a budget's room limits the claim as the
// store's own room does; what is marked sent is counted in the ledger.
func TestAdaptsTheStore(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "host.db"), store.Config{Logger: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	err = st.Update(ctx, func(tx *store.Tx) error {
		for i, to := range [][]string{{"a@example.org"}, {"b@example.org", "c@example.org"}} {
			id := fmt.Sprintf("<m%d@example.org>", i+1)
			m := store.OutMessage{MessageID: id, Game: "g1", Kind: "thread",
				From: "host@example.org", To: to, Raw: []byte("Message-Id: " + id + "\r\n\r\nbody\r\n")}
			if _, err := tx.Enqueue(ctx, m, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ledger := sendstore.Ledger(st)
	got, err := ledger.ClaimDueWithin(ctx, now.Add(time.Second), 10, sender.Room{Recipients: 1, Messages: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].MessageID != "<m1@example.org>" || got[0].Game != "g1" || got[0].Kind != "thread" ||
		got[0].From != "host@example.org" || !slices.Equal(got[0].To, []string{"a@example.org"}) ||
		string(got[0].Raw) != "Message-Id: <m1@example.org>\r\n\r\nbody\r\n" || got[0].ID == 0 {
		t.Fatalf("claimed within a room of one recipient: %+v", got)
	}
	rest, err := sendstore.Outbox(st).ClaimDue(ctx, now.Add(time.Second), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].MessageID != "<m2@example.org>" || len(rest[0].To) != 2 {
		t.Fatalf("claimed the rest: %+v", rest)
	}
	if back := sendstore.OutMessage(rest[0]); back.ID != rest[0].ID || back.MessageID != rest[0].MessageID {
		t.Errorf("back to the store's type: %+v", back)
	}
	if err := sendstore.Outbox(st).MarkAllSent(ctx, []int64{got[0].ID, rest[0].ID}, now.Add(2*time.Second)); err != nil {
		t.Fatal(err)
	}
	sent, err := ledger.SentSince(ctx, now.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 || sent[0].Recipients+sent[1].Recipients != 3 {
		t.Errorf("sent since: %+v, want 2 messages to 3 recipients", sent)
	}
	if err := ledger.LearnLimit(ctx, 3, now); err != nil {
		t.Fatal(err)
	}
	if lim, err := ledger.SendingLimit(ctx); err != nil || lim.Learned != 3 {
		t.Errorf("the limit learned: %+v, %v", lim, err)
	}
}
