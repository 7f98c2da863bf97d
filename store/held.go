package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// HeldStatus is where a held post is.
type HeldStatus string

// Held post statuses.
const (
	Held     HeldStatus = "held"
	Relayed  HeldStatus = "relayed"
	Rejected HeldStatus = "rejected"
)

// HeldPost is a post kept back for the referee to relay or reject.
type HeldPost struct {
	ID   int64
	Game string
	// Number is the per-game number the referee names ("RELAY 3").
	Number int
	// Author is the token of the participant who wrote it.
	Author string
	// InboundID is the inbound message it came in, 0 if none.
	InboundID int64
	Text      string
	// Reason says why it was held.
	Reason    string
	Status    HeldStatus
	CreatedAt time.Time
	DecidedAt time.Time
}

// HoldPost stores a post for the referee and gives it the game's next
// number.
func (tx *Tx) HoldPost(ctx context.Context, p HeldPost, now time.Time) (HeldPost, error) {
	err := tx.q.QueryRowContext(ctx, `SELECT coalesce(max(number), 0) + 1 FROM held_posts WHERE game = ?`, p.Game).
		Scan(&p.Number)
	if err != nil {
		return HeldPost{}, fmt.Errorf("store: hold post in %s: %w", p.Game, err)
	}
	inbound := sql.NullInt64{Int64: p.InboundID, Valid: p.InboundID != 0}
	res, err := tx.q.ExecContext(ctx, `INSERT INTO held_posts
		(game, number, author_token, inbox_id, text, reason, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, 'held', ?)`,
		p.Game, p.Number, p.Author, inbound, p.Text, p.Reason, toNanos(now))
	if err != nil {
		return HeldPost{}, fmt.Errorf("store: hold post in %s: %w", p.Game, err)
	}
	if p.ID, err = res.LastInsertId(); err != nil {
		return HeldPost{}, fmt.Errorf("store: hold post in %s: %w", p.Game, err)
	}
	p.Status, p.CreatedAt, p.DecidedAt = Held, fromNanos(toNanos(now)), time.Time{}
	return p, nil
}

// ErrDecided: the held post was relayed or rejected already.
var ErrDecided = errors.New("held post already decided")

// DecideHeldPost relays or rejects a held post; ErrDecided if it is no
// longer held, ErrNotFound if there is no such post.
func (tx *Tx) DecideHeldPost(ctx context.Context, game string, number int, status HeldStatus, now time.Time) (HeldPost, error) {
	if status != Relayed && status != Rejected {
		return HeldPost{}, fmt.Errorf("store: decide held post %s/%d: invalid status %q", game, number, status)
	}
	p, err := tx.HeldPost(ctx, game, number)
	if err != nil {
		return HeldPost{}, err
	}
	if p.Status != Held {
		return p, fmt.Errorf("store: held post %s/%d is %s: %w", game, number, p.Status, ErrDecided)
	}
	if _, err := tx.q.ExecContext(ctx, `UPDATE held_posts SET status = ?, decided_at = ? WHERE id = ?`,
		string(status), toNanos(now), p.ID); err != nil {
		return HeldPost{}, fmt.Errorf("store: decide held post %s/%d: %w", game, number, err)
	}
	p.Status, p.DecidedAt = status, fromNanos(toNanos(now))
	return p, nil
}

const heldCols = `id, game, number, author_token, inbox_id, text, reason, status, created_at, decided_at`

func scanHeld(sc interface{ Scan(...any) error }) (HeldPost, error) {
	var p HeldPost
	var inbound, decided sql.NullInt64
	var status string
	var created int64
	if err := sc.Scan(&p.ID, &p.Game, &p.Number, &p.Author, &inbound, &p.Text, &p.Reason, &status, &created, &decided); err != nil {
		return HeldPost{}, err
	}
	p.InboundID, p.Status = inbound.Int64, HeldStatus(status)
	p.CreatedAt, p.DecidedAt = fromNanos(created), fromNullNanos(decided)
	return p, nil
}

// HeldPost returns a game's held post by number.
func (r reader) HeldPost(ctx context.Context, game string, number int) (HeldPost, error) {
	p, err := scanHeld(r.q.QueryRowContext(ctx, `SELECT `+heldCols+` FROM held_posts WHERE game = ? AND number = ?`, game, number))
	if errors.Is(err, sql.ErrNoRows) {
		return HeldPost{}, fmt.Errorf("store: held post %s/%d: %w", game, number, ErrNotFound)
	}
	if err != nil {
		return HeldPost{}, fmt.Errorf("store: held post %s/%d: %w", game, number, err)
	}
	return p, nil
}

// HeldPosts returns a game's held posts with a status ("" for all), by
// number.
func (r reader) HeldPosts(ctx context.Context, game string, status HeldStatus) ([]HeldPost, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+heldCols+` FROM held_posts
		WHERE game = ? AND (? = '' OR status = ?) ORDER BY number`, game, string(status), string(status))
	if err != nil {
		return nil, fmt.Errorf("store: held posts of %s: %w", game, err)
	}
	defer rows.Close()
	var ps []HeldPost
	for rows.Next() {
		p, err := scanHeld(rows)
		if err != nil {
			return nil, fmt.Errorf("store: held posts of %s: %w", game, err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: held posts of %s: %w", game, err)
	}
	return ps, nil
}
