package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// The requests a confirmation can hold.
const (
	ConfirmNewGame = "new game"
	ConfirmJoin    = "join"
)

// Confirmation is a NEW GAME or JOIN held until its sender replies to the
// one-time address that names Token.
type Confirmation struct {
	Token   string
	Game    string
	Address string
	// Verb is ConfirmNewGame or ConfirmJoin.
	Verb string
	// Name is the JOIN's name, or the game's for NEW GAME.
	Name      string
	CreatedAt time.Time
	ExpiresAt time.Time
	// UsedAt is when the reply came; zero while it has not.
	UsedAt time.Time
}

// HoldForConfirmation stores a request under a fresh token, which it
// returns, valid until expires.
func (tx *Tx) HoldForConfirmation(ctx context.Context, c Confirmation, now, expires time.Time) (Confirmation, error) {
	// Numbered by the requests held for the game, as participants' tokens
	// are, so that a host replaying its mailbox holds them under the same.
	var held int64
	if err := tx.q.QueryRowContext(ctx, `SELECT count(*) FROM confirmations WHERE game = ?`, c.Game).Scan(&held); err != nil {
		return Confirmation{}, fmt.Errorf("store: hold %s in %s for confirmation: %w", c.Verb, c.Game, err)
	}
	c.Token, c.CreatedAt, c.ExpiresAt, c.UsedAt = tx.tokenFor(c.Game, "confirm", held), fromNanos(toNanos(now)), fromNanos(toNanos(expires)), time.Time{}
	if _, err := tx.q.ExecContext(ctx, `INSERT INTO confirmations
		(token, game, address, verb, name, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.Token, c.Game, NormalizeAddress(c.Address), c.Verb, c.Name, toNanos(now), toNanos(expires)); err != nil {
		return Confirmation{}, fmt.Errorf("store: hold %s in %s for confirmation: %w", c.Verb, c.Game, err)
	}
	c.Address = NormalizeAddress(c.Address)
	return c, nil
}

// Confirmation reads the request held under token in game; ErrNotFound
// when there is none.
func (tx *Tx) Confirmation(ctx context.Context, game, token string) (Confirmation, error) {
	var c Confirmation
	var created, expires int64
	var used sql.NullInt64
	err := tx.q.QueryRowContext(ctx, `SELECT token, game, address, verb, name, created_at, expires_at, used_at
		FROM confirmations WHERE token = ? AND game = ?`, token, game).
		Scan(&c.Token, &c.Game, &c.Address, &c.Verb, &c.Name, &created, &expires, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return Confirmation{}, ErrNotFound
	}
	if err != nil {
		return Confirmation{}, fmt.Errorf("store: confirmation in %s: %w", game, err)
	}
	c.CreatedAt, c.ExpiresAt = fromNanos(created), fromNanos(expires)
	if used.Valid {
		c.UsedAt = fromNanos(used.Int64)
	}
	return c, nil
}

// UseConfirmation marks a held request as confirmed, so that a second
// reply to its address applies nothing.
func (tx *Tx) UseConfirmation(ctx context.Context, token string, now time.Time) error {
	if _, err := tx.q.ExecContext(ctx, `UPDATE confirmations SET used_at = ? WHERE token = ? AND used_at IS NULL`,
		toNanos(now), token); err != nil {
		return fmt.Errorf("store: use confirmation: %w", err)
	}
	return nil
}
