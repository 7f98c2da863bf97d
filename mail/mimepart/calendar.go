package mimepart

import (
	"fmt"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
)

// Event is one event of an iCalendar object that a message carries.
type Event struct {
	// UID names the event for calendars; an update carries the same UID
	// and a higher Sequence.
	UID      string
	Sequence int
	// Stamp is the DTSTAMP: when the news was, so that the same news
	// gives the same bytes.
	Stamp      time.Time
	Start, End time.Time
	Summary    string
	// Description is the event's text in the calendar.
	Description string
}

// CalendarEvent writes an iCalendar object (RFC 5545) of method PUBLISH
// that holds the one event, transparent (it takes no time in the
// reader's calendar), its times in UTC. Every line ends in CRLF, as RFC
// 5545 section 3.1 requires: the library ends its lines as the system it
// runs on would, unless told.
func CalendarEvent(prodID string, e Event) ([]byte, error) {
	cal := ics.NewCalendarFor(prodID)
	cal.SetMethod(ics.MethodPublish)
	ev := cal.AddEvent(e.UID)
	ev.SetDtStampTime(e.Stamp.UTC())
	ev.SetSequence(e.Sequence)
	ev.SetStartAt(e.Start.UTC())
	ev.SetEndAt(e.End.UTC())
	ev.SetSummary(e.Summary)
	ev.SetDescription(e.Description)
	ev.SetTimeTransparency(ics.TransparencyTransparent)
	text := cal.Serialize(ics.WithNewLineWindows)
	if !strings.Contains(text, "BEGIN:VEVENT") {
		return nil, fmt.Errorf("mimepart: calendar event %s has no VEVENT", e.UID)
	}
	return []byte(text), nil
}
