package host

import (
	"slices"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// An 11-player game sending each post to its 11 players and the
// referee, at 3.5 posts and votes an hour, 20 hours before the close.
var eleven = roundLoad{readers: 12, each: 12, perHour: 3.5, rest: 20 * time.Hour, fixed: 2*12 + 11}

func TestRoundLoadCountsWhatTheRoundSends(t *testing.T) {
	t.Parallel()
	if got, want := eleven.asChosen(), 12*70+35; got != want {
		t.Errorf("as chosen: %d recipients, want %d", got, want)
	}
	if got, want := eleven.planned(3*time.Hour), 12*7+35; got != want {
		t.Errorf("in digests every 3 h: %d recipients, want %d", got, want)
	}
	// Two readers of digests (every 2 hours by default) send less.
	l := eleven
	l.each = 10
	if got, want := l.asChosen(), 10*70+2*10+35; got != want {
		t.Errorf("with two readers of digests: %d, want %d", got, want)
	}
	// A setup's own interval is never shortened by a plan.
	l = eleven
	l.setupEvery = 4 * time.Hour
	if got, want := l.planned(time.Hour), 12*5+35; got != want {
		t.Errorf("a plan of 1 h in a game of 4-hour digests: %d, want %d", got, want)
	}
	// The last digest of a round goes out however short its rest.
	l.rest, l.perHour = time.Minute, 100
	if got := l.planned(12 * time.Hour); got != 12+35 {
		t.Errorf("a minute before the close: %d, want one digest and the fixed mail", got)
	}
}

func TestFitPlanChoosesTheShortestIntervalThatFits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		room    int
		current time.Duration
		want    time.Duration
	}{
		{"fits as chosen", 1000, 0, 0},
		{"every hour fits", 300, 0, time.Hour},
		{"every 3 hours fits", 150, 0, 3 * time.Hour},
		{"nothing fits: the longest", 10, 0, 12 * time.Hour},
		{"a plan stays until the round fits in four fifths", 1000, 3 * time.Hour, time.Hour},
		{"and then ends", 1200, 3 * time.Hour, 0},
		{"a plan lengthens as soon as it must", 150, 2 * time.Hour, 3 * time.Hour},
		// Every 2 hours sends 155: it fits 190, but not in four fifths.
		{"and shortens only with room to spare", 190, 3 * time.Hour, 3 * time.Hour},
		{"as here", 200, 3 * time.Hour, 2 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fitPlan(tc.room, []roundLoad{eleven}, []time.Duration{tc.current})
			if got[0] != tc.want {
				t.Errorf("room %d: interval %v, want %v", tc.room, got[0], tc.want)
			}
		})
	}
	// Two games share the room fairly: the quiet one fits as chosen and
	// keeps its way; the busy one is gathered to fit the rest.
	small := roundLoad{readers: 8, each: 8, perHour: 0.5, rest: 20 * time.Hour, fixed: 2*8 + 7}
	loads := []roundLoad{eleven, small}
	got := fitPlan(600, loads, []time.Duration{0, 0})
	shares := sharesOf(600, loads)
	if shares[0]+shares[1] > 600 || shares[1] < small.asChosen() {
		t.Errorf("shares %v of 600: the quiet game needs %d", shares, small.asChosen())
	}
	if got[1] != 0 {
		t.Errorf("the quiet game is gathered every %v, though it fits", got[1])
	}
	if got[0] == 0 || eleven.planned(got[0]) > shares[0] {
		t.Errorf("the busy game: interval %v sends %d, its share is %d", got[0], eleven.planned(got[0]), shares[0])
	}
	if j := slices.Index(engine.PlanIntervals, got[0]); j > 0 && eleven.planned(engine.PlanIntervals[j-1]) <= shares[0] {
		t.Errorf("a shorter interval than %v fits the busy game", got[0])
	}
	// Three busy games too many for the room: each gets a third.
	three := fitPlan(300, []roundLoad{eleven, eleven, eleven}, make([]time.Duration, 3))
	for i, every := range three {
		if every == 0 || eleven.planned(every) > 100 {
			t.Errorf("game %d of three: interval %v sends %d of its 100", i, every, eleven.planned(every))
		}
	}
}

func TestRoomUntilCountsTheWindowAtTheClose(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	sent := []store.Sent{
		{At: now.Add(-23 * time.Hour), Recipients: 100}, // out of the window an hour from now
		{At: now.Add(-2 * time.Hour), Recipients: 150},
	}
	if got := roomUntil(500, day, sent, 40, now, now); got != 500-250-40 {
		t.Errorf("room now: %d", got)
	}
	// Two hours ahead: a quarter of an hour from now the whole window
	// still counts, which leaves 210 for an eighth of the span: 1,680
	// for all of it; at the close, 310.
	if got := roomUntil(500, day, sent, 40, now, now.Add(2*time.Hour)); got != 500-150-40 {
		t.Errorf("room in 2 hours: %d", got)
	}
	// A round of 36 hours may send a day and a half's worth.
	if got := roomUntil(500, day, nil, 0, now, now.Add(36*time.Hour)); got != 750 {
		t.Errorf("room over 36 hours: %d", got)
	}
	// A window full now leaves nothing for the next hours, however long
	// the round: the mail waits until it frees.
	full := []store.Sent{{At: now.Add(-time.Hour), Recipients: 520}}
	if got := roomUntil(500, day, full, 0, now, now.Add(33*time.Hour)); got >= 0 {
		t.Errorf("room with the window over full: %d, want none", got)
	}
}

func TestLoadOfReadsTheGroupsPace(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)
	s := &engine.State{Phase: engine.DayPhase, Setup: engine.Classic(), StartedAt: start, Deadline: start.Add(36 * time.Hour)}
	for i := range 11 {
		s.Players = append(s.Players, engine.Player{Slot: i + 1, Alive: i < 9})
	}
	s.Players[0].Mail = engine.MailDigest
	// 24 hours of play: 90 posts and votes.
	s.ThreadNews = 90
	now := start.Add(24 * time.Hour)
	l := loadOf(s, 1, now)
	if l.readers != 13 || l.each != 12 {
		t.Errorf("readers %d, of whom %d take each post; want 13 and 12", l.readers, l.each)
	}
	if l.rest != 12*time.Hour {
		t.Errorf("rest %v, want 12h", l.rest)
	}
	// The group's own 90 in 24 hours, with 6 hours at a quarter post per
	// player and hour before it.
	if want := (90 + 0.25*11*6) / 30; l.perHour < want-1e-9 || l.perHour > want+1e-9 {
		t.Errorf("pace %.3f an hour, want %.3f", l.perHour, want)
	}
	if l.fixed != 2*13+9 {
		t.Errorf("fixed mail %d, want the close and the next start to 13 readers and 9 reminders", l.fixed)
	}
}
