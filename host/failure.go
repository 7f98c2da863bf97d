package host

import (
	"context"
	"strings"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// DeliveryFailed tells a game's referee that a message could not be
// delivered (the SMTP server refused it for good). A failed notice to the
// referee is only logged: reporting it by mail would loop.
func (h *Host) DeliveryFailed(ctx context.Context, m store.OutMessage, cause error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := h.games[m.Game]
	h.log.Warn("delivery failed", "message_id", m.MessageID, "to", strings.Join(m.To, ","), "kind", m.Kind, "err", cause)
	if g == nil {
		return nil
	}
	for _, to := range m.To {
		if strings.EqualFold(to, g.state.Referee) {
			return nil
		}
	}
	return h.transact(ctx, "failure:"+m.MessageID, func(w *work) error {
		msg, err := h.mail.DeliveryFailure(compose.Failure{State: g.state, Dir: g.dir(),
			Recipient: strings.Join(m.To, ", "), Kind: m.Kind, MessageID: m.MessageID,
			Error: cause.Error(), Attempts: m.Attempts, Now: w.now})
		if err != nil {
			return err
		}
		w.out = append(w.out, msg)
		return nil
	})
}
