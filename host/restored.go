package host

import (
	"context"
	"fmt"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// Restored queues a game's restore notice (compose.Restored) to its
// referee: the account of what a restore of the lost database did to
// the game. It goes in the outbox, as all the host's mail does, so that
// it is sent once and survives a restart; the host fills in the game's
// state and directory. It returns the notice's Message-ID, "" when the
// game has no referee to tell.
func (h *Host) Restored(ctx context.Context, game string, n compose.RestoreNotice) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var id string
	err := h.transact(ctx, "restore", func(w *work) error {
		g := w.game(game)
		if g == nil {
			return fmt.Errorf("restore notice: no game %s", game)
		}
		if g.state.Referee == "" {
			return nil
		}
		n.State, n.Dir, n.Now = g.state, g.dir(), w.now
		msg, err := h.mail.Restored(n)
		if err != nil {
			return &failure{fmt.Errorf("compose the restore notice: %w", err)}
		}
		w.out = append(w.out, msg)
		id = msg.MessageID
		return nil
	})
	return id, err
}

// PauseForRestore pauses a game as its referee's PAUSE does, for a
// restore that found part of its mail deleted from the mailbox: nothing
// more is decided, and no deadline passes, on mail that may be missing,
// until the referee has looked and sent RESUME. Everyone in the game is
// told it is paused, as by the referee's PAUSE. It says whether it paused
// the game: one that has ended, or is paused already, is left as it is.
func (h *Host) PauseForRestore(ctx context.Context, game string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	paused := false
	err := h.transact(ctx, "restore", func(w *work) error {
		g := w.game(game)
		if g == nil {
			return fmt.Errorf("pause: no game %s", game)
		}
		if g.state.Paused || g.state.Phase == engine.EndedPhase || g.state.Phase == engine.SignupPhase {
			return nil
		}
		evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdPause, By: engine.Referee, Channel: engine.Private}, h.env(w, game))
		if err != nil {
			return fmt.Errorf("pause %s: %w", game, err)
		}
		w.record(game, evs)
		paused = true
		return nil
	})
	return paused, err
}
