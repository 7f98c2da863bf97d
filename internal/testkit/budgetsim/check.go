package budgetsim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/store"
)

// Problems returns what broke the promises of the sending budget: a
// refusal by the provider, more recipients in a rolling day than its
// limit, a message not sent or not delivered exactly once to each of its
// recipients, a delivery of something never queued, or a secret (a role,
// a night's result) delivered after a thread post queued after it.
func (r *Result) Problems() []string {
	var out []string
	add := func(format string, args ...any) {
		if len(out) < 20 {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	if r.Refused > 0 {
		add("the provider refused the host's mail %d times", r.Refused)
	}
	if peak, at := r.PeakDay(); peak > r.Config.Provider.Recipients {
		add("%d recipients in the day before %s, past the limit of %d", peak, at.Format(time.RFC3339), r.Config.Provider.Recipients)
	}
	got := map[string]int{}
	for _, d := range r.Deliveries {
		got[d.MessageID+" "+d.To]++
	}
	want := map[string]bool{}
	for _, m := range r.Outbox {
		if m.Status != store.OutSent {
			add("message %d (%s) ended %s: %s", m.ID, m.Kind, m.Status, m.LastError)
		}
		for _, to := range m.To {
			k := m.MessageID + " " + strings.ToLower(to)
			want[k] = true
			if m.Status == store.OutSent && got[k] != 1 {
				add("message %d (%s) reached %s %d times", m.ID, m.Kind, to, got[k])
			}
		}
	}
	for k, n := range got {
		if !want[k] {
			add("%d deliveries of %s, which the host never queued", n, k)
		}
	}
	out = append(out, r.secretsOutOfOrder()...)
	return out
}

// secretsOutOfOrder checks each reader's deliveries in the provider's
// order: a secret must arrive before every thread post queued after it.
func (r *Result) secretsOutOfOrder() []string {
	byID := map[string]store.OutMessage{}
	for _, m := range r.Outbox {
		byID[m.MessageID] = m
	}
	perReader := map[string][]Delivery{}
	for _, d := range r.Deliveries {
		perReader[d.To] = append(perReader[d.To], d)
	}
	var out []string
	for to, ds := range perReader {
		sort.SliceStable(ds, func(i, j int) bool { return ds[i].Seq < ds[j].Seq })
		var latestPost int64
		for _, d := range ds {
			m := byID[d.MessageID]
			switch c := r.Class[m.ID]; {
			case c == ClassPost:
				latestPost = max(latestPost, m.ID)
			case secret(c) && m.ID < latestPost:
				out = append(out, fmt.Sprintf("%s got %s (queued as %d) after a post queued as %d", to, c, m.ID, latestPost))
			}
		}
	}
	sort.Strings(out)
	return out
}

// PeakDay is the most recipients the provider took in any rolling 24
// hours, and the end of that day.
func (r *Result) PeakDay() (int, time.Time) {
	at := make([]time.Time, len(r.Deliveries))
	for i, d := range r.Deliveries {
		at[i] = d.At
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	peak, end, lo := 0, time.Time{}, 0
	for hi, t := range at {
		for !at[lo].After(t.Add(-24 * time.Hour)) {
			lo++
		}
		if n := hi - lo + 1; n > peak {
			peak, end = n, t
		}
	}
	return peak, end
}
