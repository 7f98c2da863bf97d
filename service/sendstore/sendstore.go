// Package sendstore hands the store to the sender: it adapts the store's
// outbox and its ledger of mail sent to the small interfaces of package
// mail/sender, which knows nothing of the store, converting the store's
// rows to the sender's types and back.
package sendstore

import (
	"context"
	"time"

	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// StoreOutbox is the outbox as the store keeps it: *store.Store, or the
// host's outbox, which marks a failure in the transaction that tells the
// referee.
type StoreOutbox interface {
	ClaimDue(ctx context.Context, now time.Time, limit int) ([]store.OutMessage, error)
	MarkAllSent(ctx context.Context, ids []int64, now time.Time) error
	MarkRetry(ctx context.Context, id int64, next time.Time, errText string) error
	Release(ctx context.Context, id int64, next time.Time, why string) error
	MarkFailed(ctx context.Context, id int64, errText string) error
	NextAttempt(ctx context.Context) (t time.Time, ok bool, err error)
	NextAttemptAfter(ctx context.Context, t time.Time) (next time.Time, ok bool, err error)
}

var _ StoreOutbox = (*store.Store)(nil)

// Outbox is the store's outbox as the sender drains it.
func Outbox(o StoreOutbox) sender.Outbox { return outbox{o} }

type outbox struct{ StoreOutbox }

func (o outbox) ClaimDue(ctx context.Context, now time.Time, limit int) ([]sender.Message, error) {
	ms, err := o.StoreOutbox.ClaimDue(ctx, now, limit)
	return Messages(ms), err
}

// Ledger is the store's count of the mail sent and its record of the
// provider's sending limit, as the sender's budget reads them.
func Ledger(st *store.Store) sender.Ledger { return ledger{st} }

type ledger struct{ st *store.Store }

func (l ledger) SentSince(ctx context.Context, since time.Time) ([]sender.Sent, error) {
	sent, err := l.st.SentSince(ctx, since)
	return Sent(sent), err
}

func (l ledger) ClaimDueWithin(ctx context.Context, now time.Time, limit int, room sender.Room) ([]sender.Message, error) {
	ms, err := l.st.ClaimDueWithin(ctx, now, limit,
		store.Room{Recipients: room.Recipients, Messages: room.Messages, Oversized: room.Oversized})
	return Messages(ms), err
}

func (l ledger) SendingLimit(ctx context.Context) (sender.SendingLimit, error) {
	lim, err := l.st.SendingLimit(ctx)
	return sender.SendingLimit{Learned: lim.Learned, LearnedAt: lim.LearnedAt,
		HeldSince: lim.HeldSince, HeldReply: lim.HeldReply, Holds: lim.Holds}, err
}

func (l ledger) LearnLimit(ctx context.Context, n int, at time.Time) error {
	return l.st.LearnLimit(ctx, n, at)
}

// Message is an outbox row as the sender sends it.
func Message(m store.OutMessage) sender.Message {
	return sender.Message{ID: m.ID, MessageID: m.MessageID, Game: m.Game, Kind: m.Kind,
		From: m.From, To: m.To, Raw: m.Raw, Attempts: m.Attempts}
}

// Messages is Message of each row; nil for none.
func Messages(ms []store.OutMessage) []sender.Message {
	if ms == nil {
		return nil
	}
	out := make([]sender.Message, len(ms))
	for i, m := range ms {
		out[i] = Message(m)
	}
	return out
}

// OutMessage is what the sender knows of an outbox row, as the store's
// type: the row's status, times and cause are not among it.
func OutMessage(m sender.Message) store.OutMessage {
	return store.OutMessage{ID: m.ID, MessageID: m.MessageID, Game: m.Game, Kind: m.Kind,
		From: m.From, To: m.To, Raw: m.Raw, Attempts: m.Attempts}
}

// Sent is the store's record of mail sent as the sender's budget counts it.
func Sent(sent []store.Sent) []sender.Sent {
	if sent == nil {
		return nil
	}
	out := make([]sender.Sent, len(sent))
	for i, s := range sent {
		out[i] = sender.Sent{At: s.At, Recipients: s.Recipients}
	}
	return out
}
