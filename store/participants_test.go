package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestKeptParticipantsFollowTheTable: the participants write transactions
// find by token or write are kept between transactions, and every lookup
// answers as the table would at that moment: a rename, a replacement, a
// new participant show at once, in the transaction that made them and in
// the next; a change rolled back, whole or to a savepoint, never shows; a
// token not found is not kept; a change to one participant leaves the
// others kept.
func TestKeptParticipantsFollowTheTable(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustCreateGame(t, s, "g1")
	mustCreateGame(t, s, "g2")
	var alice, carol Participant
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		if carol, err = tx.AddParticipant(ctx, "g2", "Carol", "carol@example.org", KindPlayer, t0); err != nil {
			return err
		}
		alice, err = tx.AddParticipant(ctx, "g1", "Alice", "alice@example.org", KindPlayer, t0)
		return err
	})
	// keptAsTheTable checks that what is kept of p is the table's row,
	// read outside any write transaction.
	keptAsTheTable := func(when string, p Participant) {
		t.Helper()
		kept, ok := s.active.get(p.Game, p.Token)
		row, err := s.ActiveParticipantByToken(ctx, p.Game, p.Token)
		if !ok || err != nil || kept != row {
			t.Fatalf("%s: kept %+v (%t), the table holds %+v (%v)", when, kept, ok, row, err)
		}
	}
	// Added: kept as soon as the transaction commits.
	keptAsTheTable("added", alice)
	keptAsTheTable("added", carol)
	if len(s.active.byToken) != 2 {
		t.Fatalf("%d participants kept, want Alice and Carol", len(s.active.byToken))
	}
	// lookup asks in a transaction of its own, as the host does for each
	// message.
	lookup := func(token string) (Participant, error) {
		var p Participant
		err := s.Update(ctx, func(tx *Tx) error {
			var err error
			p, err = tx.ActiveParticipantByToken(ctx, "g1", token)
			return err
		})
		return p, err
	}
	for range 2 { // found in the table, then kept
		if p, err := lookup(strings.ToUpper(alice.Token)); err != nil || p != alice {
			t.Fatalf("lookup: %+v, %v; want %+v", p, err, alice)
		}
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, err := tx.ActiveParticipantByToken(ctx, "g2", carol.Token)
		return err
	})
	if len(s.active.byToken) != 2 {
		t.Fatalf("%d participants kept, want Alice and Carol", len(s.active.byToken))
	}

	// A rename shows in its own transaction and after it.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetParticipantName(ctx, "g1", alice.Token, "Alicia"); err != nil {
			return err
		}
		p, err := tx.ActiveParticipantByToken(ctx, "g1", alice.Token)
		if err != nil || p.Name != "Alicia" {
			t.Errorf("in the renaming transaction: %+v, %v", p, err)
		}
		return nil
	})
	keptAsTheTable("renamed", Participant{Game: "g1", Token: alice.Token})
	if p, err := lookup(alice.Token); err != nil || p.Name != "Alicia" {
		t.Fatalf("after the rename: %+v, %v", p, err)
	}
	if _, kept := s.active.get("g2", carol.Token); !kept {
		t.Fatal("renaming Alice forgot Carol, of another game")
	}

	// A replacement that rolls back leaves Alicia active; the new
	// participant it added is not found.
	var bob Participant
	errUndo := errors.New("undo")
	err := s.Update(ctx, func(tx *Tx) error {
		if err := tx.SetParticipantStatus(ctx, "g1", alice.Token, StatusReplaced); err != nil {
			return err
		}
		var err error
		if bob, err = tx.AddParticipant(ctx, "g1", "Bob", "bob@example.org", KindPlayer, t0); err != nil {
			return err
		}
		if _, err := tx.ActiveParticipantByToken(ctx, "g1", alice.Token); !errors.Is(err, ErrNotFound) {
			t.Errorf("replaced, in its own transaction: %v, want ErrNotFound", err)
		}
		if p, err := tx.ActiveParticipantByToken(ctx, "g1", bob.Token); err != nil || p != bob {
			t.Errorf("the new participant in its own transaction: %+v, %v", p, err)
		}
		return errUndo
	})
	if !errors.Is(err, errUndo) {
		t.Fatalf("Update: %v", err)
	}
	if p, err := lookup(alice.Token); err != nil || p.Name != "Alicia" {
		t.Fatalf("after the rolled-back replacement: %+v, %v", p, err)
	}
	if _, err := lookup(bob.Token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a participant rolled back is found: %v", err)
	}
	keptAsTheTable("after the rolled-back replacement", Participant{Game: "g1", Token: alice.Token})

	// A message rolled back to its savepoint, in a group that commits:
	// what it added is neither kept nor found, what it renamed is kept
	// as it was; what the message before it added is kept.
	var dave, erin Participant
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		if erin, err = tx.AddParticipant(ctx, "g1", "Erin", "erin@example.org", KindPlayer, t0); err != nil {
			return err
		}
		sp, err := tx.Savepoint(ctx)
		if err != nil {
			return err
		}
		if dave, err = tx.AddParticipant(ctx, "g1", "Dave", "dave@example.org", KindPlayer, t0); err != nil {
			return err
		}
		if err := tx.SetParticipantName(ctx, "g1", alice.Token, "Al"); err != nil {
			return err
		}
		return sp.Rollback(ctx)
	})
	keptAsTheTable("added before a savepoint rolled back", erin)
	if _, kept := s.active.get("g1", dave.Token); kept {
		t.Fatal("a participant added in a savepoint rolled back is kept")
	}
	if _, err := lookup(dave.Token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a participant added in a savepoint rolled back is found: %v", err)
	}
	keptAsTheTable("renamed in a savepoint rolled back", Participant{Game: "g1", Token: alice.Token})
	if p, _ := lookup(alice.Token); p.Name != "Alicia" {
		t.Fatalf("a rename rolled back to its savepoint shows: %+v", p)
	}

	// Replaced for good: the token stops working.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		return tx.SetParticipantStatus(ctx, "g1", alice.Token, StatusReplaced)
	})
	if _, err := lookup(alice.Token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replaced: %v, want ErrNotFound", err)
	}

	// Made-up tokens are not kept.
	for _, tok := range []string{"aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"} {
		if _, err := lookup(tok); !errors.Is(err, ErrNotFound) {
			t.Fatalf("made-up token %s: %v", tok, err)
		}
	}
	if _, kept := s.active.get("g1", alice.Token); kept || len(s.active.byToken) != 2 {
		t.Fatalf("%d participants kept after Alice was replaced and made-up tokens looked up, want Carol and Erin", len(s.active.byToken))
	}
}
