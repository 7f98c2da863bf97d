package host

import (
	"context"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/mail/message"
	"github.com/mafiamail/mafiamail/mail/reply"
)

// answered is the host's record of the mail an inline reply to channel ch
// of game answers: the first of the Message-IDs it names (In-Reply-To,
// then References) that the host sent its author, as the outbox keeps it.
// Only lines every reader of that mail was sent may be relayed as the
// reply's context, and only where they were sent in the same conversation,
// or in the town thread for a post to the mafia list: nothing said on the
// mafia list is quoted to the town. nil when the reply answers no mail the
// host sent its author.
func (h *Host) answered(ctx context.Context, w *work, r inbound.Report, game string, ch engine.Channel) (*reply.Record, error) {
	if r.Sender.Participant == nil {
		return nil, nil
	}
	sent, ok, err := w.tx.SentTo(ctx, r.InReplyTo, r.Sender.Participant.Address)
	if err != nil || !ok {
		return nil, err
	}
	rec := &reply.Record{}
	if texts, err := message.Texts(sent.Raw); err == nil {
		rec.Texts = texts
	} else {
		h.log.Warn("the host's own mail cannot be read back", "message_id", sent.MessageID, "err", err)
	}
	if sent.Game == game && (sent.PublicIn == string(ch) || (ch == engine.MafiaCh && sent.PublicIn == string(engine.Thread))) {
		rec.Public = sent.Public
	}
	return rec, nil
}
