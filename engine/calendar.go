package engine

import "strings"

// A player's calendar choice (CALENDAR, T5).
const (
	CalendarOn  = "ON"
	CalendarOff = "OFF"
)

// SendsCalendar reports whether the mail that opens a voting round or
// moves its close carries a calendar event for that player: the referee
// did not turn calendars off for the game (calendar=off), and the player
// did not turn theirs off (T5).
func (s *State) SendsCalendar(p *Player) bool {
	return p != nil && !s.Setup.NoCalendar && !p.NoCalendar
}

// calendar turns a player's calendar events on or off, or says which is in
// force (T5).
func (t *step) calendar(c Command) error {
	s := t.s
	if c.Channel != Private {
		return refuse(NotAllowed, "CALENDAR works in your private channel: reply to your role mail")
	}
	p := s.Player(c.By.Slot)
	switch choice := strings.ToUpper(strings.TrimSpace(c.Text)); choice {
	case "":
		shown := CalendarOn
		if !s.SendsCalendar(p) {
			shown = CalendarOff
		}
		t.emit(Event{Type: EvCalendarShown, To: toPlayer(p.Slot), Slot: p.Slot, Text: shown})
	case CalendarOn, CalendarOff:
		t.emit(Event{Type: EvCalendarSet, To: toPlayer(p.Slot), Slot: p.Slot, Text: choice})
	default:
		return refuse(BadArgument, "CALENDAR takes ON or OFF, not %q", c.Text)
	}
	return nil
}
