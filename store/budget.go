package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Priorities of outgoing mail: when the sending budget is tight (the mail
// due is more than its room takes), lower numbers leave first, and within
// one priority mail leaves in the order it was queued. Otherwise all of
// it leaves in the order it was queued.
const (
	// PriorityGame is what the game cannot go on without: role mails,
	// night results, the close, dawn and end, deadline changes, answers to
	// refused commands, the referee's channel.
	PriorityGame = 0
	// PriorityNotice is tallies and reminders.
	PriorityNotice = 1
	// PriorityThread is the thread's posts and digests.
	PriorityThread = 2
	// PriorityReceipt is receipts of accepted commands.
	PriorityReceipt = 3
)

// Sent is one message the server accepted: when, and for how many
// recipients.
type Sent struct {
	At         time.Time
	Recipients int
}

// SentSince returns the messages accepted after since, oldest first.
func (r reader) SentSince(ctx context.Context, since time.Time) ([]Sent, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT sent_at, json_array_length(rcpts) FROM outbox
		WHERE status = 'sent' AND sent_at > ? ORDER BY sent_at`, toNanos(since))
	if err != nil {
		return nil, fmt.Errorf("store: sent mail: %w", err)
	}
	defer rows.Close()
	var out []Sent
	for rows.Next() {
		var at int64
		var s Sent
		if err := rows.Scan(&at, &s.Recipients); err != nil {
			return nil, fmt.Errorf("store: sent mail: %w", err)
		}
		s.At = fromNanos(at)
		out = append(out, s)
	}
	return out, rows.Err()
}

// Waiting counts the messages waiting to be sent, by kind: those pending
// and those being sent, read in one statement, so in one snapshot. A
// message goes back from sending to pending (a retry, or a restart that
// releases a dead process's claims), and two reads, one for each status,
// can miss it between them. A wait for a drained outbox asks this.
func (r reader) Waiting(ctx context.Context) (map[string]int, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT kind, count(*) FROM outbox WHERE status IN ('pending', 'sending') GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("store: waiting mail: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			return nil, fmt.Errorf("store: waiting mail: %w", err)
		}
		out[kind] = n
	}
	return out, rows.Err()
}

// SendingLimit is what the host knows of the mailbox's sending limit.
type SendingLimit struct {
	// Learned is the recipients the host had sent in the window when the
	// provider first refused for its limit; 0 for none.
	Learned   int
	LearnedAt time.Time
	// HeldSince is when the provider began refusing for its limit; zero
	// while mail flows. HeldReply is its reply.
	HeldSince time.Time
	HeldReply string
	// Holds counts the holds there have been, the one under way included.
	Holds int
}

// SendingLimit returns what the host knows of the mailbox's limit.
func (r reader) SendingLimit(ctx context.Context) (SendingLimit, error) {
	var l SendingLimit
	var at, held sql.NullInt64
	err := r.q.QueryRowContext(ctx, `SELECT learned, learned_at, held_since, held_reply, holds FROM sending_limit WHERE id = 1`).
		Scan(&l.Learned, &at, &held, &l.HeldReply, &l.Holds)
	if err != nil {
		return l, fmt.Errorf("store: sending limit: %w", err)
	}
	l.LearnedAt, l.HeldSince = fromNullNanos(at), fromNullNanos(held)
	return l, nil
}

// LearnLimit keeps n as the mailbox's limit in recipients per day.
func (tx *Tx) LearnLimit(ctx context.Context, n int, at time.Time) error {
	if _, err := tx.q.ExecContext(ctx, `UPDATE sending_limit SET learned = ?, learned_at = ? WHERE id = 1`, n, toNanos(at)); err != nil {
		return fmt.Errorf("store: learn the sending limit: %w", err)
	}
	return nil
}

// BeginHold records that the provider refuses mail for its limit since at,
// and reports whether this starts a hold (false: one was under way).
func (tx *Tx) BeginHold(ctx context.Context, at time.Time, reply string) (bool, error) {
	res, err := tx.q.ExecContext(ctx, `UPDATE sending_limit SET held_since = ?, held_reply = ?, holds = holds + 1 WHERE id = 1 AND held_since IS NULL`,
		toNanos(at), reply)
	if err != nil {
		return false, fmt.Errorf("store: begin a sending hold: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// EndHold records that the provider takes mail again, and returns when
// the hold began (zero if none was under way).
func (tx *Tx) EndHold(ctx context.Context) (time.Time, error) {
	var held sql.NullInt64
	if err := tx.q.QueryRowContext(ctx, `SELECT held_since FROM sending_limit WHERE id = 1`).Scan(&held); err != nil {
		return time.Time{}, fmt.Errorf("store: end a sending hold: %w", err)
	}
	if _, err := tx.q.ExecContext(ctx, `UPDATE sending_limit SET held_since = NULL, held_reply = '' WHERE id = 1`); err != nil {
		return time.Time{}, fmt.Errorf("store: end a sending hold: %w", err)
	}
	return fromNullNanos(held), nil
}

// LearnLimit runs Tx.LearnLimit in a transaction of its own.
func (s *Store) LearnLimit(ctx context.Context, n int, at time.Time) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.LearnLimit(ctx, n, at) })
}

// ClaimDueWithin is ClaimDue for a budget: it claims, in order, the due
// messages whose recipients fit in room, stopping at the first that does
// not, so that no message overtakes one queued before it. While the mail
// due is more than room takes, the order is by priority (see claimable).
func (tx *Tx) ClaimDueWithin(ctx context.Context, now time.Time, limit int, room Room) ([]OutMessage, error) {
	return tx.claimWithin(ctx, now, limit, room)
}

// ClaimDueWithin runs Tx.ClaimDueWithin in a transaction of its own,
// unsynced as ClaimDue's.
func (s *Store) ClaimDueWithin(ctx context.Context, now time.Time, limit int, room Room) (ms []OutMessage, err error) {
	err = s.updateUnsynced(ctx, func(tx *Tx) error {
		ms, err = tx.ClaimDueWithin(ctx, now, limit, room)
		return err
	})
	return ms, err
}

// BeginHold runs Tx.BeginHold in a transaction of its own.
func (s *Store) BeginHold(ctx context.Context, at time.Time, reply string) (started bool, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		started, err = tx.BeginHold(ctx, at, reply)
		return err
	})
	return started, err
}

// EndHold runs Tx.EndHold in a transaction of its own.
func (s *Store) EndHold(ctx context.Context) (since time.Time, err error) {
	err = s.Update(ctx, func(tx *Tx) error {
		since, err = tx.EndHold(ctx)
		return err
	})
	return since, err
}
