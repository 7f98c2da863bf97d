package host

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// sendingDay is the budget's window in real time: a day of the host's
// clock.
func (h *Host) sendingDay() time.Duration {
	if h.opts.SendingDay > 0 {
		return h.opts.SendingDay
	}
	return 24 * time.Hour
}

// planDwell is the least game time a plan stays as it is: a change of the
// thread's way is a mail to every reader, and the pressure on the budget
// comes and goes with the day's posts and the window's sends ageing out.
const planDwell = 6 * time.Hour

// planEvery is how often the host weighs its games' rounds against the
// sending budget: a 96th of its day, a quarter of an hour.
func (h *Host) planEvery() time.Duration { return h.sendingDay() / 96 }

// heldCheckEvery is how often a close that waits for held mail looks
// whether it has gone out: a 288th of the host's day, five minutes.
func (h *Host) heldCheckEvery() time.Duration { return h.sendingDay() / 288 }

// recipientLimit is the budget: the configured figure, else the one
// learned from the provider's refusal, else 0 for none known.
func (h *Host) recipientLimit(ctx context.Context) (int, store.SendingLimit, error) {
	lim, err := h.st.SendingLimit(ctx)
	if err != nil {
		return 0, lim, err
	}
	if h.opts.RecipientsPerDay > 0 {
		return h.opts.RecipientsPerDay, lim, nil
	}
	return lim.Learned, lim, nil
}

// runningGames are the games whose rounds run, in the order of their
// names. The caller holds h.mu.
func (h *Host) runningGames() []string {
	var ids []string
	for id, g := range h.games {
		if (g.state.Phase == engine.DayPhase || g.state.Phase == engine.NightPhase) && !g.state.Paused {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// roundName names a game's round as its thread does.
func roundName(s *engine.State) string {
	if s.Phase == engine.NightPhase {
		return fmt.Sprintf("Night %d", s.Day)
	}
	return fmt.Sprintf("Day %d", s.Day)
}

// replan weighs every running game's round against the sending budget
// and sets or ends each game's plan (T3); it keeps each game's forecast
// for STATUS and `games show`. The caller holds h.mu.
func (h *Host) replan(ctx context.Context) error {
	real := h.clock.real()
	h.nextPlan = real.Add(h.planEvery())
	ids := h.runningGames()
	if len(ids) == 0 {
		return nil
	}
	limit, _, err := h.recipientLimit(ctx)
	if err != nil {
		return err
	}
	now := h.clock.Now()
	if limit == 0 {
		// No budget known: nothing to fit; a plan from an earlier one ends.
		for _, id := range ids {
			if h.games[id].state.MailPlan > 0 {
				if err := h.setPlan(ctx, id, store.SendingPlan{Game: id, PlannedAt: real, Round: roundName(h.games[id].state)}, compose.SendingStatus{}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	day := h.sendingDay()
	sent, err := h.st.SentSince(ctx, real.Add(-day))
	if err != nil {
		return err
	}
	waiting, err := h.st.WaitingRecipients(ctx)
	if err != nil {
		return err
	}
	used := 0
	for _, x := range sent {
		used += x.Recipients
	}
	loads := make([]roundLoad, len(ids))
	current := make([]time.Duration, len(ids))
	var first time.Time
	for i, id := range ids {
		g := h.games[id]
		loads[i] = loadOf(g.state, len(g.observers), now)
		current[i] = g.state.MailPlan
		if c := h.clock.RealAt(g.state.ClosesAt()); first.IsZero() || c.Before(first) {
			first = c
		}
	}
	// The room until the earliest close bounds every round's: what is
	// sent before it counts against the others too.
	if first.Before(real) {
		first = real
	}
	room := roomUntil(limit, day, sent, waiting, real, first)
	plans := fitPlan(room, loads, current)
	shares := sharesOf(room, loads)
	ss := compose.SendingStatus{Used: used, Limit: limit}
	var unchanged []store.SendingPlan
	for i, id := range ids {
		s := h.games[id].state
		f := store.SendingPlan{Game: id, PlannedAt: real, Round: roundName(s), Interval: plans[i],
			AsChosen: loads[i].asChosen(), Planned: loads[i].asChosen(), Room: shares[i], Limit: limit, ClosesAt: s.ClosesAt()}
		if plans[i] > 0 {
			f.Planned = loads[i].planned(plans[i])
		}
		if plans[i] != s.MailPlan && !s.MailPlanAt.IsZero() && now.Sub(s.MailPlanAt) < planDwell {
			// Too soon after the last change: every change is a mail to
			// every reader, and the budget itself is kept by the sender.
			plans[i] = s.MailPlan
			f.Interval, f.Planned = s.MailPlan, loads[i].asChosen()
			if s.MailPlan > 0 {
				f.Planned = loads[i].planned(s.MailPlan)
			}
		}
		if plans[i] == s.MailPlan {
			unchanged = append(unchanged, f)
			continue
		}
		if err := h.setPlan(ctx, id, f, ss); err != nil {
			return err
		}
	}
	return h.st.Update(ctx, func(tx *store.Tx) error {
		for _, f := range unchanged {
			if err := tx.SavePlan(ctx, f); err != nil {
				return err
			}
		}
		return nil
	})
}

// setPlan applies a game's new plan, keeps its forecast and tells its
// referee, in one transaction. The caller holds h.mu.
func (h *Host) setPlan(ctx context.Context, id string, f store.SendingPlan, ss compose.SendingStatus) error {
	return h.transact(ctx, "sending-plan", func(w *work) error {
		g := w.game(id)
		if g == nil {
			return nil
		}
		evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdMailPlan, By: engine.Actor{Kind: engine.ByHost}, Duration: f.Interval},
			engine.Env{Now: w.now})
		w.record(id, evs)
		if err != nil {
			// Refused (the game moved on meanwhile): the clock's events are
			// kept, and the next look decides again.
			h.log.Warn("the sending plan was not applied", "game", id, "err", err)
			return nil
		}
		if err := w.tx.SavePlan(ctx, f); err != nil {
			return err
		}
		if g.state.Referee == "" || len(evs) == 0 || f.Limit == 0 {
			// No budget known any more (the configuration dropped it):
			// there are no figures to tell; the thread hears of the end.
			return nil
		}
		msg, err := h.mail.SendingPlan(compose.Plan{State: g.state, Dir: g.dir(), Forecast: *roundForecast(f), Sending: ss, Now: w.now})
		if err != nil {
			return &failure{fmt.Errorf("compose the sending plan notice: %w", err)}
		}
		w.out = append(w.out, msg)
		h.log.Info("the thread's plan for the sending budget changed", "game", id, "digest_every", f.Interval,
			"as_chosen", f.AsChosen, "planned", f.Planned, "room", f.Room, "limit", f.Limit)
		return nil
	})
}

// roundForecast is a stored forecast as the composer shows it.
func roundForecast(p store.SendingPlan) *compose.RoundForecast {
	return &compose.RoundForecast{Round: p.Round, Closes: p.ClosesAt, Every: p.Interval,
		AsChosen: p.AsChosen, Planned: p.Planned, Room: p.Room}
}

// heldBefore reports whether the game's mail that its town needs before
// deadline (the thread's posts and news with their tallies, the reminders
// to vote; see compose.Outgoing.Town) is held back by the sending limit:
// some of it queued by the deadline is unsent while the provider refuses
// for its limit or the budget has no room for it. Mail of the mafia list,
// answers to private commands, a night role's reminder and the referee's
// mail do not count: a close that waited for them would tell the town of
// them (T4). The caller holds h.mu.
func (h *Host) heldBefore(ctx context.Context, id string, deadline time.Time) (bool, error) {
	n, most, err := h.st.HeldFor(ctx, id, h.clock.RealAt(deadline))
	if err != nil || n == 0 {
		return false, err
	}
	limit, lim, err := h.recipientLimit(ctx)
	if err != nil {
		return false, err
	}
	if !lim.HeldSince.IsZero() {
		return true, nil
	}
	if limit == 0 {
		return false, nil
	}
	real := h.clock.real()
	sent, err := h.st.SentSince(ctx, real.Add(-h.sendingDay()))
	if err != nil {
		return false, err
	}
	used := 0
	for _, x := range sent {
		used += x.Recipients
	}
	return limit-used < most, nil
}

// unsentBefore counts the game's mail for the town queued by deadline
// that has not gone out yet.
func (h *Host) unsentBefore(ctx context.Context, id string, deadline time.Time) (int, error) {
	n, _, err := h.st.HeldFor(ctx, id, h.clock.RealAt(deadline))
	return n, err
}
