package engine

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the weekend rule must work on machines without a zone database
)

// WeekendZone is the zone of the weekend window (D7).
const WeekendZone = "America/Chicago"

var zones sync.Map // name -> *time.Location

// loadZone loads a zone once; time.LoadLocation reads and parses a file each call.
func loadZone(name string) (*time.Location, error) {
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location), nil
	}
	z, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, z)
	return z, nil
}

func mustZone(name string) *time.Location {
	z, err := loadZone(name)
	if err != nil {
		panic(fmt.Sprintf("engine: zone %q: %v", name, err))
	}
	return z
}

// GameZone is where the game's times are shown (D8).
func (s *State) GameZone() *time.Location {
	if z, err := loadZone(s.Setup.Zone); err == nil {
		return z
	}
	return mustZone("America/New_York")
}

// InWeekend reports whether t lies between Friday 17:00 and Monday 07:00
// America/Chicago (D7), across daylight-saving changes.
func InWeekend(t time.Time) bool {
	c := t.In(mustZone(WeekendZone))
	switch c.Weekday() {
	case time.Friday:
		return c.Hour() >= 17
	case time.Saturday, time.Sunday:
		return true
	case time.Monday:
		return c.Hour() < 7
	}
	return false
}

// WeekendEnd is the Monday 07:00 America/Chicago that ends the weekend t is in.
func WeekendEnd(t time.Time) time.Time {
	c := t.In(mustZone(WeekendZone))
	days := (int(time.Monday) - int(c.Weekday()) + 7) % 7
	if c.Weekday() == time.Monday {
		days = 0
	}
	d := c.AddDate(0, 0, days)
	return time.Date(d.Year(), d.Month(), d.Day(), 7, 0, 0, 0, d.Location()).UTC()
}

// dayDeadline is the deadline of a day round of length d starting at from.
// It is kept as set; closeAt holds it to Monday when it falls in a weekend
// that may not close (D7), which can change while the round runs.
func dayDeadline(from time.Time, d time.Duration) time.Time {
	return from.Add(d).UTC()
}

// weekendAllows reports whether a day round may close at t: outside the
// weekend always; inside only if the referee announced a weekend close for
// this round and every living player has a non-null vote (D7).
func (s *State) weekendAllows(t time.Time) bool {
	return !InWeekend(t) || (s.WeekendClose && s.allVotedNonNull())
}

func (s *State) allVotedNonNull() bool {
	for _, p := range s.Players {
		if p.Alive && p.Vote <= 0 {
			return false
		}
	}
	return true
}

// nightMarks are the instants a night may end at: every NightStep after it
// began, and its end (N6).
func (s *State) nightMarks() []time.Time {
	n := s.Night
	var marks []time.Time
	for t := n.Start.Add(s.Setup.NightStep); t.Before(n.End); t = t.Add(s.Setup.NightStep) {
		marks = append(marks, t)
	}
	return append(marks, n.End)
}

// nightEndsAt is when the night resolves: the first mark at or after the
// moment every required action was in, or its end.
func (s *State) nightEndsAt() time.Time {
	if s.Night.AllInAt.IsZero() {
		return s.Night.End
	}
	for _, m := range s.nightMarks() {
		if !m.Before(s.Night.AllInAt) {
			return m
		}
	}
	return s.Night.End
}

// closeAt is when the current day round closes by the clock: its deadline,
// held to Monday 07:00 if it falls in a weekend that may not close (D7).
func (s *State) closeAt() time.Time {
	if s.weekendAllows(s.Deadline) {
		return s.Deadline
	}
	return WeekendEnd(s.Deadline)
}

// NextDeadline is when Tick next has something to do: a round to close, a
// night to end, a reminder to send. ok is false when nothing is waiting (the
// game has not started, is paused, or is over).
func NextDeadline(s *State) (t time.Time, ok bool) {
	if s.Paused {
		return time.Time{}, false
	}
	consider := func(c time.Time) {
		if !ok || c.Before(t) {
			t, ok = c, true
		}
	}
	if s.Setup.DigestInterval > 0 && s.DigestPending > 0 {
		consider(s.LastDigest.Add(s.Setup.DigestInterval))
	}
	switch s.Phase {
	case DayPhase:
		consider(s.closeAt())
		if s.earlyCloseReady() && InWeekend(s.Clock) {
			// An early close held by the weekend happens when it ends.
			consider(WeekendEnd(s.Clock))
		}
		if r := s.Setup.ReminderBefore; r > 0 && !s.Reminded {
			consider(s.closeAt().Add(-r))
		}
	case NightPhase:
		consider(s.nightEndsAt())
		if r := s.Setup.ReminderBefore; r > 0 && !s.Night.Reminded {
			consider(s.Night.End.Add(-r))
		}
	}
	return t, ok
}

// ParseGameTime reads a deadline as a referee writes it, in the game's zone
// unless it names one: "2026-12-04 18:00", "2026-12-04T18:00:00-05:00".
func (s *State) ParseGameTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 3:04pm", "2006-01-02 3pm"} {
		if t, err := time.ParseInLocation(layout, strings.ToLower(v), s.GameZone()); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot read %q as a time; write it as 2006-01-02 15:04 (%s)", v, s.Setup.Zone)
}
