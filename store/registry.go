package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// NormalizeAddress is the registry's key for a mail address: trimmed and
// lower-cased. Local parts are case-sensitive in theory and never in
// practice; one player must not get two records.
func NormalizeAddress(addr string) string {
	return strings.ToLower(strings.TrimSpace(addr))
}

// PlayerRecord is what the registry knows about an address across games.
type PlayerRecord struct {
	Address      string
	Bounces      int
	LastBounceAt time.Time
	LastBounce   string
}

// RecordBounce counts a bounce against an address and returns the new
// count.
func (tx *Tx) RecordBounce(ctx context.Context, address, reason string, now time.Time) (int, error) {
	var n int
	err := tx.q.QueryRowContext(ctx, `INSERT INTO players (address, bounces, last_bounce_at, last_bounce)
		VALUES (?, 1, ?, ?)
		ON CONFLICT (address) DO UPDATE SET bounces = bounces + 1,
			last_bounce_at = excluded.last_bounce_at, last_bounce = excluded.last_bounce
		RETURNING bounces`, NormalizeAddress(address), toNanos(now), reason).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: record bounce for %s: %w", address, err)
	}
	return n, nil
}

// ResetBounces sets an address's bounce count back to zero, e.g. once mail
// to it gets through again.
func (tx *Tx) ResetBounces(ctx context.Context, address string) error {
	_, err := tx.q.ExecContext(ctx, `UPDATE players SET bounces = 0 WHERE address = ?`, NormalizeAddress(address))
	if err != nil {
		return fmt.Errorf("store: reset bounces of %s: %w", address, err)
	}
	return nil
}

// PlayerRecord returns the registry's record of an address; an address it
// has never seen has a zero record.
func (r reader) PlayerRecord(ctx context.Context, address string) (PlayerRecord, error) {
	rec := PlayerRecord{Address: NormalizeAddress(address)}
	var last sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT bounces, last_bounce_at, last_bounce FROM players WHERE address = ?`, rec.Address).
		Scan(&rec.Bounces, &last, &rec.LastBounce)
	if errors.Is(err, sql.ErrNoRows) {
		return rec, nil
	}
	if err != nil {
		return PlayerRecord{}, fmt.Errorf("store: player record of %s: %w", address, err)
	}
	rec.LastBounceAt = fromNullNanos(last)
	return rec, nil
}

// Suspension keeps an address out of its next game.
type Suspension struct {
	ID      int64
	Address string
	Reason  string
	// Game is the game that caused it, "" if none.
	Game      string
	CreatedAt time.Time
	// ConsumedBy is the game the suspension was served in; "" while it
	// is still to be served.
	ConsumedBy string
	ConsumedAt time.Time
}

// Suspend suspends an address from its next game.
func (tx *Tx) Suspend(ctx context.Context, address, reason, game string, now time.Time) (Suspension, error) {
	s := Suspension{Address: NormalizeAddress(address), Reason: reason, Game: game, CreatedAt: fromNanos(toNanos(now))}
	res, err := tx.q.ExecContext(ctx, `INSERT INTO suspensions (address, reason, game, created_at) VALUES (?, ?, ?, ?)`,
		s.Address, s.Reason, nullString(game), toNanos(now))
	if err != nil {
		return Suspension{}, fmt.Errorf("store: suspend %s: %w", address, err)
	}
	if s.ID, err = res.LastInsertId(); err != nil {
		return Suspension{}, fmt.Errorf("store: suspend %s: %w", address, err)
	}
	return s, nil
}

// ConsumeSuspension marks a suspension served in a game (the one the
// address was kept out of).
func (tx *Tx) ConsumeSuspension(ctx context.Context, id int64, game string, now time.Time) error {
	res, err := tx.q.ExecContext(ctx, `UPDATE suspensions SET consumed_by = ?, consumed_at = ?
		WHERE id = ? AND consumed_by IS NULL`, game, toNanos(now), id)
	if err != nil {
		return fmt.Errorf("store: consume suspension %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: consume suspension %d: no such unserved suspension: %w", id, ErrNotFound)
	}
	return nil
}

// ActiveSuspensions returns an address's suspensions not yet served,
// oldest first.
func (r reader) ActiveSuspensions(ctx context.Context, address string) ([]Suspension, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT id, address, reason, game, created_at, consumed_by, consumed_at
		FROM suspensions WHERE address = ? AND consumed_by IS NULL ORDER BY id`, NormalizeAddress(address))
	if err != nil {
		return nil, fmt.Errorf("store: suspensions of %s: %w", address, err)
	}
	defer rows.Close()
	var out []Suspension
	for rows.Next() {
		var s Suspension
		var game, consumedBy sql.NullString
		var created int64
		var consumedAt sql.NullInt64
		if err := rows.Scan(&s.ID, &s.Address, &s.Reason, &game, &created, &consumedBy, &consumedAt); err != nil {
			return nil, fmt.Errorf("store: suspensions of %s: %w", address, err)
		}
		s.Game, s.ConsumedBy = game.String, consumedBy.String
		s.CreatedAt, s.ConsumedAt = fromNanos(created), fromNullNanos(consumedAt)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: suspensions of %s: %w", address, err)
	}
	return out, nil
}
