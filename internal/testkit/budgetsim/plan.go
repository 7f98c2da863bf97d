package budgetsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// action is something a player will write at a time.
type action struct {
	at  time.Time
	seq int
	who *player
	// round is the round it belongs to: it is dropped when the game has
	// moved on before it is due.
	round string
	kind  string
	// write returns the address and the body, or "" when there is nothing
	// to send after all.
	write func(s *engine.State) (to, body string)
}

// roundKey names the round or night under way.
func roundKey(s *engine.State) string {
	return fmt.Sprintf("%s/%d/%s/%v/%v", s.Phase, s.Day, s.Round, s.Extra, s.Candidates)
}

// between is a uniform time in [a, b).
func between(rng *rand.Rand, a, b time.Time) time.Time {
	if !b.After(a) {
		return a
	}
	return a.Add(time.Duration(rng.Int64N(int64(b.Sub(a)))))
}

// planRound schedules the votes, unvotes and locks of a day round as
// players cast them: most toward the end of the round, some changing
// their minds, most locking once they are sure.
func (w *world) planRound(s *engine.State, now time.Time) {
	key := roundKey(s)
	end := s.ClosesAt()
	if !end.After(now) {
		return
	}
	length := end.Sub(now)
	last := end.Add(-min(length/10, 30*time.Minute))
	for _, p := range w.players {
		if !p.alive(s) {
			continue
		}
		rng := p.rng
		// Votes come in the later half of the round.
		vote := between(rng, now.Add(length*45/100), end.Add(-length/6))
		w.schedule(vote, p, key, "vote", p.voteCmd)
		final := vote
		if rng.IntN(4) == 0 {
			unvote := between(rng, vote.Add(30*time.Minute), vote.Add(3*time.Hour))
			final = between(rng, unvote.Add(20*time.Minute), unvote.Add(2*time.Hour))
			if final.Before(last) {
				w.schedule(unvote, p, key, "unvote", func(s *engine.State) (string, string) {
					return p.thread, "UNVOTE\n\nChanging my mind; give me a while."
				})
				w.schedule(final, p, key, "vote", p.voteCmd)
			} else {
				final = vote
			}
		}
		if rng.IntN(10) < 8 {
			lock := between(rng, final.Add(20*time.Minute), final.Add(4*time.Hour))
			if lock.After(last) {
				lock = between(rng, final, last)
			}
			w.schedule(lock, p, key, "lock", p.lockCmd)
		}
	}
}

func (p *player) voteCmd(s *engine.State) (string, string) {
	t := p.voteFor(s)
	if t == "" {
		return "", ""
	}
	return p.thread, fmt.Sprintf("VOTE %s\n\n%s", t, fmt.Sprintf(chatter[p.rng.IntN(len(chatter))], t))
}

func (p *player) lockCmd(s *engine.State) (string, string) {
	if me := p.seat(s); me != nil && me.Vote > 0 {
		return p.thread, "LOCK"
	}
	// The vote was cleared meanwhile: vote again, and lock it.
	t := p.voteFor(s)
	if t == "" {
		return "", ""
	}
	return p.thread, "VOTE " + t + "\nLOCK"
}

// planNight schedules the night's actions, sent in its first hours so
// that it ends at its first 6-hour mark, and a few posts to the mafia
// list.
func (w *world) planNight(s *engine.State, now time.Time) {
	key := roundKey(s)
	var mafia []*player
	for _, p := range w.players {
		if !p.alive(s) {
			continue
		}
		if p.role == engine.Mafia {
			mafia = append(mafia, p)
			continue
		}
		if p.role == engine.Inspector || p.role == engine.Doctor || p.role == engine.Vigilante {
			w.schedule(between(p.rng, now.Add(20*time.Minute), now.Add(5*time.Hour)), p, key, "night", p.nightCmd)
		}
	}
	if len(mafia) == 0 {
		return
	}
	// One Mafioso names the victim; now and then another changes it.
	killers := 1 + w.rng.IntN(2)
	for range killers {
		p := mafia[w.rng.IntN(len(mafia))]
		w.schedule(between(p.rng, now.Add(20*time.Minute), now.Add(5*time.Hour)), p, key, "night", p.nightCmd)
	}
	for range 2 + w.rng.IntN(3) {
		p := mafia[w.rng.IntN(len(mafia))]
		w.schedule(between(p.rng, now.Add(10*time.Minute), now.Add(5*time.Hour)), p, key, "mafia",
			func(s *engine.State) (string, string) {
				t := p.others(s, true)
				if len(t) == 0 {
					return "", ""
				}
				return p.mafia, fmt.Sprintf("I think we go for %s tonight; they're getting close.", t[p.rng.IntN(len(t))])
			})
	}
}

func (p *player) nightCmd(s *engine.State) (string, string) {
	c := p.nightAction(s)
	if c == "" {
		return "", ""
	}
	return p.private, c
}

func (w *world) schedule(at time.Time, p *player, round, kind string, write func(*engine.State) (string, string)) {
	w.seq++
	w.pending = append(w.pending, action{at: at, seq: w.seq, who: p, round: round, kind: kind, write: write})
}

// due removes and returns the actions due at now, in time order.
func (w *world) due(now time.Time) []action {
	var out, keep []action
	for _, a := range w.pending {
		if a.at.After(now) {
			keep = append(keep, a)
		} else {
			out = append(out, a)
		}
	}
	w.pending = keep
	sort.Slice(out, func(i, j int) bool {
		if !out[i].at.Equal(out[j].at) {
			return out[i].at.Before(out[j].at)
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// activity weighs the hour of the day in the game's zone: little at night,
// some in the morning and at lunch, most in the evening.
func activity(local time.Time) float64 {
	switch h := local.Hour(); {
	case h < 7:
		return 0.1
	case h < 9:
		return 0.9
	case h < 12:
		return 0.8
	case h < 14:
		return 1.2
	case h < 18:
		return 0.8
	case h < 23:
		return 2.0
	default:
		return 0.6
	}
}

// meanActivity is activity's mean over a day, so that the rate averages
// PostsPerDay.
var meanActivity = func() float64 {
	sum := 0.0
	for h := range 24 {
		sum += activity(time.Date(2026, 1, 1, h, 0, 0, 0, time.UTC))
	}
	return sum / 24
}()

// poisson draws from a Poisson distribution of mean m (Knuth's method;
// m is small, a step's share of a day's posts).
func poisson(rng *rand.Rand, m float64) int {
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// planPosts adds the thread posts of one step of a day round: a Poisson
// process at PostsPerDay a day, weighed by the hour, each by a player
// drawn by how chatty they are.
func (w *world) planPosts(s *engine.State, from time.Time, step time.Duration) {
	local := from.In(s.GameZone())
	m := float64(w.cfg.PostsPerDay) * step.Hours() / 24 * activity(local) / meanActivity
	n := poisson(w.rng, m)
	if n == 0 {
		return
	}
	var living []*player
	total := 0.0
	for _, p := range w.players {
		if p.alive(s) {
			living = append(living, p)
			total += p.chatty
		}
	}
	key := roundKey(s)
	for range n {
		x := w.rng.Float64() * total
		p := living[len(living)-1]
		for _, q := range living {
			if x -= q.chatty; x < 0 {
				p = q
				break
			}
		}
		at := from.Add(time.Duration(w.rng.Int64N(int64(step))))
		w.schedule(at, p, key, "post", func(s *engine.State) (string, string) {
			body := p.post(s, w.recent)
			w.remember(p, body)
			if !p.alive(s) {
				// Killed since it was planned: the post goes to the
				// referee, not to the thread, and is not measured.
				return p.thread, body
			}
			// Each post carries a mark of its own, to find it in the
			// mail that brings it to each reader.
			mark := postMark(len(w.posted))
			w.posted[mark] = w.clock.Now()
			return p.thread, mark + "\n" + body
		})
	}
}

// remember keeps the latest posts for quoting.
func (w *world) remember(p *player, body string) {
	w.recent = append(w.recent, quoted{name: p.name, at: w.clock.Now().Format("Mon, 2 Jan 2006 at 15:04"), text: firstLines(body, 3)})
	if len(w.recent) > 8 {
		w.recent = w.recent[1:]
	}
}
