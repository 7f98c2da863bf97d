package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A savepoint rolled back undoes only what was done since it: the rows
// written before it, and in the savepoints released before it, commit
// with the transaction. That is what lets one transaction hold a group of
// messages of which one fails.
func TestSavepointRollsBackOnlyItsOwnPart(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	in := func(uid uint32, id string) Inbound {
		return Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: uid, MessageID: id, Raw: rawMail(id, "VOTE Bob"), ReceivedAt: now}
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for _, c := range []struct {
			uid  uint32
			id   string
			fail bool
		}{{1, "<a@x>", false}, {2, "<b@x>", true}, {3, "<c@x>", false}} {
			sp, err := tx.Savepoint(ctx)
			if err != nil {
				return err
			}
			if _, _, err := tx.RecordInbound(ctx, in(c.uid, c.id)); err != nil {
				return err
			}
			// A nested savepoint, released, belongs to the outer one.
			inner, err := tx.Savepoint(ctx)
			if err != nil {
				return err
			}
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: "<out" + c.id[1:], Kind: "confirm", From: "host@example.org",
				To: []string{"p@example.org"}, Raw: rawMail("<out"+c.id[1:], "answer")}, now); err != nil {
				return err
			}
			if err := inner.Release(ctx); err != nil {
				return err
			}
			if c.fail {
				if err := sp.Rollback(ctx); err != nil {
					return err
				}
				continue
			}
			if err := sp.Release(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	for _, c := range []struct {
		uid  uint32
		want bool
	}{{1, true}, {2, false}, {3, true}} {
		_, err := s.InboundByUID(ctx, "INBOX", 1, c.uid)
		if got := err == nil; got != c.want {
			t.Errorf("message %d kept: %v, want %v (%v)", c.uid, got, c.want, err)
		}
	}
	out, err := s.OutMessages(ctx, "")
	if err != nil || len(out) != 2 {
		t.Fatalf("outbox: %d messages, want 2 (the failed one's answer undone): %v", len(out), err)
	}
	// Rolling back or releasing twice is harmless.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		sp, err := tx.Savepoint(ctx)
		if err != nil {
			return err
		}
		return errors.Join(sp.Rollback(ctx), sp.Rollback(ctx), sp.Release(ctx))
	})
}
