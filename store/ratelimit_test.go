package store

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The rate limit's buckets are kept across a restart, replaced key by key,
// and forgotten once old.
func TestRateBucketsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	s := openAt(t, path)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 123, time.UTC)
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for _, b := range []RateBucket{
			{Key: "from:old@example.org", Tokens: 3, Last: t0.Add(-time.Hour)},
			{Key: "from:flood@example.org", Tokens: 5, Last: t0},
			{Key: "notify:victim@example.org", Tokens: 0.25, Last: t0.Add(time.Second), Refused: true},
		} {
			if err := tx.SaveRateBucket(ctx, b); err != nil {
				return err
			}
		}
		// A later message replaces the bucket it drew on.
		return tx.SaveRateBucket(ctx, RateBucket{Key: "from:flood@example.org", Tokens: 0.5, Last: t0.Add(2 * time.Second), Refused: true})
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openAt(t, path)
	got, err := s.RateBuckets(ctx, t0.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []RateBucket{
		{Key: "from:flood@example.org", Tokens: 0.5, Last: t0.Add(2 * time.Second), Refused: true},
		{Key: "notify:victim@example.org", Tokens: 0.25, Last: t0.Add(time.Second), Refused: true},
	}
	if !slices.EqualFunc(got, want, func(a, b RateBucket) bool {
		return a.Key == b.Key && a.Tokens == b.Tokens && a.Last.Equal(b.Last) && a.Refused == b.Refused
	}) {
		t.Errorf("after reopening, buckets since a minute before: %+v, want %+v", got, want)
	}

	var forgot int64
	update(t, s, func(ctx context.Context, tx *Tx) (err error) {
		forgot, err = tx.ForgetRateBuckets(ctx, t0)
		return err
	})
	all, err := s.RateBuckets(ctx, time.Time{})
	if err != nil || forgot != 1 || len(all) != 2 {
		t.Errorf("forgetting buckets older than %v: %d forgotten, %d left (%v), want 1 and 2", t0, forgot, len(all), err)
	}
}
