package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SendingPlan is the host's latest forecast for one game's round against
// the sending budget, and the plan it chose.
type SendingPlan struct {
	Game      string
	PlannedAt time.Time
	// Round names the round ("Day 2", "Night 1").
	Round string
	// Interval is the digest interval the plan sets for everyone; zero
	// when the thread goes as the setup and the players chose.
	Interval time.Duration
	// AsChosen is the recipients the rest of the round would take as the
	// players chose; Planned those it takes under the plan.
	AsChosen, Planned int
	// Room is what the budget leaves for the game until the round
	// closes, after what was sent and what waits; Limit the budget.
	Room, Limit int
	ClosesAt    time.Time
}

// SavePlan keeps a game's latest forecast, replacing the one before.
func (t *Tx) SavePlan(ctx context.Context, p SendingPlan) error {
	_, err := t.w.ExecContext(ctx, `INSERT INTO sending_plans
		(game, planned_at, round, interval_ns, as_chosen, planned, room, recipient_limit, closes_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (game) DO UPDATE SET planned_at = excluded.planned_at, round = excluded.round,
			interval_ns = excluded.interval_ns, as_chosen = excluded.as_chosen, planned = excluded.planned,
			room = excluded.room, recipient_limit = excluded.recipient_limit, closes_at = excluded.closes_at`,
		p.Game, toNanos(p.PlannedAt), p.Round, int64(p.Interval), p.AsChosen, p.Planned, p.Room, p.Limit, toNanos(p.ClosesAt))
	if err != nil {
		return fmt.Errorf("store: save the sending plan of %s: %w", p.Game, err)
	}
	return nil
}

// Plan returns a game's latest forecast; ok is false when the host has
// made none (no budget known, or the game not under way).
func (r reader) Plan(ctx context.Context, game string) (p SendingPlan, ok bool, err error) {
	var at, every, closes int64
	err = r.q.QueryRowContext(ctx, `SELECT game, planned_at, round, interval_ns, as_chosen, planned, room, recipient_limit, closes_at
		FROM sending_plans WHERE game = ?`, game).
		Scan(&p.Game, &at, &p.Round, &every, &p.AsChosen, &p.Planned, &p.Room, &p.Limit, &closes)
	if errors.Is(err, sql.ErrNoRows) {
		return SendingPlan{}, false, nil
	}
	if err != nil {
		return SendingPlan{}, false, fmt.Errorf("store: the sending plan of %s: %w", game, err)
	}
	p.PlannedAt, p.Interval, p.ClosesAt = fromNanos(at), time.Duration(every), fromNanos(closes)
	return p, true, nil
}

// WaitingRecipients is the recipients of the mail not yet sent.
func (r reader) WaitingRecipients(ctx context.Context) (int, error) {
	var n int
	err := r.q.QueryRowContext(ctx, `SELECT coalesce(sum(json_array_length(rcpts)), 0) FROM outbox
		WHERE status IN ('pending', 'sending')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: recipients waiting: %w", err)
	}
	return n, nil
}

// HeldFor counts a game's mail for the town (OutMessage.Town) queued up
// to before that has not been sent: the mail its town needs before a
// deadline, when the sending limit holds it back (T4). Most is the largest
// number of recipients among them. The game's other mail (the mafia list,
// answers, private news, the referee's) is not counted: whether it waits
// is no one's business but its readers'.
func (r reader) HeldFor(ctx context.Context, game string, before time.Time) (n, most int, err error) {
	err = r.q.QueryRowContext(ctx, `SELECT count(*), coalesce(max(json_array_length(rcpts)), 0) FROM outbox
		WHERE game = ? AND status IN ('pending', 'sending') AND created_at <= ? AND town = 1`,
		game, toNanos(before)).Scan(&n, &most)
	if err != nil {
		return 0, 0, fmt.Errorf("store: mail of %s held back: %w", game, err)
	}
	return n, most, nil
}
