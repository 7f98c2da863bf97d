package host

import (
	"context"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// RunClock applies every game's deadlines as they come, until ctx ends. A
// deadline that passed while the host was down is applied at once, once.
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
