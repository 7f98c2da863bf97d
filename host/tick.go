package host

import (
	"context"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// RunClock applies every game's deadlines as they come, until ctx ends. A
// deadline that passed while the host was down is applied at once, once.
func (h *Host) RunClock(ctx context.Context) error {
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
		if next, ok := h.nextDeadline(); ok {
			timer = time.NewTimer(h.clock.Until(next))
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

// TickDue applies what the clock has made due in every game, each game in
// a transaction of its own.
func (h *Host) TickDue(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.Now()
	for id, g := range h.games {
		if !g.hasNext || g.next.After(now) {
			continue
		}
		err := h.transact(ctx, "deadline", func(w *work) error {
			wg := w.game(id)
			w.record(id, engine.Tick(wg.state, w.now))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
