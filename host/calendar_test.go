package host

import (
	"bytes"
	"io"
	"regexp"
	"testing"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/store"
)

// calendarIn is the iCalendar object a stored message carries, or "".
func calendarIn(t testing.TB, m store.OutMessage) string {
	t.Helper()
	mr, err := gomail.CreateReader(bytes.NewReader(m.Raw))
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return ""
		}
		if err != nil {
			t.Fatal(err)
		}
		if ah, ok := p.Header.(*gomail.AttachmentHeader); ok {
			if ct, _, _ := ah.ContentType(); ct == "text/calendar" {
				b, err := io.ReadAll(p.Body)
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
		}
	}
}

// threadCalendars are the calendar objects of the thread mail to a player
// since the outbox held from messages.
func (hs *harness) threadCalendars(to string, from int) []string {
	var out []string
	for _, m := range hs.mailTo(to, from) {
		if c := calendarIn(hs.t, m); c != "" {
			out = append(out, c)
		}
	}
	return out
}

var (
	uidLine = regexp.MustCompile(`(?m)^UID:(.*)\r?$`)
	seqLine = regexp.MustCompile(`(?m)^SEQUENCE:(\d+)\r?$`)
)

// A moved deadline updates the event each player got when the day opened,
// after a restart too; CALENDAR OFF, which survives the restart, stops a
// player's events.
func TestCalendarAcrossARestart(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	opened := hs.threadCalendars(addr("Dave"), 0)
	if len(opened) != 1 {
		t.Fatalf("Dave got %d calendar events with Day 1, want 1", len(opened))
	}
	uid := uidLine.FindStringSubmatch(opened[0])
	if uid == nil || seqLine.FindStringSubmatch(opened[0])[1] != "0" {
		t.Fatalf("Day 1's event:\n%s", opened[0])
	}
	private := "host+g1-p-" + hs.token("g1", addr("Carol")) + "@example.org"
	hs.send(addr("Carol"), private, "CALENDAR OFF")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "EXTEND 2h")
	hs.restart()
	before := len(hs.outbox())
	hs.send("ref@example.org", ref, "EXTEND 1h")
	moved := hs.threadCalendars(addr("Dave"), before)
	if len(moved) != 1 {
		t.Fatalf("Dave got %d calendar events for the moved deadline, want 1", len(moved))
	}
	if got := uidLine.FindStringSubmatch(moved[0]); got == nil || got[1] != uid[1] {
		t.Errorf("the moved deadline's UID %v is not Day 1's %q", got, uid[1])
	}
	if got := seqLine.FindStringSubmatch(moved[0]); got == nil || got[1] != "2" {
		t.Errorf("SEQUENCE after two moves and a restart: %v, want 2", got)
	}
	if got := hs.threadCalendars(addr("Carol"), before); len(got) != 0 {
		t.Errorf("Carol, after CALENDAR OFF and a restart, got %d calendar events", len(got))
	}
}
