package host

import (
	"math"
	"slices"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// The plan for the sending budget (T3). The budget is the recipients the
// mailbox may send in a rolling day, shared by every game of the host.
// While the thread's expected mail for the rest of a game's round fits
// that game's share of what the budget leaves, the thread goes as the
// setup and the players chose; when it does not, the game's thread is
// gathered into digests at the shortest interval that fits its share.

// roundLoad is one game's round as the plan sees it: who reads the
// thread, how fast the group writes, how long the round has left.
type roundLoad struct {
	// readers is the copies of one thread mail; each those who take each
	// post as they chose (the rest take digests).
	readers, each int
	// setupEvery is the setup's own digest interval, zero for none.
	setupEvery time.Duration
	// perHour is the group's pace: the thread's posts and votes per hour
	// of game time.
	perHour float64
	// rest is the game time left until the round closes.
	rest time.Duration
	// fixed is the rest of the round's other mail: the close and the next
	// round's start to every reader, a reminder to each living player.
	fixed int
}

// The group's pace before it has shown its own: a post or a vote per
// player every 4 hours of game time, weighed as 6 hours of play.
const (
	priorNewsPerPlayerHour = 0.25
	priorSpan              = 6 * time.Hour
)

// loadOf reads a game's round for the plan at game time now.
func loadOf(s *engine.State, observers int, now time.Time) roundLoad {
	l := roundLoad{readers: len(s.Players) + observers + 1, setupEvery: s.Setup.DigestInterval, fixed: 0}
	for i := range s.Players {
		p := &s.Players[i]
		if p.Mail == engine.MailEach || (p.Mail == "" && s.Setup.DigestInterval == 0) {
			l.each++
		}
		if p.Alive {
			l.fixed++ // the reminder
		}
	}
	if s.Setup.DigestInterval == 0 {
		l.each += observers + 1 // observers and the referee take the setup's way
	}
	l.fixed += 2 * l.readers // the close, and the next round's start
	if closes := s.ClosesAt(); closes.After(now) {
		l.rest = closes.Sub(now)
	}
	played := time.Duration(0)
	if !s.StartedAt.IsZero() && now.After(s.StartedAt) {
		played = now.Sub(s.StartedAt)
	}
	prior := priorNewsPerPlayerHour * float64(len(s.Players)) * priorSpan.Hours()
	l.perHour = (float64(s.ThreadNews) + prior) / (played + priorSpan).Hours()
	return l
}

// digestsIn is how many digests go out in rest at one every every: one
// for what is gathered when the round closes, however short the rest.
func digestsIn(rest, every time.Duration) int {
	return max(1, int(math.Ceil(float64(rest)/float64(every))))
}

// asChosen is the recipients the rest of the round takes as the setup and
// the players chose.
func (l roundLoad) asChosen() int {
	news := l.perHour * l.rest.Hours()
	n := float64(l.each) * news
	if digesters := l.readers - l.each; digesters > 0 {
		every := l.setupEvery
		if every == 0 {
			every = engine.DefaultDigestInterval
		}
		n += float64(digesters * digestsIn(l.rest, every))
	}
	return int(math.Ceil(n)) + l.fixed
}

// planned is the recipients the rest of the round takes with the thread
// gathered for everyone every every, or as chosen if that is no more.
func (l roundLoad) planned(every time.Duration) int {
	return min(l.readers*digestsIn(l.rest, max(every, l.setupEvery))+l.fixed, l.asChosen())
}

// Hysteresis: a plan ends only once what the players chose fits in
// endAt of the room, so that it does not come and go with every post.
const endAt = 0.8

// fitPlan chooses the digest interval of each game's thread. Each game
// has a share of room (sharesOf); a game whose round fits its share as
// chosen (a game under a plan: in endAt of it) goes as chosen, interval
// zero; any other is gathered at the shortest interval of
// engine.PlanIntervals whose mail fits its share, or the longest, and a
// plan in force is shortened only when the shorter one fits in endAt of
// the share. current is the plan in force in each game.
func fitPlan(room int, loads []roundLoad, current []time.Duration) []time.Duration {
	out := make([]time.Duration, len(loads))
	shares := sharesOf(room, loads)
	for i, l := range loads {
		share := float64(shares[i])
		fits := share
		if current[i] > 0 {
			fits *= endAt
		}
		if float64(l.asChosen()) <= fits {
			continue
		}
		out[i] = l.shortestFitting(share)
		if c := current[i]; c > 0 && out[i] < c && float64(l.planned(out[i])) > share*endAt {
			// Shorter digests only with room to spare: every change is
			// a mail to every reader.
			out[i] = c
		}
	}
	return out
}

// shortestFitting is the shortest interval of engine.PlanIntervals, and
// no shorter than the setup's, whose digests fit share; else the longest.
func (l roundLoad) shortestFitting(share float64) time.Duration {
	for _, every := range engine.PlanIntervals {
		if every >= l.setupEvery && float64(l.planned(every)) <= share {
			return every
		}
	}
	return engine.PlanIntervals[len(engine.PlanIntervals)-1]
}

// sharesOf divides room among the games, fairly: no game gets more than
// its round would send as chosen until every game has as much as another
// may have (max-min fairness), so a quiet game keeps its way while a busy
// one is gathered; what is left over is shared out evenly.
func sharesOf(room int, loads []roundLoad) []int {
	out := make([]int, len(loads))
	if len(loads) == 0 {
		return out
	}
	order := make([]int, len(loads))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return loads[a].asChosen() - loads[b].asChosen() })
	left := max(room, 0)
	for k, i := range order {
		fair := left / (len(order) - k)
		out[i] = min(loads[i].asChosen(), fair)
		left -= out[i]
	}
	for k := range order {
		out[order[k]] += left / len(order)
	}
	return out
}

// roomUntil is what the budget leaves for mail sent evenly between now
// and until, every time in the outbox's real clock. Over a span x from
// now the budget allows limit a day (more over a span longer than a day),
// less what was sent that is still within a day of now+x, less what waits
// to be sent; mail spread evenly over the whole span sends x/span of
// itself by then. The tightest of the spans an eighth, a quarter, half
// and all of the way to until bounds it: a window the sends of a busy
// morning fill leaves no room for the next hours, however long the round.
func roomUntil(limit int, day time.Duration, sent []store.Sent, waiting int, now, until time.Time) int {
	span := until.Sub(now)
	within := func(x time.Duration) float64 {
		allowed := float64(limit) * max(1, float64(x)/float64(day))
		used := 0
		for _, s := range sent {
			if s.At.After(now.Add(x - day)) {
				used += s.Recipients
			}
		}
		return allowed - float64(used) - float64(waiting)
	}
	if span <= 0 {
		return int(within(0))
	}
	room := within(span)
	for _, part := range []time.Duration{span / 8, span / 4, span / 2} {
		if part > 0 {
			room = min(room, within(part)*float64(span)/float64(part))
		}
	}
	return int(room)
}
