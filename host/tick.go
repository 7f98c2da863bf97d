package host

import (
	"context"
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// RunClock applies every game's deadlines as they come, until ctx ends. A
// deadline that passed while the host was down is applied at once, once;
// with Options.ArrivalOrder, once the mail that reached the mailbox before
// it has been read, or its grace has run out.
func (h *Host) RunClock(ctx context.Context) error {
	// Housekeeping (the bodies of old inbound mail) runs on start and
	// every hour.
	hourly := time.NewTicker(time.Hour)
	defer hourly.Stop()
	h.dropOldRawMail(ctx)
	for {
		if err := h.TickDue(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h.log.Error("deadline processing failed; retrying", "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if wait, ok := h.nextWake(); ok {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return ctx.Err()
		case <-h.wake:
		case <-fire:
		case <-hourly.C:
			h.dropOldRawMail(ctx)
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// publishBarrier records the earliest ordered deadline of any game for
// Barrier. The caller holds mu, with the games as they stand between
// transactions.
func (h *Host) publishBarrier() {
	next, found := h.schedule.earliestOrdered()
	if !found {
		h.barrier.Store(nil)
		return
	}
	real := h.clock.RealAt(next)
	h.barrier.Store(&real)
}

// nextWake is how long the clock loop may sleep: until the next deadline,
// or, for a deadline that waits for unread mail, until its grace ends (the
// watcher's Advance applies it sooner, once the mail is read).
func (h *Host) nextWake() (time.Duration, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	var wait time.Duration
	found := false
	consider := func(d time.Duration) {
		if !found || d < wait {
			wait, found = d, true
		}
	}
	// A deadline that has passed waits, with ArrivalOrder, for the mail
	// that arrived before it to be read, or for its grace to end.
	next, later := h.schedule.visit(now, func(id string) {
		g := h.games[id]
		d := h.clock.Until(g.next)
		if h.opts.ArrivalOrder && g.waitsForMail(g.next) && !h.readPast(g.next) {
			d = max(time.Until(h.graceEnd(g)), 0)
		}
		consider(d)
	})
	if later {
		consider(h.clock.Until(next))
	}
	// The sending plan is weighed again now and then while rounds run,
	// and a close that waits for held mail looks whether it has gone out.
	running, waiting := len(h.schedule.running) > 0, false
	for id := range h.schedule.waiting {
		waiting = waiting || h.schedule.running[id]
	}
	if running {
		d := max(time.Until(h.nextPlan), 0)
		if waiting {
			d = min(d, h.heldCheckEvery())
		}
		consider(d)
	}
	return wait, found
}

// TickDue applies what the clock has made due in every game, each game in
// a transaction of its own.
func (h *Host) TickDue(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.tickDue(ctx)
	return err
}

// tickDue is TickDue with h.mu held; it says how many games moved on.
//
// With ArrivalOrder a deadline is applied at its own time, once every
// message that reached the mailbox before it has been handled: the
// commands that arrived before it count before it, and those that arrived
// after it (the watcher holds them back until then) after it. When the
// mailbox cannot be read for the game's grace, the deadline is applied all
// the same and the referee is told that mail may be missing.
func (h *Host) tickDue(ctx context.Context) (int, error) {
	now := h.clock.Now()
	moved := 0
	for _, id := range h.schedule.toTick(now) {
		g := h.games[id]
		if g.state.MailWaiting() {
			flowed, err := h.mailFlowed(ctx, id)
			if err != nil {
				return moved, err
			}
			if flowed {
				moved++
				g = h.games[id]
			}
		}
		if !g.hasNext || g.next.After(now) {
			continue
		}
		at, unread := now, false
		deadline := g.next
		if h.opts.ArrivalOrder {
			if g.waitsForMail(deadline) && !h.readPast(deadline) {
				if h.clock.real().Before(h.graceEnd(g)) {
					continue
				}
				unread = true
			}
			at = deadline
			if at.Before(g.state.Clock) {
				at = g.state.Clock
			}
		}
		if waited, err := h.waitForHeldMail(ctx, id, at); err != nil {
			return moved, err
		} else if waited {
			moved++
			continue
		}
		applied := 0
		err := h.transactAt(ctx, "deadline", at, func(w *work) error {
			wg := w.game(id)
			evs := engine.Tick(wg.state, w.now)
			w.record(id, evs)
			applied = len(evs)
			if unread && len(evs) > 0 {
				return h.noticeUnread(w, wg, deadline)
			}
			return nil
		})
		if err != nil {
			return moved, err
		}
		if applied > 0 {
			moved++
		}
	}
	if !h.clock.real().Before(h.nextPlan) {
		if err := h.replan(ctx); err != nil {
			return moved, fmt.Errorf("weigh the sending plan: %w", err)
		}
	}
	return moved, nil
}

// waitForHeldMail holds a round's close that the clock makes due at at,
// while mail its players need before it is held back by the sending
// limit, for the setup's grace at most (T4). It reports whether it did.
// The caller holds h.mu.
func (h *Host) waitForHeldMail(ctx context.Context, id string, at time.Time) (bool, error) {
	s := h.games[id].state
	grace := s.Setup.SendingGrace()
	if grace <= 0 || s.MailWaiting() || !s.ClockCloseDue(at) {
		return false, nil
	}
	closes := s.ClosesAt()
	latest := closes.Add(grace)
	if !latest.After(at) {
		return false, nil
	}
	held, err := h.heldBefore(ctx, id, closes)
	if err != nil || !held {
		return false, err
	}
	waited := false
	err = h.transactAt(ctx, "mail-wait", at, func(w *work) error {
		g := w.game(id)
		evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdMailWait, By: engine.Actor{Kind: engine.ByHost}, Time: latest},
			engine.Env{Now: w.now})
		w.record(id, evs)
		waited = err == nil
		return nil
	})
	if waited {
		h.log.Info("a close waits for the town's mail the sending limit holds back", "game", id, "closes_by", latest)
	}
	return waited, err
}

// mailFlowed closes a round that waits for held mail once that mail has
// gone out (T4). It reports whether it did. The caller holds h.mu.
func (h *Host) mailFlowed(ctx context.Context, id string) (bool, error) {
	s := h.games[id].state
	closes := s.MailWaitUntil.Add(-s.Setup.SendingGrace())
	n, err := h.unsentBefore(ctx, id, closes)
	if err != nil || n > 0 {
		return false, err
	}
	err = h.transact(ctx, "mail-flowed", func(w *work) error {
		g := w.game(id)
		evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdMailFlowed, By: engine.Actor{Kind: engine.ByHost}},
			engine.Env{Now: w.now})
		w.record(id, evs)
		if err != nil {
			h.log.Warn("the close that waited for held mail was not applied", "game", id, "err", err)
		}
		return nil
	})
	if err == nil {
		h.log.Info("the town's held mail has gone out; the round closes", "game", id)
	}
	return err == nil, err
}

// dropOldRawMail keeps only the header of inbound mail for games that
// ended longer ago than KeepRawMail, and of mail for no game received that
// long ago. A failure is only logged: it is tried again in an hour.
func (h *Host) dropOldRawMail(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Real time: mail is received in real time, and a game sped up for a
	// demo or a test ends in a game time far ahead of it, so that its mail
	// is kept for the run.
	before := h.clock.real().Add(-h.opts.KeepRawMail)
	var n int64
	err := h.st.Update(ctx, func(tx *store.Tx) error {
		var err error
		n, err = tx.DropRawInbound(ctx, before)
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopping: it is done at the next start.
	case err != nil:
		h.log.Error("dropping the bodies of old inbound mail failed", "err", err)
	case n > 0:
		h.log.Info("bodies of old inbound mail dropped, headers and outcomes kept", "messages", n, "before", before)
	}
}
