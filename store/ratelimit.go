package store

import (
	"context"
	"fmt"
	"time"
)

// RateBucket is the saved state of one key of the per-sender rate limit
// (inbound.Limiter): its tokens as of Last, and whether its last message
// was refused.
type RateBucket struct {
	Key     string
	Tokens  float64
	Last    time.Time
	Refused bool
}

// SaveRateBucket keeps a bucket's state, replacing what was saved under its
// key. Call it in the transaction that records the message which drew on
// it, so that the limit and the message's outcome are durable together.
func (tx *Tx) SaveRateBucket(ctx context.Context, b RateBucket) error {
	refused := 0
	if b.Refused {
		refused = 1
	}
	if _, err := tx.q.ExecContext(ctx, `INSERT INTO rate_buckets (key, tokens, last, refused) VALUES (?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET tokens = excluded.tokens, last = excluded.last, refused = excluded.refused`,
		b.Key, b.Tokens, toNanos(b.Last), refused); err != nil {
		return fmt.Errorf("store: save rate bucket %q: %w", b.Key, err)
	}
	return nil
}

// ForgetRateBuckets deletes the buckets last drawn on before a time, and
// says how many there were.
func (tx *Tx) ForgetRateBuckets(ctx context.Context, before time.Time) (int64, error) {
	res, err := tx.q.ExecContext(ctx, `DELETE FROM rate_buckets WHERE last < ?`, toNanos(before))
	if err != nil {
		return 0, fmt.Errorf("store: forget rate buckets: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// RateBuckets returns the buckets last drawn on at or after since.
func (r reader) RateBuckets(ctx context.Context, since time.Time) ([]RateBucket, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT key, tokens, last, refused FROM rate_buckets WHERE last >= ? ORDER BY key`,
		toNanos(since))
	if err != nil {
		return nil, fmt.Errorf("store: rate buckets: %w", err)
	}
	defer rows.Close()
	var out []RateBucket
	for rows.Next() {
		var b RateBucket
		var last int64
		if err := rows.Scan(&b.Key, &b.Tokens, &last, &b.Refused); err != nil {
			return nil, fmt.Errorf("store: rate buckets: %w", err)
		}
		b.Last = fromNanos(last)
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: rate buckets: %w", err)
	}
	return out, nil
}
