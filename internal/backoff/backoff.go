// Package backoff holds the waiting that the mail clients share: exponential
// backoff with jitter, and a sleep that ends with its context.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Duration returns the wait before attempt number n+1 after n consecutive
// failures (n >= 0): min doubled n times, at most max, of which a random
// half is taken off so that many clients that failed together do not all
// come back at the same instant ("equal jitter").
func Duration(n int, min, max time.Duration) time.Duration {
	d := min
	for i := 0; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + rand.N(d-half+1)
}

// Sleep waits for d or until ctx ends; it reports whether the full wait
// passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
