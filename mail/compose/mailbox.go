package compose

import (
	"errors"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/templates"
)

// Mailbox notices tell a game's referee about the host's mailbox itself
// (docs/arrival.md).
const (
	// MailboxUnread: a deadline was applied before the host could read
	// all the mail that reached its mailbox before it.
	MailboxUnread = "unread"
	// MailboxFlood: a flood of mail no game could use was set aside.
	MailboxFlood = "flood"
)

// MailboxNotice is a notice to a game's referee about the host's mailbox.
type MailboxNotice struct {
	State *engine.State
	Dir   Directory
	// Variant is MailboxUnread or MailboxFlood.
	Variant string
	// Deadline is the deadline applied (MailboxUnread); ReadUntil the
	// moment up to which every message in the mailbox had been read (zero:
	// none since the host started).
	Deadline, ReadUntil time.Time
	// Grace is how long the deadline waited.
	Grace time.Duration
	// Messages, First and Last describe a flood (MailboxFlood).
	Messages    int
	First, Last time.Time
	Now         time.Time
}

// Mailbox composes a notice about the host's mailbox for the referee.
func (c *Composer) Mailbox(n MailboxNotice) (Outgoing, error) {
	s := n.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a mailbox notice needs its game")
	}
	ref := refereeRecipient(s, n.Dir)
	sec := &templates.Section{Kind: "mailbox", Variant: n.Variant, Count: n.Messages,
		When: moment(s, n.Deadline, n.Now), At: moment(s, n.ReadUntil, n.Now), Span: templates.SpanOf(n.Grace)}
	key := n.Variant + " " + n.Deadline.UTC().Format(time.RFC3339Nano)
	if n.Variant == MailboxFlood {
		sec.When, sec.At = moment(s, n.Last, n.Now), moment(s, n.First, n.Now)
		key = n.Variant + " " + n.First.UTC().Format(time.RFC3339Nano) + " " + n.Last.UTC().Format(time.RFC3339Nano)
	}
	return c.finish(draft{
		game: s.Game, d: delivery{r: ref, ch: templates.Private}, state: s, now: n.Now,
		sections: []*templates.Section{sec}, main: sec, kind: KindReferee,
		id: c.msgID(s.Game, "mailbox", hashKey(key), ref.key),
	})
}
