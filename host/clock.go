package host

import (
	"time"
)

// Clock maps real time to game time. In production the two are the same;
// for demos and tests game time runs Speed times faster, measured from
// Anchor, so that a 36-hour day passes in seconds while every rule still
// sees the hours it expects.
type Clock struct {
	// Anchor is the real instant at which game time was Start.
	Anchor time.Time
	// Start is the game time at Anchor; zero means Anchor itself.
	Start time.Time
	Speed float64
	// Real is the wall clock; nil means time.Now.
	Real func() time.Time
}

func (c Clock) real() time.Time {
	if c.Real != nil {
		return c.Real()
	}
	return time.Now()
}

func (c Clock) speed() float64 {
	if c.Speed <= 1 {
		return 1
	}
	return c.Speed
}

// Now is the current game time.
func (c Clock) Now() time.Time { return c.At(c.real()) }

// Until is the real time left until game time t.
func (c Clock) Until(t time.Time) time.Duration {
	d := t.Sub(c.Now())
	if d <= 0 {
		return 0
	}
	return time.Duration(float64(d) / c.speed())
}

// At is the game time at the real instant r.
func (c Clock) At(r time.Time) time.Time {
	if c.speed() == 1 && c.Start.IsZero() {
		return r.UTC()
	}
	start := c.Start
	if start.IsZero() {
		start = c.Anchor
	}
	return start.Add(time.Duration(float64(r.Sub(c.Anchor)) * c.speed())).UTC()
}

// RealAt is the real instant at which game time is t.
func (c Clock) RealAt(t time.Time) time.Time {
	if c.speed() == 1 && c.Start.IsZero() {
		return t
	}
	start := c.Start
	if start.IsZero() {
		start = c.Anchor
	}
	return c.Anchor.Add(time.Duration(float64(t.Sub(start)) / c.speed()))
}
