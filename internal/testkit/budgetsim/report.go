package budgetsim

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Figures sum a game up.
type Figures struct {
	Name string
	// Posts counts the players' thread posts (votes among them) the host
	// relayed; LongestWait and MedianWait are how long one took, in game
	// time, from the moment the host handled it to its delivery to the
	// last of its readers.
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
	// A post's copies (one message per reader) share the cause: the
	// inbound message that carried it.
	type post struct {
		handled, delivered time.Time
		undelivered        bool
	}
	posts := map[string]*post{}
	players := map[string]bool{}
	for _, a := range r.Players {
		players[a] = true
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
		if c != ClassPost || !strings.HasPrefix(m.Cause, "inbox:") {
			continue
		}
		p := posts[m.Cause]
		if p == nil {
			p = &post{handled: m.CreatedAt}
			posts[m.Cause] = p
		}
		if m.CreatedAt.Before(p.handled) {
			p.handled = m.CreatedAt
		}
		if t, ok := last[m.MessageID]; ok && t.After(p.delivered) {
			p.delivered = t
		} else if !ok {
			p.undelivered = true
		}
	}
	var waits []time.Duration
	for _, p := range posts {
		if p.undelivered {
			f.Undelivered++
			continue
		}
		waits = append(waits, p.delivered.Sub(p.handled))
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
	fmt.Fprintf(&b, "  posts relayed %d: longest wait %s, median %s (handled to delivered to the last reader); not delivered %d\n",
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
