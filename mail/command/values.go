package command

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // deadlines name zones; hosts without a zoneinfo database still read them

	"github.com/mafiamail/mafiamail/engine"
)

// NormalizeName is the form in which two names are the same name (D1). It
// is the rules engine's own, so that the grammar and the engine agree.
func NormalizeName(s string) string { return engine.NormalizeName(s) }

// maxLength bounds EXTEND and GRANT: a longer one is more likely a typo
// ("120h" for "12h") than a wish.
const maxLength = 30 * 24 * time.Hour

var units = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
}

// parseLength reads a length such as "12h", "1d", "1h30m" or "2 days".
func parseLength(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a length; write it like 12h, 90m or 1d", s)
	rest := strings.ToLower(strings.TrimSpace(s))
	var total time.Duration
	for rest != "" {
		i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 {
			return 0, bad
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n > 100000 {
			return 0, bad
		}
		rest = strings.TrimLeft(rest[i:], " ")
		j := strings.IndexFunc(rest, func(r rune) bool { return r < 'a' || r > 'z' })
		if j < 0 {
			j = len(rest)
		}
		unit, ok := units[rest[:j]]
		if !ok {
			return 0, bad
		}
		total += time.Duration(n) * unit
		if total > maxLength {
			return 0, fmt.Errorf("%q is longer than %d days", s, int(maxLength/(24*time.Hour)))
		}
		rest = strings.TrimLeft(rest[j:], " ,")
	}
	if total <= 0 {
		return 0, bad
	}
	return total, nil
}

// Deadlines are shown in New York time (D8), so a time without a zone is New
// York time too.
var newYork = mustZone("America/New_York")

var zoneWords = map[string]*time.Location{
	"ET": newYork, "EST": newYork, "EDT": newYork,
	"CT": mustZone("America/Chicago"), "CST": mustZone("America/Chicago"), "CDT": mustZone("America/Chicago"),
	"UTC": time.UTC, "GMT": time.UTC, "Z": time.UTC,
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("command: zone %s: %v", name, err))
	}
	return loc
}

var errDeadline = errors.New("DEADLINE needs a date and time: write DEADLINE 2025-03-07 18:00 (New York time), " +
	"add a zone such as UTC or Europe/Berlin, or give an RFC 3339 time such as 2025-03-07T18:00:00-05:00")

// parseDeadline reads the time of DEADLINE.
func parseDeadline(s string) (time.Time, error) {
	s = trimPunct(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	f := strings.Fields(s)
	if len(f) == 1 && strings.Contains(f[0], "T") {
		f = strings.SplitN(f[0], "T", 2)
	}
	if len(f) < 2 || len(f) > 3 {
		return time.Time{}, errDeadline
	}
	loc := newYork
	if len(f) == 3 {
		if l, ok := zoneWords[strings.ToUpper(f[2])]; ok {
			loc = l
		} else if l, err := time.LoadLocation(f[2]); err == nil && strings.Contains(f[2], "/") {
			loc = l
		} else {
			return time.Time{}, errDeadline
		}
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, f[0]+" "+f[1], loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errDeadline
}
