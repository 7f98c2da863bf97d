// Package watcher reads the host's IMAP mailbox and hands every new message
// to a Handler, exactly as often as it takes for the Handler to say that the
// message's outcome is durably committed.
//
// # What the watcher does
//
// Run connects to the server (imaps://, or imap:// with STARTTLS, which is
// required unless the server is on a loopback address), logs in with
// AUTHENTICATE PLAIN or LOGIN, selects the mailbox and then repeats:
//
//  1. UID SEARCH UNSEEN, and fetch the unseen messages (BODY.PEEK[], so that
//     fetching marks nothing) in batches bounded by count and by size; a
//     message over Config.MaxMessageBytes is fetched as its header alone;
//  2. call the Handler for each, in UID order, and set \Seen on those for
//     which it returned nil (and, if Config.MoveTo is set, move them
//     there), with one command for the batch. When more mail is waiting
//     than one batch holds, the senders (by the envelope's From) take fair
//     turns in batches of at most ten, and the search is repeated after
//     each: a sender who has just written goes ahead of every sender
//     working off a backlog, and those share the rest in turns, so that
//     one address flooding the mailbox, or a crowd of auto-responders,
//     delays everyone else's mail by a batch, not by the whole backlog;
//  3. wait for new mail: in IDLE where the server has it, leaving IDLE every
//     Config.IdleRefresh to send a NOOP, because a dead connection can go
//     unnoticed in IDLE; or by polling every Config.PollInterval.
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
// time it gets there. Tests and metrics use them rather than sleeping.
package watcher
