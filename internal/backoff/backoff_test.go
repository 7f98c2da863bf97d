package backoff

import (
	"context"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	min, max := time.Second, 30*time.Second
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		16 * time.Second, 30 * time.Second, 30 * time.Second} {
		for range 20 {
			if d := Duration(n, min, max); d < want/2 || d > want {
				t.Fatalf("Duration(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[Duration(3, min, max)] = true
	}
	if len(seen) < 10 {
		t.Errorf("Duration(3) took only %d distinct values in 50 draws: no jitter", len(seen))
	}
}

func TestSleepEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Fatal("Sleep waited out an hour on a cancelled context")
	}
	if !Sleep(context.Background(), time.Millisecond) {
		t.Fatal("Sleep did not report a full wait")
	}
}
