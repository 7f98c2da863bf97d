package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TakeFailureNotice decides whether the referee of game is told now of a
// failed delivery to recipient: yes when no notice about that recipient
// went out within every before now, and then it also says how many
// failures went untold since the last one; no otherwise, and the failure
// is counted for the next notice.
func (tx *Tx) TakeFailureNotice(ctx context.Context, game, recipient string, now time.Time, every time.Duration) (tell bool, untold int, err error) {
	recipient = strings.ToLower(strings.TrimSpace(recipient))
	var last int64
	err = tx.q.QueryRowContext(ctx, `SELECT last, untold FROM failure_notices WHERE game = ? AND recipient = ?`,
		game, recipient).Scan(&last, &untold)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		untold = 0
	case err != nil:
		return false, 0, fmt.Errorf("store: failure notice for %s: %w", game, err)
	case now.Sub(fromNanos(last)) < every:
		if _, err := tx.q.ExecContext(ctx, `UPDATE failure_notices SET untold = untold + 1 WHERE game = ? AND recipient = ?`,
			game, recipient); err != nil {
			return false, 0, fmt.Errorf("store: failure notice for %s: %w", game, err)
		}
		return false, untold + 1, nil
	}
	if _, err := tx.q.ExecContext(ctx, `INSERT INTO failure_notices (game, recipient, last, untold) VALUES (?, ?, ?, 0)
		ON CONFLICT (game, recipient) DO UPDATE SET last = excluded.last, untold = 0`,
		game, recipient, toNanos(now)); err != nil {
		return false, 0, fmt.Errorf("store: failure notice for %s: %w", game, err)
	}
	return true, untold, nil
}

// HasOutMessage reports whether a message with this Message-ID is in the
// outbox, whatever its status.
func (r reader) HasOutMessage(ctx context.Context, messageID string) (bool, error) {
	var n int
	if err := r.q.QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE message_id = ?`,
		canonicalMessageID(messageID)).Scan(&n); err != nil {
		return false, fmt.Errorf("store: outbox %s: %w", messageID, err)
	}
	return n > 0, nil
}
