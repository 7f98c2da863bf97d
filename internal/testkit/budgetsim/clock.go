package budgetsim

import (
	"sync"
	"time"
)

// Clock is the simulation's time: every part of the system reads it (the
// host's game time, the sender's outbox times and budget, the provider's
// rolling window), and only the simulation moves it, so days pass in
// seconds and nothing depends on how fast the machine is.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t.UTC()} }

// Now is the current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
