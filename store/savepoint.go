package store

import (
	"context"
	"fmt"
)

// Savepoint is a part of a transaction that can be undone alone: Update
// commits several messages in one transaction (one fsync for all of them,
// a group commit), and a message that fails is rolled back to its
// savepoint without losing the messages before it.
type Savepoint struct {
	tx   *Tx
	name string
	done bool
}

// Savepoint opens a savepoint in the transaction. Savepoints nest: one
// opened inside another is released or rolled back before it.
func (tx *Tx) Savepoint(ctx context.Context) (*Savepoint, error) {
	tx.savepoints++
	sp := &Savepoint{tx: tx, name: fmt.Sprintf("sp%d", tx.savepoints)}
	if _, err := tx.w.execBare(ctx, "SAVEPOINT "+sp.name); err != nil {
		return nil, fmt.Errorf("store: savepoint: %w", classify(err))
	}
	return sp, nil
}

// Release keeps what was done since the savepoint in the transaction,
// which still commits or rolls back as a whole.
func (sp *Savepoint) Release(ctx context.Context) error {
	if sp.done {
		return nil
	}
	sp.done = true
	if _, err := sp.tx.w.execBare(ctx, "RELEASE "+sp.name); err != nil {
		return fmt.Errorf("store: release savepoint: %w", classify(err))
	}
	return nil
}

// Rollback undoes what was done since the savepoint and closes it. An
// error means the transaction itself can no longer be trusted (SQLite may
// have rolled it back whole after an I/O error): the caller gives it up.
func (sp *Savepoint) Rollback(ctx context.Context) error {
	if sp.done {
		return nil
	}
	sp.done = true
	if _, err := sp.tx.w.execBare(ctx, "ROLLBACK TO "+sp.name); err != nil {
		return fmt.Errorf("store: roll back to savepoint: %w", classify(err))
	}
	if _, err := sp.tx.w.execBare(ctx, "RELEASE "+sp.name); err != nil {
		return fmt.Errorf("store: close savepoint: %w", classify(err))
	}
	return nil
}
