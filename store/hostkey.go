package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/internal/hostkey"
)

// ErrKeyMismatch: the host key is not the one the database was written with.
var ErrKeyMismatch = errors.New("the host key is not the one this database was written with")

// KeyFingerprint is the fingerprint of the host key the database was
// written with, "" when none is recorded (a new database, or one written
// before the host had a key).
func (s *Store) KeyFingerprint(ctx context.Context) (string, error) {
	var fp string
	err := s.read.QueryRowContext(ctx, `SELECT fingerprint FROM host_key WHERE id = 1`).Scan(&fp)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: host key: %w", err)
	}
	return fp, nil
}

// UseKey makes k the source of the store's tokens, once it is known to be
// the database's own: it records the key's fingerprint in a database that
// has none, and refuses, with ErrKeyMismatch, a key whose fingerprint is
// not the one recorded. recorded says whether it recorded it now.
func (s *Store) UseKey(ctx context.Context, k *hostkey.Key, now time.Time) (recorded bool, err error) {
	fp := k.Fingerprint()
	err = s.Update(ctx, func(tx *Tx) error {
		var have string
		err := tx.q.QueryRowContext(ctx, `SELECT fingerprint FROM host_key WHERE id = 1`).Scan(&have)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			recorded = true
			_, err = tx.q.ExecContext(ctx, `INSERT INTO host_key (id, fingerprint, since) VALUES (1, ?, ?)`, fp, toNanos(now))
			return err
		case err != nil:
			return err
		case have != fp:
			return fmt.Errorf("%w (the database's is %s, the key's %s)", ErrKeyMismatch, have, fp)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: host key: %w", err)
	}
	s.mu.Lock()
	s.key = k
	s.mu.Unlock()
	return recorded, nil
}

// tokenFor is the token numbered n of scope in game: derived from the host
// key, so that a host replaying its mailbox hands out the same tokens; from
// crypto/rand without a key.
func (tx *Tx) tokenFor(game, scope string, n int64) string {
	if tx.w.s.key == nil {
		return NewToken()
	}
	return tokenEncoding.EncodeToString(tx.w.s.key.Sum(game, scope, uint64(n))[:tokenBytes])
}
