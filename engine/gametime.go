package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// zoneWords are the zone abbreviations referees write, read as the places
// they name, so that "EST" in July means New York's summer time, as the
// writer meant it.
var zoneWords = map[string]string{
	"ET": DefaultZone, "EST": DefaultZone, "EDT": DefaultZone,
	"CT": SeedWeekendZone, "CST": SeedWeekendZone, "CDT": SeedWeekendZone,
	"UTC": "UTC", "GMT": "UTC", "Z": "UTC",
}

// clockLayouts are the ways a time of day is written, after lowercasing.
var clockLayouts = []string{"15:04", "15:04:05", "3pm", "3:04pm"}

// ParseGameTime reads a time as a referee writes it (DEADLINE, D8): a date
// and a time of day, in the game's zone unless a zone or an offset follows.
// All of these are read:
//
//	2026-12-07 18:00            the game's zone
//	2026-12-07 6pm, 6:30pm      the same, in twelve-hour form
//	2026-12-07T18:00            ISO 8601, with or without seconds
//	2026-12-07 18:00 UTC        a zone word: UTC, GMT, Z, ET/EST/EDT, CT/CST/CDT
//	2026-12-07 18:00 Europe/Berlin   any zone of the zone database
//	2026-12-07T18:00-05:00      an offset: -05:00, -0500, -05, or UTC+1
//	2026-12-07T18:00:00Z        RFC 3339
func (s *State) ParseGameTime(v string) (time.Time, error) {
	return ParseTimeIn(v, s.GameZone())
}

// ParseTimeIn is ParseGameTime with the zone of times that name none.
func ParseTimeIn(v string, zone *time.Location) (time.Time, error) {
	t, err := parseTime(v, zone)
	if err != nil {
		return time.Time{}, phrase.Errorf("cannot read %q as a time (%v); write it as 2026-12-04 18:00 in the game's zone (%s), "+
			"or add a zone or an offset: 2026-12-04 18:00 UTC, 2026-12-04 18:00 Europe/Berlin, 2026-12-04T18:00-05:00",
			strings.TrimSpace(v), err, zone)
	}
	return t.UTC(), nil
}

// parseDeadline is ParseGameTime for DEADLINE, whose refusal shows how to
// write a time with examples in the game's zone, dated two days after now on
// the game's clock, so that every example is a deadline the referee could
// set.
func (s *State) parseDeadline(v string, now time.Time) (time.Time, error) {
	t, err := parseTime(v, s.GameZone())
	if err != nil {
		return time.Time{}, phrase.Errorf("cannot read %q as a time (%v); %s", strings.TrimSpace(v), err, s.timeAdvice(now))
	}
	return t.UTC(), nil
}

// timeAdvice says how to write a deadline, with examples two days after now
// in the game's zone.
func (s *State) timeAdvice(now time.Time) string {
	z := s.GameZone()
	d := now.In(z).AddDate(0, 0, 2)
	at := time.Date(d.Year(), d.Month(), d.Day(), 18, 0, 0, 0, z)
	date := at.Format("2006-01-02")
	return fmt.Sprintf("write it as %s 18:00 in the game's zone (%s), or add a zone or an offset: %s 18:00 UTC, %s 18:00 Europe/Berlin, %s",
		date, z, date, date, at.Format("2006-01-02T15:04-07:00"))
}

func parseTime(v string, zone *time.Location) (time.Time, error) {
	v = strings.TrimRight(strings.TrimSpace(v), ".,;!")
	if t, err := time.Parse(time.RFC3339, strings.ToUpper(v)); err == nil {
		return t, nil
	}
	f := strings.Fields(v)
	if len(f) >= 1 {
		// ISO 8601 joins the date and the time with a T (either case).
		if d, c, ok := strings.Cut(f[0], "T"); ok && len(f[0]) > 10 {
			f = append([]string{d, c}, f[1:]...)
		} else if d, c, ok := strings.Cut(f[0], "t"); ok && len(f[0]) > 10 {
			f = append([]string{d, c}, f[1:]...)
		}
	}
	switch {
	case len(f) < 2:
		return time.Time{}, phrase.Errorf("a date and a time of day are needed")
	case len(f) > 3:
		return time.Time{}, phrase.Errorf("too many words")
	}
	date, err := time.Parse("2006-01-02", f[0])
	if err != nil {
		return time.Time{}, phrase.Errorf("the date is written year-month-day")
	}
	clock, offset, hasOffset, err := splitOffset(f[1])
	if err != nil {
		return time.Time{}, err
	}
	loc := zone
	if hasOffset {
		loc = offset
	}
	if len(f) == 3 {
		if hasOffset {
			return time.Time{}, phrase.Errorf("give either an offset or a zone, not both")
		}
		if loc, err = readZone(f[2]); err != nil {
			return time.Time{}, err
		}
	}
	var tod time.Time
	read := false
	for _, layout := range clockLayouts {
		if t, err := time.Parse(layout, strings.ToLower(clock)); err == nil {
			tod, read = t, true
			break
		}
	}
	if !read {
		return time.Time{}, phrase.Errorf("the time of day is written like 18:00 or 6pm")
	}
	return time.Date(date.Year(), date.Month(), date.Day(), tod.Hour(), tod.Minute(), tod.Second(), 0, loc), nil
}

// splitOffset takes an offset or a Z off the end of a time of day:
// "18:00-05:00", "18:00+0100", "18:00Z".
func splitOffset(clock string) (rest string, loc *time.Location, ok bool, err error) {
	if n := len(clock); n > 1 && (clock[n-1] == 'Z' || clock[n-1] == 'z') {
		return clock[:n-1], time.UTC, true, nil
	}
	i := strings.LastIndexAny(clock, "+-")
	if i <= 0 {
		return clock, nil, false, nil
	}
	loc, err = readOffset(clock[i:])
	if err != nil {
		return "", nil, false, err
	}
	return clock[:i], loc, true, nil
}

// readOffset reads "+01:00", "-0500" or "+1" as a fixed zone.
func readOffset(v string) (*time.Location, error) {
	bad := phrase.Errorf("%q is not an offset such as -05:00 or +0100", v)
	if len(v) < 2 || (v[0] != '+' && v[0] != '-') {
		return nil, bad
	}
	digits := strings.ReplaceAll(v[1:], ":", "")
	var h, m int
	var err error
	switch len(digits) {
	case 1, 2:
		h, err = strconv.Atoi(digits)
	case 4:
		h, err = strconv.Atoi(digits[:2])
		if err == nil {
			m, err = strconv.Atoi(digits[2:])
		}
	default:
		return nil, bad
	}
	if err != nil || h > 14 || m > 59 {
		return nil, bad
	}
	secs := (h*60 + m) * 60
	if v[0] == '-' {
		secs = -secs
	}
	return time.FixedZone("UTC"+v, secs), nil
}

// ReadZone reads a zone as a player writes it (ZONE): a name of the zone
// database such as Europe/Berlin, UTC, a zone word such as EST, or UTC with
// an offset.
func ReadZone(v string) (*time.Location, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, phrase.Errorf("no zone given")
	}
	return readZone(v)
}

// readZone reads the zone after a time: a zone word, a name of the zone
// database such as Europe/Berlin, or UTC or GMT with an offset ("UTC+1").
func readZone(v string) (*time.Location, error) {
	up := strings.ToUpper(v)
	if name, ok := zoneWords[up]; ok {
		return loadZone(name)
	}
	for _, w := range []string{"UTC", "GMT"} {
		if rest, ok := strings.CutPrefix(up, w); ok && rest != "" {
			return readOffset(rest)
		}
	}
	if v[0] == '+' || v[0] == '-' {
		return readOffset(v)
	}
	// Only names of places: the zone database also holds "EST5EDT" and
	// the like, which no referee means.
	if strings.Contains(v, "/") {
		if loc, err := loadZone(v); err == nil {
			return loc, nil
		}
	}
	return nil, phrase.Errorf("%q is not a zone such as UTC or Europe/Berlin", v)
}
