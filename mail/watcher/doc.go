// Package watcher reads the host's IMAP mailbox and hands every new message
// to a Handler, exactly as often as it takes for the Handler to say that the
// message's outcome is durably committed.
//
// # What the watcher does
//
// Run connects to the server (imaps://, or imap:// with STARTTLS, which is
// required unless the server is on a loopback address), logs in with
// AUTHENTICATE PLAIN or LOGIN, or with an OAuth2 access token
// (AUTHENTICATE OAUTHBEARER or XOAUTH2) when Config.OAuth2 is set, selects
// the mailbox and then repeats:
//
//  1. UID SEARCH UNSEEN, and read of each new message, in one fetch per
//     thousand, what scheduling needs: its sender and routing header fields
//     (BODY.PEEK[HEADER.FIELDS (From To Cc Delivered-To X-Original-To)]),
//     its size and its INTERNALDATE. While a backlog is worked off, only
//     UIDs above the highest one seen are searched for, so that a backlog
//     is not listed again and again;
//  2. fetch the messages due (BODY.PEEK[], so that fetching marks nothing)
//     in batches bounded by count and by size, a message over
//     Config.MaxMessageBytes as its header alone; call the Handler for
//     each, and set \Seen on those for which it returned nil (and, if
//     Config.MoveTo is set, move them there), with one command per group.
//     The Handler works on a goroutine of its own: while it works on one
//     group, the watcher searches and fetches what is due next, up to a
//     batch, and hands it all over as the next group once the Handler has
//     returned, unless that group's outcome or a moved Config.Barrier
//     changes what is due (then it picks again); a group short of a batch
//     is topped up first with what came while the Handler worked. So
//     through a backlog the Handler is never left waiting for the server,
//     and a slow Handler gets larger groups.
//     The order is that of arrival with respect to deadlines: mail that
//     arrived after Config.Barrier (the next deadline that the order of
//     mail decides) is handed over only once the mail that arrived before
//     it has been, and the watermark has passed it. Mail that
//     Config.Triage finds no game can use is set aside and handed over
//     only when no other mail waits. When more mail is
//     waiting than one batch holds, the senders (by From) take fair turns
//     of at most ten messages (see fairQueue): a sender who has just
//     written goes ahead of every sender working off a backlog, and those
//     share the rest in turns, so that one address flooding the mailbox,
//     or a crowd of auto-responders, delays everyone else's mail by the
//     group in hand and at most a batch fetched meanwhile, not by the
//     whole backlog;
//  3. wait for new mail: in IDLE where the server has it, leaving IDLE every
//     Config.IdleRefresh to send a NOOP, because a dead connection can go
//     unnoticed in IDLE, and ArrivalSlack after each barrier, because a
//     server's notice of new mail may lag; or by polling every
//     Config.PollInterval.
//
// # Arrival and the watermark
//
// Message.Arrived is when a message reached the mailbox: INTERNALDATE, set
// by the receiving server (never the sender's Date), narrowed within its
// whole second by the previous search that did not find it, and never later
// than the moment it was read. Config.OnWatermark hears, each time it
// rises, the moment before which every message that reached the mailbox
// (set-aside mail apart) has been handled: the latest search less
// Config.ArrivalSlack, or the arrival of a message still waiting if that is
// earlier. A host applies a deadline once the watermark has passed it
// (docs/arrival.md).
//
// Unseen mail is always processed before waiting, so mail that arrived while
// the watcher was disconnected is picked up as soon as it is back. Every
// error of the connection (refused, timed out, closed, BYE, a command that
// gets no answer within Config.CommandTimeout) ends the connection, and Run
// reconnects after an exponential backoff with jitter, from
// Config.MinBackoff doubling to Config.MaxBackoff. Run returns only when its
// context ends.
//
// # Exactly once in effect
//
// The watcher sets \Seen only after the Handler has returned nil, which it
// must do only once the transaction that applied the message has committed.
// A crash between the commit and \Seen makes the message come again after a
// restart; so does a change of the mailbox's UIDVALIDITY, which re-numbers
// every message. The Handler therefore must recognise mail it has applied
// before, by mailbox, UIDVALIDITY and UID and by Message-ID (the store's
// RecordInbound does both), and return nil for it without applying it again.
//
// When the Handler returns an error, the message stays unseen and is offered
// again after a backoff of its own (from MinBackoff to MaxBackoff); the
// messages after it are processed meanwhile. Nothing is ever dropped.
//
// The mailbox should be dedicated to the host: a message someone else marks
// as seen before the watcher got to it is not processed.
//
// # Observing the watcher
//
// Stats returns counters and whether the watcher is caught up (every unseen
// message offered, waiting for new mail); Config.OnCaughtUp is called each
// time it gets there. Tests and metrics use them rather than sleeping. A
// flood of set-aside mail (Config.FloodSize) is logged once and reported
// to Config.OnFlood once it is over, rather than message by message.
package watcher
