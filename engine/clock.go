package engine

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // the weekend rule must work on machines without a zone database
)

// SeedWeekendZone is the zone of the seed's weekend window (D7): the
// window of classic, mafia150 and every game in the default zone.
const SeedWeekendZone = "America/Chicago"

// DefaultZone is the zone a game's times are shown and read in unless its
// setup names another (D8). It is the one place that names it.
const DefaultZone = "America/New_York"

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
	return mustZone(DefaultZone)
}

// DefaultLocation is DefaultZone, loaded: where times are shown when no game
// is at hand (D8).
func DefaultLocation() *time.Location { return mustZone(DefaultZone) }

// InWeekend reports whether t lies in the seed's weekend window, between
// Friday 17:00 and Monday 07:00 America/Chicago (D7), across
// daylight-saving changes. A game's own window is State.InWeekend.
func InWeekend(t time.Time) bool { return inWeekend(t, mustZone(SeedWeekendZone)) }

// WeekendEnd is the Monday 07:00 America/Chicago that ends the seed's
// weekend t is in.
func WeekendEnd(t time.Time) time.Time { return weekendEnd(t, mustZone(SeedWeekendZone)) }

// inWeekend reports whether t lies between Friday 17:00 and Monday 07:00
// in zone.
func inWeekend(t time.Time, zone *time.Location) bool {
	c := t.In(zone)
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

// weekendEnd is the Monday 07:00 in zone that ends the weekend t is in.
func weekendEnd(t time.Time, zone *time.Location) time.Time {
	c := t.In(zone)
	days := (int(time.Monday) - int(c.Weekday()) + 7) % 7
	if c.Weekday() == time.Monday {
		days = 0
	}
	d := c.AddDate(0, 0, days)
	return time.Date(d.Year(), d.Month(), d.Day(), 7, 0, 0, 0, d.Location()).UTC()
}

// WeekendZone is the zone of the game's weekend window (D7), and false
// when the setup turned the rule off (weekend=off).
func (s *State) WeekendZone() (*time.Location, bool) {
	name, on := s.Setup.WeekendWindow()
	if !on {
		return nil, false
	}
	if z, err := loadZone(name); err == nil {
		return z, true
	}
	return mustZone(SeedWeekendZone), true
}

// InWeekend reports whether t lies in the game's weekend window (D7):
// never in a game that plays through weekends.
func (s *State) InWeekend(t time.Time) bool {
	z, on := s.WeekendZone()
	return on && inWeekend(t, z)
}

// weekendEnd is the end of the game's weekend t is in (D7).
func (s *State) weekendEnd(t time.Time) time.Time {
	z, on := s.WeekendZone()
	if !on {
		return t
	}
	return weekendEnd(t, z)
}

// dayDeadline is the deadline of a day round of length d starting at from.
// It is kept as set; closeAt holds it to Monday when it falls in a weekend
// that may not close (D7), which can change while the round runs.
func dayDeadline(from time.Time, d time.Duration) time.Time {
	return from.Add(d).UTC()
}

// weekendAllows reports whether a day round may close at t: outside the
// game's weekend window always; inside only if the referee announced a weekend close for
// this round and every living player has a non-null vote (D7).
func (s *State) weekendAllows(t time.Time) bool {
	return !s.InWeekend(t) || (s.WeekendClose && s.allVotedNonNull())
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
// moment every required action was in, or its end. A night whose end
// waits for held mail (T4) ends when the wait does, as any that came to
// its end: a mark it passed ends it no sooner, or its wait would tell
// that every action was in by that mark.
func (s *State) nightEndsAt() time.Time {
	if s.Night.AllInAt.IsZero() || s.MailWaiting() {
		return s.Night.End
	}
	for _, m := range s.nightMarks() {
		if !m.Before(s.Night.AllInAt) {
			return m
		}
	}
	return s.Night.End
}

// ClosesAt is the time at which the running round will really close by the
// clock: a day round's deadline after any weekend hold (D7), a night's latest
// end (N6). It is the one function that decides it: extensions are added to
// it (D9) and every deadline the host announces — in the thread, in tallies,
// in reminders — is its answer.
func (s *State) ClosesAt() time.Time {
	if s.Phase == NightPhase {
		return s.Night.End
	}
	return s.closeAt()
}

// closeAt is when the current day round closes by the clock: its deadline,
// held to Monday 07:00 if it falls in a weekend that may not close (D7).
func (s *State) closeAt() time.Time {
	if s.weekendAllows(s.Deadline) {
		return s.Deadline
	}
	return s.weekendEnd(s.Deadline)
}

// NextDeadline is when Tick next has something to do: a round to close, a
// night to end, a reminder to send, a digest to send. ok is false when
// nothing is waiting (the game has not started, is paused, or is over).
func NextDeadline(s *State) (t time.Time, ok bool) {
	return nextDeadline(s, true)
}

// NextOrderedDeadline is the next deadline whose outcome depends on which
// commands came before it (D8): a round's close, a night's end, a
// reminder. A digest is not one: it gathers the posts applied before it,
// and a post read after it, whenever it came, goes into the next one, so
// nothing is held back or sent twice whichever comes first. A host that
// applies commands in their order of arrival waits for the mail that
// arrived before an ordered deadline; a digest need not wait for it.
func NextOrderedDeadline(s *State) (t time.Time, ok bool) {
	return nextDeadline(s, false)
}

func nextDeadline(s *State, digests bool) (t time.Time, ok bool) {
	if s.Paused {
		return time.Time{}, false
	}
	consider := func(c time.Time) {
		if !ok || c.Before(t) {
			t, ok = c, true
		}
	}
	if every := s.DigestEvery(); digests && every > 0 && s.DigestPending > 0 {
		consider(s.LastDigest.Add(every))
	}
	switch s.Phase {
	case DayPhase:
		consider(s.closeAt())
		if s.earlyCloseDue() && s.InWeekend(s.Clock) {
			// An early close held by the weekend happens when it ends.
			consider(s.weekendEnd(s.Clock))
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
