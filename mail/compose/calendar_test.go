package compose_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	netmail "net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	ics "github.com/arran4/golang-ical"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// calendarOf reads the calendar event a message carries with the
// iCalendar library, as a calendar would; nil when it carries none.
func calendarOf(t *testing.T, m compose.Outgoing) *ics.VEvent {
	t.Helper()
	p := readBack(t, m.Raw)
	if p.calendar == nil {
		return nil
	}
	if p.calendarType != "text/calendar; charset=utf-8; method=PUBLISH" {
		t.Errorf("calendar part of type %q", p.calendarType)
	}
	cal, err := ics.ParseCalendar(bytes.NewReader(p.calendar))
	if err != nil {
		t.Fatalf("the calendar part does not parse: %v\n%s", err, p.calendar)
	}
	if got := cal.CalendarProperties; len(got) == 0 {
		t.Fatal("the calendar has no properties")
	}
	var method string
	for _, prop := range cal.CalendarProperties {
		if prop.IANAToken == string(ics.PropertyMethod) {
			method = prop.Value
		}
	}
	if method != "PUBLISH" {
		t.Errorf("METHOD %q, want PUBLISH", method)
	}
	evs := cal.Events()
	if len(evs) != 1 {
		t.Fatalf("%d events in the calendar, want 1", len(evs))
	}
	return evs[0]
}

func sequence(t *testing.T, ev *ics.VEvent) int {
	t.Helper()
	p := ev.GetProperty(ics.ComponentPropertySequence)
	if p == nil {
		t.Fatal("the event has no SEQUENCE")
	}
	n, err := strconv.Atoi(p.Value)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCalendarFollowsTheDeadline: the thread mail that opens a round
// carries a calendar event at its close; a moved deadline's mail carries
// the same event (same UID) with a higher SEQUENCE at the new close; a
// player's CALENDAR OFF stops theirs and no one else's.
func TestCalendarFollowsTheDeadline(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.signup(names11)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	alice, bob := h.key("Alice"), h.key("Bob")
	first := calendarOf(t, toKind(t, r.msgs, alice, compose.KindThread))
	if first == nil {
		t.Fatal("the mail that opens Day 1 carries no calendar event")
	}
	start, err := first.GetStartAt()
	if err != nil || !start.Equal(h.s.ClosesAt()) {
		t.Errorf("the event starts %v (%v), the round closes %v", start, err, h.s.ClosesAt())
	}
	if sequence(t, first) != 0 {
		t.Errorf("a new round's event has SEQUENCE %d", sequence(t, first))
	}
	uid := first.Id()
	if uid != "dec26.d1.opening."+strconv.FormatInt(h.s.RoundStart.Unix(), 10)+".deadline@example.org" {
		t.Errorf("UID %q", uid)
	}
	if other := calendarOf(t, toKind(t, r.msgs, bob, compose.KindThread)); other == nil || other.Id() != uid {
		t.Error("Bob's event is not the same event as Alice's")
	}
	for _, m := range r.msgs {
		if m.Kind != compose.KindThread && calendarOf(t, m) != nil {
			t.Errorf("a %s mail to %s carries a calendar event", m.Kind, m.Recipient)
		}
	}

	h.now = h.now.Add(time.Hour)
	r = h.ok(engine.Referee, engine.Private, "EXTEND 2h", engine.Command{Verb: engine.CmdExtend, Duration: 2 * time.Hour})
	moved := calendarOf(t, toKind(t, r.msgs, alice, compose.KindThread))
	if moved == nil {
		t.Fatal("the mail that moves the deadline carries no calendar event")
	}
	if moved.Id() != uid {
		t.Errorf("the moved deadline's UID %q is not %q", moved.Id(), uid)
	}
	if sequence(t, moved) <= sequence(t, first) {
		t.Errorf("SEQUENCE %d after a move, was %d", sequence(t, moved), sequence(t, first))
	}
	if at, _ := moved.GetStartAt(); !at.Equal(h.s.ClosesAt()) || !at.After(start) {
		t.Errorf("the moved event starts %v, the round closes %v", at, h.s.ClosesAt())
	}

	h.ok(h.player("Alice"), engine.Private, "CALENDAR OFF", engine.Command{Verb: engine.CmdCalendar, Text: engine.CalendarOff})
	h.now = h.now.Add(time.Hour)
	r = h.ok(engine.Referee, engine.Private, "EXTEND 1h", engine.Command{Verb: engine.CmdExtend, Duration: time.Hour})
	if calendarOf(t, toKind(t, r.msgs, alice, compose.KindThread)) != nil {
		t.Error("CALENDAR OFF did not stop Alice's calendar events")
	}
	again := calendarOf(t, toKind(t, r.msgs, bob, compose.KindThread))
	if again == nil || again.Id() != uid || sequence(t, again) <= sequence(t, moved) {
		t.Error("Bob's calendar stopped, or did not update the same event, when Alice turned hers off")
	}
}

// TestCalendarOffForTheGame: with calendar=off in the setup no mail carries
// one.
func TestCalendarOffForTheGame(t *testing.T) {
	t.Parallel()
	setup := engine.Classic()
	setup.NoCalendar = true
	h := newHarness(t, setup, "dec26", 3)
	h.signup(names11)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	for _, m := range r.msgs {
		if calendarOf(t, m) != nil {
			t.Fatalf("a mail to %s carries a calendar event in a game without", m.Recipient)
		}
	}
}

// TestCalendarFollowsTheNight: the thread mail that opens a night carries
// a calendar event at its latest end, for the night roles' actions; the
// referee's extension of the night updates the same event.
func TestCalendarFollowsTheNight(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.signup(names11)
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	alice := h.key(h.town()[0])
	var night *ics.VEvent
	for _, m := range h.untilClose() {
		if m.Recipient != alice || m.Kind != compose.KindThread {
			continue
		}
		if ev := calendarOf(t, m); ev != nil {
			night = ev
		}
	}
	if h.s.Phase != engine.NightPhase {
		t.Fatalf("the day did not close: phase %s", h.s.Phase)
	}
	if night == nil {
		t.Fatal("the mail that opens the night carries no calendar event")
	}
	uid := "dec26.n1." + strconv.FormatInt(h.s.Night.Start.Unix(), 10) + ".night@example.org"
	if night.Id() != uid {
		t.Errorf("the night's UID is %q, want %q", night.Id(), uid)
	}
	if at, _ := night.GetStartAt(); !at.Equal(h.s.Night.End) {
		t.Errorf("the night's event starts %v, the night ends by %v", at, h.s.Night.End)
	}
	h.now = h.now.Add(time.Hour)
	r := h.ok(engine.Referee, engine.Private, "EXTEND 2h", engine.Command{Verb: engine.CmdExtend, Duration: 2 * time.Hour})
	moved := calendarOf(t, toKind(t, r.msgs, alice, compose.KindThread))
	if moved == nil || moved.Id() != uid || sequence(t, moved) <= sequence(t, night) {
		t.Fatalf("the night's extension does not update the night's event: %v", moved)
	}
	if at, _ := moved.GetStartAt(); !at.Equal(h.s.Night.End) {
		t.Errorf("the extended night's event starts %v, the night ends by %v", at, h.s.Night.End)
	}
}

// TestCalendarLinesEndInCRLF: the calendar part of a real thread mail,
// its base64 undone, is an iCalendar object whose every line, folded ones
// included, ends in CRLF and holds at most 75 octets (RFC 5545 section
// 3.1). Calendars that read lines strictly refuse an object with bare LFs.
func TestCalendarLinesEndInCRLF(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.signup(names11)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	raw := toKind(t, r.msgs, h.key("Alice"), compose.KindThread).Raw
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	typ, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || typ != "multipart/mixed" {
		t.Fatalf("a thread mail with a calendar is of type %q (%v)", typ, err)
	}
	var cal []byte
	parts := multipart.NewReader(msg.Body, params["boundary"])
	for {
		// NextRawPart: the transfer encoding is undone here, by hand.
		p, err := parts.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if typ, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); typ != "text/calendar" {
			continue
		}
		if cte := p.Header.Get("Content-Transfer-Encoding"); cte != "base64" {
			t.Fatalf("the calendar part is %q, not base64", cte)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		if cal, err = base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(body))); err != nil {
			t.Fatal(err)
		}
	}
	if cal == nil {
		t.Fatal("the mail that opens Day 1 has no calendar part")
	}
	text := string(cal)
	if !strings.HasPrefix(text, "BEGIN:VCALENDAR\r\n") || !strings.HasSuffix(text, "END:VCALENDAR\r\n") {
		t.Errorf("the calendar does not begin and end as one, with CRLF:\n%q", text)
	}
	folded := 0
	for i, l := range strings.Split(strings.TrimSuffix(text, "\r\n"), "\r\n") {
		if strings.ContainsAny(l, "\r\n") {
			t.Errorf("line %d holds a bare CR or LF: %q", i+1, l)
		}
		if len(l) > 75 {
			t.Errorf("line %d is %d octets long: %q", i+1, len(l), l)
		}
		if strings.HasPrefix(l, " ") {
			folded++
		}
	}
	if folded == 0 {
		t.Errorf("no line of the calendar is folded, so the test shows nothing of folded lines:\n%s", text)
	}
}
