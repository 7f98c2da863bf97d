package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// synchronous is the writer connection's synchronous setting as a
// transaction sees it: 2 is FULL, 1 NORMAL.
func synchronous(ctx context.Context, tx *Tx) (level int, err error) {
	err = tx.q.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&level)
	return level, err
}

// A claim of outgoing mail and the record of mail sent alone commit
// without waiting for the disk; every other transaction, the first after
// one of them included, waits for it, and a claim left unrecorded comes
// back after a restart.
func TestOnlyClaimsAndSentRecordsSkipTheWaitForTheDisk(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sync.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	want := func(what string, level int, run func(fn func(*Tx) error) error) {
		t.Helper()
		got := -1
		if err := run(func(tx *Tx) (err error) { got, err = synchronous(ctx, tx); return err }); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != level {
			t.Errorf("%s ran with synchronous=%d, want %d", what, got, level)
		}
	}
	durable := func(fn func(*Tx) error) error { return s.Update(ctx, fn) }
	unsynced := func(fn func(*Tx) error) error { return s.updateUnsynced(ctx, fn) }
	want("the first update", 2, durable)
	want("an unsynced update", 1, unsynced)
	want("the update after it", 2, durable)
	want("two unsynced updates in a row", 1, func(fn func(*Tx) error) error {
		if err := unsynced(func(*Tx) error { return nil }); err != nil {
			return err
		}
		return unsynced(fn)
	})
	want("an update after two", 2, durable)

	update(t, s, func(ctx context.Context, tx *Tx) error {
		// To two readers: a claimed message holds back later mail to its
		// recipients.
		for i, id := range []string{"<c1@host>", "<c2@host>"} {
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
				To: []string{fmt.Sprintf("reader%d@example.org", i)}, Raw: rawMail(id, "post")}, t0); err != nil {
				return err
			}
		}
		return nil
	})
	ids := map[string]int64{}
	for _, claim := range []struct {
		name string
		run  func() ([]OutMessage, error)
	}{
		{"ClaimDue", func() ([]OutMessage, error) { return s.ClaimDue(ctx, t0, 1) }},
		{"ClaimDueWithin", func() ([]OutMessage, error) { return s.ClaimDueWithin(ctx, t0, 1, Unlimited) }},
	} {
		got, err := claim.run()
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %d messages, %v", claim.name, len(got), err)
		}
		ids[got[0].MessageID] = got[0].ID
		if !s.unsynced {
			t.Errorf("%s waited for the disk", claim.name)
		}
		want("the update after "+claim.name, 2, durable)
	}

	// The second claim's message is recorded as sent, the first's as to
	// be tried again: only the record of mail sent skips the wait.
	sent, err := s.ClaimDue(ctx, t0, 10)
	if err != nil || len(sent) != 0 {
		t.Fatalf("both messages are claimed already, yet ClaimDue found %d: %v", len(sent), err)
	}
	if err := s.MarkAllSent(ctx, []int64{ids["<c2@host>"]}, t0); err != nil {
		t.Fatal(err)
	}
	if !s.unsynced {
		t.Errorf("MarkAllSent waited for the disk")
	}
	if err := s.MarkRetry(ctx, ids["<c1@host>"], t0, "421 try later"); err != nil {
		t.Fatal(err)
	}
	if s.unsynced {
		t.Errorf("MarkRetry did not wait for the disk")
	}

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	got, err := s.ClaimDue(ctx, t0, 10)
	if err != nil || len(got) != 1 || got[0].MessageID != "<c1@host>" {
		t.Errorf("after a restart the message to try again is not due alone: %d claimed, %v", len(got), err)
	}
}
