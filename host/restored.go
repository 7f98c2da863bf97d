package host

import (
	"context"
	"fmt"

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
