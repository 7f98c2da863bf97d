package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
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
		return h.noticeFailure(ctx, w, m, errText)
	})
}

// DeliveryFailed tells a game's referee that a message reached only some
// of its recipients (the others were refused for good).
func (h *Host) DeliveryFailed(ctx context.Context, m store.OutMessage, cause error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.transact(ctx, "failure:"+m.MessageID, func(w *work) error {
		// A message refused for every recipient was marked failed, and
		// told of, before the sender reports its refused recipients.
		if cur, err := w.tx.OutMessageByID(ctx, m.ID); err == nil && cur.Status == store.OutFailed {
			return nil
		}
		return h.noticeFailure(ctx, w, m, cause.Error())
	})
}

// failureNoticeEvery is how often the referee hears of failed deliveries
// to one recipient at most: an address that always bounces would have the
// referee told of every message of the game.
const failureNoticeEvery = 24 * time.Hour

// noticeFailure queues the referee's notice of a failed delivery. A failed
// notice to the referee is only logged: reporting it by mail would loop.
// Each failure is told once (the sender may report a message refused for
// good both when it marks it failed and as refused recipients), and a
// recipient's failures at most once a day, the untold ones counted in the
// next notice.
func (h *Host) noticeFailure(ctx context.Context, w *work, m store.OutMessage, errText string) error {
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
	rcpt := strings.Join(m.To, ", ")
	compose1 := func(why *phrase.Error) (compose.Outgoing, error) {
		f := compose.Failure{State: g.state, Dir: g.dir(),
			Recipient: rcpt, Kind: m.Kind, MessageID: m.MessageID,
			Error: errText, Attempts: m.Attempts, Now: w.now}
		if why != nil {
			f.Error, f.Phrase = why.Error(), why
		}
		msg, err := h.mail.DeliveryFailure(f)
		if err != nil {
			return msg, &failure{err}
		}
		return msg, nil
	}
	msg, err := compose1(nil)
	if err != nil {
		return err
	}
	told, err := w.tx.HasOutMessage(ctx, msg.MessageID)
	if err != nil {
		return err
	}
	for _, o := range w.out {
		told = told || o.MessageID == msg.MessageID
	}
	if told {
		return nil
	}
	tell, untold, err := w.tx.TakeFailureNotice(ctx, m.Game, rcpt, w.now, failureNoticeEvery)
	if err != nil {
		return err
	}
	if !tell {
		h.log.Info("failed delivery not told to the referee: told of this recipient within a day", "game", m.Game, "untold", untold)
		return nil
	}
	if untold > 0 {
		if msg, err = compose1(phrase.Errorf("%s (and %d more failed deliveries to this address since the last notice, "+
			"not told one by one: the host tells you of one address at most once a day)", errText, untold)); err != nil {
			return err
		}
	}
	w.out = append(w.out, msg)
	return nil
}
