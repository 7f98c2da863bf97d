package host

import (
	"context"
	"fmt"
	"strings"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// Outbox is the store's outbox as the sender drains it, but for one
// thing: a message refused for good is marked failed in the transaction
// that queues the referee's notice of it, so that no crash between the two
// can lose the notice.
type Outbox struct {
	*store.Store
	h *Host
}

// Outbox returns the outbox for the sender.
func (h *Host) Outbox() Outbox { return Outbox{Store: h.st, h: h} }

// MarkFailed records that the server refused a message for good and tells
// the game's referee.
func (o Outbox) MarkFailed(ctx context.Context, id int64, errText string) error {
	h := o.h
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.transact(ctx, fmt.Sprintf("outbox:%d", id), func(w *work) error {
		m, err := w.tx.OutMessageByID(ctx, id)
		if err != nil {
			return err
		}
		if err := w.tx.MarkFailed(ctx, id, errText); err != nil {
			return err
		}
		m.Attempts++
		return h.noticeFailure(w, m, errText)
	})
}

// DeliveryFailed tells a game's referee that a message reached only some
// of its recipients (the others were refused for good).
func (h *Host) DeliveryFailed(ctx context.Context, m store.OutMessage, cause error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.transact(ctx, "failure:"+m.MessageID, func(w *work) error {
		return h.noticeFailure(w, m, cause.Error())
	})
}

// noticeFailure queues the referee's notice of a failed delivery. A failed
// notice to the referee is only logged: reporting it by mail would loop.
func (h *Host) noticeFailure(w *work, m store.OutMessage, errText string) error {
	h.log.Warn("delivery failed", "message_id", m.MessageID, "to", strings.Join(m.To, ","), "kind", m.Kind, "err", errText)
	g := h.games[m.Game]
	if g == nil {
		return nil
	}
	for _, to := range m.To {
		if strings.EqualFold(to, g.state.Referee) {
			return nil
		}
	}
	msg, err := h.mail.DeliveryFailure(compose.Failure{State: g.state, Dir: g.dir(),
		Recipient: strings.Join(m.To, ", "), Kind: m.Kind, MessageID: m.MessageID,
		Error: errText, Attempts: m.Attempts, Now: w.now})
	if err != nil {
		return &failure{err}
	}
	w.out = append(w.out, msg)
	return nil
}
