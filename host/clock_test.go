package host

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t.Parallel()
	real := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c := Clock{Anchor: real, Start: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC), Speed: 3600,
		Real: func() time.Time { return real }}
	if got := c.Now(); !got.Equal(c.Start) {
		t.Fatalf("at the anchor: %v", got)
	}
	real = real.Add(time.Second)
	if got := c.Now(); !got.Equal(c.Start.Add(time.Hour)) {
		t.Fatalf("one real second at 3600x: %v", got)
	}
	if d := c.Until(c.Start.Add(3 * time.Hour)); d != 2*time.Second {
		t.Fatalf("until +3h game time: %v real", d)
	}
	// A mail's arrival, a real instant, maps to game time and back.
	arrived := real.Add(-1500 * time.Millisecond)
	if got := c.At(arrived); !got.Equal(c.Start.Add(-30 * time.Minute)) {
		t.Fatalf("1.5 s before now at 3600x: %v", got)
	}
	if got := c.RealAt(c.At(arrived)); !got.Equal(arrived) {
		t.Fatalf("RealAt(At(r)) = %v, want %v", got, arrived)
	}
	plain := Clock{Real: func() time.Time { return real }}
	if !plain.Now().Equal(real) || plain.Until(real.Add(time.Minute)) != time.Minute {
		t.Fatal("the zero clock is real time")
	}
	if !plain.At(arrived).Equal(arrived) || !plain.RealAt(arrived).Equal(arrived) {
		t.Fatal("the zero clock maps real time to itself")
	}
}
