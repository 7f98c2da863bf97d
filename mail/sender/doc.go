// Package sender drains the host's outbox over SMTP.
//
// Every message the host sends is first written to the outbox, in the same
// transaction as the change that caused it. A Sender takes the messages that
// are due (Outbox.ClaimDue), sends them over up to Config.Connections SMTP
// connections at once, each reused for the whole drain and opened only when
// a message is there for it, and records each result:
//
//   - accepted (250): MarkAllSent, for the messages the batch has handed
//     over together: before it claims more and when it is done, one
//     transaction, and so one fsync, for many. A message stays claimed
//     until then; a process that
//     dies before sends it again after its restart, with the same bytes
//     and Message-ID, as it would one that died just after the server's
//     answer;
//   - a temporary failure (4xx) or a network error: MarkRetry, with the next
//     attempt after an exponential backoff with jitter from
//     Config.MinBackoff doubling to Config.MaxBackoff, for ever: a server
//     that is down for hours delays mail, it never loses it;
//   - a permanent failure (5xx): MarkFailed, and Config.OnFailed is called
//     so that the host can tell the referee.
//
// Recipients are judged one by one: when some are refused for good (5xx to
// RCPT) the message still goes to the others, is marked sent, and the
// refusals are reported through OnFailed as a *RecipientsError. When some
// are refused for now (4xx to RCPT), the transaction is abandoned and the
// whole message is retried later, so that nobody gets it twice. A server
// that limits recipients per transaction (LIMITS RCPTMAX, or 452 to RCPT)
// gets the message in several transactions.
//
// Connections follow the URL policy: smtps:// (TLS from the first byte) or
// smtp:// with STARTTLS, which is required unless the server is on a
// loopback address. AUTH PLAIN or LOGIN is used when a username is set, or
// AUTH OAUTHBEARER or XOAUTH2 with an access token when Config.OAuth2 is. The
// package-level smtp.SendMail of go-smtp is not used: it demands STARTTLS
// even on loopback, and opens a connection per message.
//
// Every participant of a game gets a copy of their own, so a post to a game
// is as many transactions as it has players; a server answers each once
// the message is safely queued (written to disk), and one connection
// spends most of its time waiting for that. Several connections overlap
// the waits. A message is in the hands of one connection at a time, and
// a server that allows fewer connections than configured is used with
// those it allows.
//
// With no sending budget to weigh before each claim, a batch claims the
// next messages as its queue runs out, while its last messages are still
// being handed over, so that the connections wait neither for the slowest
// of them nor for the outbox between batches. Mail that trickles in keeps
// to the connection already open; another is opened for mail queued
// beyond what the open ones take.
//
// Each recipient's mail is handed over in the order it was claimed, one
// message at a time: a later message to the same recipient neither travels
// on another connection beside an earlier one nor goes while an earlier
// one waits for a retry (it is released, and the outbox keeps it behind).
// Mail caused by an event thus never reaches a reader's server before the
// mail of an earlier event. Mail that is due but held back so (or too
// large for the room of a sending budget) makes the sender wait until the
// next message falls due or the budget's window frees, or until new mail
// wakes it, rather than look again, and connect, at once.
//
// Delivery is at least once: when a connection breaks after the data was
// sent but before the server's answer arrived, the message is sent again,
// with the same bytes and so the same Message-ID, which mail clients use to
// hide the duplicate.
package sender
