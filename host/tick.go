package host

import (
	"context"
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

// nextDeadline is the earliest deadline of any game.
func (h *Host) nextDeadline() (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var next time.Time
	found := false
	for _, g := range h.games {
		if g.hasNext && (!found || g.next.Before(next)) {
			next, found = g.next, true
		}
	}
	return next, found
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
	for _, g := range h.games {
		if !g.hasNext {
			continue
		}
		d := h.clock.Until(g.next)
		if h.opts.ArrivalOrder && !g.next.After(now) && !h.readPast(g.next) {
			d = max(time.Until(h.graceEnd(g)), 0)
		}
		if !found || d < wait {
			wait, found = d, true
		}
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
	for _, id := range h.sortedGames() {
		g := h.games[id]
		if !g.hasNext || g.next.After(now) {
			continue
		}
		at, unread := now, false
		deadline := g.next
		if h.opts.ArrivalOrder {
			if !h.readPast(deadline) {
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
	return moved, nil
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
	case err != nil:
		h.log.Error("dropping the bodies of old inbound mail failed", "err", err)
	case n > 0:
		h.log.Info("bodies of old inbound mail dropped, headers and outcomes kept", "messages", n, "before", before)
	}
}
