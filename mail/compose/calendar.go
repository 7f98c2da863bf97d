package compose

import (
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/templates"
)

// movesClose reports whether an event opens a voting round or a night, or
// moves its close: the thread mail it causes carries the round's or the
// night's calendar event (T5).
func movesClose(e engine.Event) bool {
	switch e.Type {
	case engine.EvDayStarted, engine.EvRunoffStarted, engine.EvExtraStarted, engine.EvNightStarted,
		engine.EvExtended, engine.EvDeadlineSet, engine.EvTieExtended, engine.EvWeekendClose, engine.EvMailWait:
		return true
	}
	return false
}

// roundCalendar is the calendar event of the close of the voting round,
// or the end of the night, under way in s, for a player's thread copy of
// the items, or nil: when no item opens the round or moves its close,
// when the game is in neither, or when the player or the referee turned
// calendars off.
func (c *Composer) roundCalendar(items []item, d delivery) ([]byte, error) {
	if d.ch != templates.Thread || d.r.slot <= 0 {
		return nil, nil
	}
	var at *item
	for i := range items {
		if movesClose(items[i].l.Event) {
			at = &items[i]
		}
	}
	if at == nil {
		return nil, nil
	}
	s := at.s
	p := s.Player(d.r.slot)
	if (s.Phase != engine.DayPhase && s.Phase != engine.NightPhase) || p == nil || !p.Alive || !s.SendsCalendar(p) {
		return nil, nil
	}
	return c.calendarEvent(s, at.l.Event.At, lang.Get(s.LanguageOf(p)))
}

// calendarUID names a voting round's close for calendars: the game, the
// day, the round's kind and its start, and the host's domain. All of it is
// in the thread already; nothing secret goes into it. It is the same for
// every move of the round's close, so a calendar updates its event.
func (c *Composer) calendarUID(s *engine.State) string {
	if s.Phase == engine.NightPhase {
		return fmt.Sprintf("%s.n%d.%d.night@%s", s.Game, s.Day, s.Night.Start.Unix(), c.domain)
	}
	return fmt.Sprintf("%s.d%d.%s.%d.deadline@%s", s.Game, s.Day, s.Round, s.RoundStart.Unix(), c.domain)
}

// calendarEvent writes the iCalendar object (RFC 5545, method PUBLISH) of
// the running round's close, or the night's latest end. Its SEQUENCE is the round's count of moves
// (engine.State.DeadlineMoves), so a moved close outranks the event it
// updates, after a restart too; DTSTAMP is the time of the news, so the
// same events give the same bytes.
func (c *Composer) calendarEvent(s *engine.State, stamp time.Time, l *lang.Language) ([]byte, error) {
	closes := s.ClosesAt()
	ev := mimepart.Event{
		UID: c.calendarUID(s), Sequence: s.DeadlineMoves, Stamp: stamp,
		Start: closes, End: closes.Add(15 * time.Minute),
	}
	if s.Phase == engine.NightPhase {
		// The night's latest end: it ends sooner once every action is in.
		ev.Summary = "[" + s.Game + "] " + l.Sprintf("Night %d ends", s.Day)
		ev.Description = l.Sprintf("If your role acts at night, send your action to your private address of game %s before this time. The night may end sooner, once every action is in.", s.Game)
	} else {
		ev.Summary = "[" + s.Game + "] " + l.Sprintf("%s: the vote closes", roundName(s, l))
		ev.Description = l.Sprintf("Reply to any thread mail of game %s with your vote before this time.", s.Game)
	}
	cal, err := mimepart.CalendarEvent("mafiamail", ev)
	if err != nil {
		return nil, fmt.Errorf("compose: calendar of %s: %w", s.Game, err)
	}
	return cal, nil
}

// roundName names the running voting round as the thread does.
func roundName(s *engine.State, l *lang.Language) string {
	switch s.Round {
	case engine.Runoff:
		return l.Sprintf("Day %d runoff", s.Day)
	case engine.Extra:
		return l.Sprintf("Day %d extra round", s.Day)
	}
	return l.Sprintf("Day %d", s.Day)
}
