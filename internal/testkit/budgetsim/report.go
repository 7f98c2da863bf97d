package budgetsim

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// postMarks finds the marks of the players' posts in the text of a mail.
var postMarks = regexp.MustCompile(`\[post \d+\]`)

// postMark is the mark of the nth post, which it carries on its first
// line, to be found in whatever mail brings it.
func postMark(n int) string { return fmt.Sprintf("[post %d]", n) }

// Figures sum a game up.
type Figures struct {
	Name string
	// Posts counts the players' thread posts that reached every player,
	// each post in a copy of its own or in a digest (Undelivered those
	// that did not); LongestWait and MedianWait are how long one took, in
	// game time, from the moment it was handed to the host to its
	// delivery to the last of the players.
	Posts                   int
	Undelivered             int
	LongestWait, MedianWait time.Duration
	// Days is the game's length in days of 24 hours, from START to its
	// end; LastDay the game's day number at the end; DrainDays the time
	// from START until the last message was sent.
	Days, DrainDays float64
	LastDay         int
	Winner          string
	// LongestByClass is the longest any message of a class waited, from
	// being queued to its delivery.
	LongestByClass map[string]time.Duration
	// PerPlayerDay is the copies each player got per game day, by class,
	// averaged over the seats.
	PerPlayerDay map[string]float64
	// QueuedPerDay is the recipients the host queued per game day, and
	// PeakDay the most the provider took in any rolling 24 hours.
	QueuedPerDay float64
	PeakDay      int
	Limit        int
	Refused      int
	Holds        uint64
	Dead         []string
	Written      map[string]int
	Skipped      map[string]int
	// Plans says how the host's plan for the thread went: each change,
	// with the game day it came on.
	Plans string
}

// Figures computes the report of a game.
func (r *Result) Figures() Figures {
	f := Figures{Name: r.Config.Name(), LastDay: r.Day, Winner: string(r.Winner), Limit: r.Config.Provider.Recipients,
		Refused: r.Refused, Holds: r.Holds, Dead: r.Dead, Written: r.Written, Skipped: r.Skipped, PerPlayerDay: map[string]float64{},
		LongestByClass: map[string]time.Duration{}}
	end := r.Ended
	if end.IsZero() {
		end = r.Config.clockEnd(r)
	}
	f.Days = end.Sub(r.Started).Hours() / 24
	if !r.Drained.IsZero() {
		f.DrainDays = r.Drained.Sub(r.Started).Hours() / 24
	}
	last := map[string]time.Time{}
	for _, d := range r.Deliveries {
		if d.At.After(last[d.MessageID]) {
			last[d.MessageID] = d.At
		}
	}
	players := map[string]bool{}
	for _, a := range r.Players {
		players[a] = true
	}
	// Each post is found, by its mark, in whatever mail brings it to a
	// reader: a copy of its own or a digest. first is when each reader
	// first got it.
	first := map[string]map[string]time.Time{}
	// lastThread is each player's latest post or digest: a player removed
	// from the game (two missed votes) reads the thread no more, and a
	// post is owed only to those who still got the thread after it.
	lastThread := map[string]time.Time{}
	byID := map[string][]Delivery{}
	for _, d := range r.Deliveries {
		byID[d.MessageID] = append(byID[d.MessageID], d)
	}
	recipients := 0
	for _, m := range r.Outbox {
		c := r.Class[m.ID]
		recipients += len(m.To)
		if t, ok := last[m.MessageID]; ok {
			if d, seen := f.LongestByClass[c]; !seen || t.Sub(m.CreatedAt) > d {
				f.LongestByClass[c] = t.Sub(m.CreatedAt)
			}
		}
		for _, to := range m.To {
			if players[strings.ToLower(to)] {
				f.PerPlayerDay[c]++
			}
		}
		for _, mark := range r.Marks[m.ID] {
			for _, d := range byID[m.MessageID] {
				to := strings.ToLower(d.To)
				if !players[to] {
					continue
				}
				if first[mark] == nil {
					first[mark] = map[string]time.Time{}
				}
				if t, ok := first[mark][to]; !ok || d.At.Before(t) {
					first[mark][to] = d.At
				}
			}
		}
		if m.Kind != "thread" {
			continue
		}
		for _, d := range byID[m.MessageID] {
			if to := strings.ToLower(d.To); players[to] && d.At.After(lastThread[to]) {
				lastThread[to] = d.At
			}
		}
	}
	var waits []time.Duration
	for mark, handled := range r.Posted {
		var latest time.Time
		missing := false
		for _, a := range r.Players {
			t, ok := first[mark][a]
			if !ok && lastThread[a].After(handled) {
				missing = true
				break
			}
			if t.After(latest) {
				latest = t
			}
		}
		if missing {
			f.Undelivered++
			continue
		}
		waits = append(waits, latest.Sub(handled))
	}
	sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
	f.Posts = len(waits)
	if len(waits) > 0 {
		f.LongestWait, f.MedianWait = waits[len(waits)-1], waits[len(waits)/2]
	}
	if f.Days > 0 {
		for c := range f.PerPlayerDay {
			f.PerPlayerDay[c] /= float64(len(r.Players)) * f.Days
		}
		f.QueuedPerDay = float64(recipients) / f.Days
	}
	f.PeakDay, _ = r.PeakDay()
	var plans []string
	for _, p := range r.Plans {
		every := "as chosen"
		if p.Every > 0 {
			every = "every " + p.Every.String()
		}
		plans = append(plans, fmt.Sprintf("day %.1f %s", p.At.Sub(r.Started).Hours()/24, every))
	}
	f.Plans = fmt.Sprintf("%d changes (%s)", len(plans), strings.Join(plans, ", "))
	return f
}

// clockEnd is the time of the last delivery, for a game that did not end.
func (c Config) clockEnd(r *Result) time.Time {
	var t time.Time
	for _, d := range r.Deliveries {
		if d.At.After(t) {
			t = d.At
		}
	}
	return t
}

// Name names the game: setup, posts a day, provider.
func (c Config) Name() string {
	return fmt.Sprintf("%dp/%d posts, %s %d", c.Setup.Players, c.PostsPerDay, c.Provider.Name, c.Provider.Recipients)
}

func days(d time.Duration) string {
	h := d.Hours()
	if h < 48 {
		return fmt.Sprintf("%.1f h", h)
	}
	return fmt.Sprintf("%.1f days", h/24)
}

// Summary is the figures of one game in a few lines.
func (f Figures) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s won on day %d after %.1f game days; last mail sent %.1f days after the start\n",
		f.Name, f.Winner, f.LastDay, f.Days, f.DrainDays)
	fmt.Fprintf(&b, "  the host's plan for the thread: %s\n", f.Plans)
	fmt.Fprintf(&b, "  posts %d: longest wait %s, median %s (handed to the host to delivered to the last player, alone or in a digest); not delivered %d\n",
		f.Posts, days(f.LongestWait), days(f.MedianWait), f.Undelivered)
	fmt.Fprintf(&b, "  recipients queued %.0f per game day against a budget of %d; peak rolling day %d; provider refusals %d; holds %d\n",
		f.QueuedPerDay, f.Limit, f.PeakDay, f.Refused, f.Holds)
	b.WriteString("  longest wait by class, queued to delivered:")
	for _, c := range Classes {
		if d, ok := f.LongestByClass[c]; ok {
			fmt.Fprintf(&b, " %s %s;", c, days(d))
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  dead: %s\n", strings.Join(f.Dead, ", "))
	fmt.Fprintf(&b, "  players wrote %v; could not send %v\n", f.Written, f.Skipped)
	return b.String()
}

// Table is the mails per player per game day, by class, one row per game,
// as a Markdown table.
func Table(fs []Figures) string {
	var b strings.Builder
	b.WriteString("| game | " + strings.Join(Classes, " | ") + " | all | queued rcpts/day | budget | longest wait | median wait | days |\n|")
	for range len(Classes) + 7 {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, f := range fs {
		all := 0.0
		fmt.Fprintf(&b, "| %s |", f.Name)
		for _, c := range Classes {
			all += f.PerPlayerDay[c]
			fmt.Fprintf(&b, " %.2f |", f.PerPlayerDay[c])
		}
		fmt.Fprintf(&b, " %.2f | %.0f | %d | %s | %s | %.1f |\n", all, f.QueuedPerDay, f.Limit, days(f.LongestWait), days(f.MedianWait), f.Days)
	}
	return b.String()
}
