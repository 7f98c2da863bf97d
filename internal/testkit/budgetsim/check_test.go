package budgetsim

import (
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/store"
)

// The checks of a game find each broken promise: a result that keeps them
// all passes, and each single breach is named.
func TestProblemsFindEachBreach(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	good := func() *Result {
		r := &Result{Config: Config{Provider: Provider{Recipients: 2}}, Class: map[int64]string{1: ClassRole, 2: ClassPost, 3: ClassNight}}
		r.Outbox = []store.OutMessage{
			{ID: 1, MessageID: "<role@x>", Kind: "role", To: []string{"a@x"}, Status: store.OutSent, CreatedAt: t0},
			{ID: 2, MessageID: "<post@x>", Kind: "thread", To: []string{"a@x"}, Status: store.OutSent, CreatedAt: t0},
			{ID: 3, MessageID: "<night@x>", Kind: "private", To: []string{"b@x"}, Status: store.OutSent, CreatedAt: t0},
		}
		r.Deliveries = []Delivery{
			{Seq: 1, At: t0, To: "a@x", MessageID: "<role@x>"},
			{Seq: 2, At: t0.Add(time.Hour), To: "a@x", MessageID: "<post@x>"},
			// A day and a second later: the first has left the window.
			{Seq: 3, At: t0.Add(24*time.Hour + time.Second), To: "b@x", MessageID: "<night@x>"},
		}
		return r
	}
	if p := good().Problems(); len(p) != 0 {
		t.Fatalf("a game that kept every promise: %v", p)
	}
	for _, c := range []struct {
		name, want string
		breach     func(r *Result)
	}{
		{"refused", "refused", func(r *Result) { r.Refused = 1 }},
		{"over the limit", "past the limit", func(r *Result) { r.Deliveries[2].At = t0.Add(23 * time.Hour) }},
		{"not sent", "ended pending", func(r *Result) { r.Outbox[2].Status = store.OutPending }},
		{"twice", "2 times", func(r *Result) { r.Deliveries = append(r.Deliveries, r.Deliveries[0]) }},
		{"lost", "0 times", func(r *Result) { r.Deliveries = r.Deliveries[1:] }},
		{"never queued", "never queued", func(r *Result) { r.Deliveries[2].To = "c@x" }},
		{"secret late", "after a post", func(r *Result) {
			// The role, queued before the post, reaches its reader after
			// it.
			r.Deliveries[0].Seq, r.Deliveries[1].Seq = 2, 1
		}},
	} {
		r := good()
		c.breach(r)
		p := r.Problems()
		if !strings.Contains(strings.Join(p, "\n"), c.want) {
			t.Errorf("%s: problems %q do not say %q", c.name, p, c.want)
		}
	}
}

func TestPeakDay(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	r := &Result{}
	for _, h := range []int{0, 1, 2, 24, 25, 30} {
		r.Deliveries = append(r.Deliveries, Delivery{At: t0.Add(time.Duration(h) * time.Hour)})
	}
	// (t-24h, t]: at 25h the deliveries of 2, 24 and 25 hours; at 24h
	// those of 1, 2 and 24.
	if n, _ := r.PeakDay(); n != 3 {
		t.Fatalf("peak %d, want 3", n)
	}
}
