// Package relay is the bare mail relay that mafiamail's host is measured
// against: the same IMAP watcher and SMTP sender, the same store's inbox and
// outbox, and nothing else. Every message read is recorded in the inbox and
// answered with one short acknowledgement to its sender, both in one
// transaction; no command is parsed, no game is kept, no template is used.
//
// A message may also name readers, for the bench's day load, whose town
// thread and mafia list relay each post to every reader: the bench lists
// them, one address after another, in the message's X-Bench-Fanout
// field, and the relay sends each of them a copy of the message's text
// instead of the acknowledgement (the sender, when listed, gets its copy
// like the others; every copy names the message in In-Reply-To). The
// bench, which set the games up, knows the readers; the relay keeps no
// list of its own, so that it stays free of games: it only copies a
// message to the addresses the message names, each copy a row of the
// outbox and a message of its own, as the host sends them.
//
// Whatever the host costs beyond this relay is the cost of its game logic.
package relay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/internal/loops"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// Config says where the relay reads, sends and keeps its rows.
type Config struct {
	// Address is the relay's own address, the From of its answers.
	Address string
	// Database is the SQLite file of the inbox and outbox.
	Database string
	// IMAPURL, SMTPURL and the credentials are as for the watcher and the
	// sender (plain text is allowed on loopback only).
	IMAPURL, IMAPUser, IMAPPassword string
	SMTPURL, SMTPUser, SMTPPassword string
	Logger                          *slog.Logger
}

// Relay is a running relay: store, watcher and sender.
type Relay struct {
	cfg   Config
	st    *store.Store
	watch *watcher.Watcher
	send  *sender.Sender
	log   *slog.Logger
}

// Open opens the store and prepares the watcher and the sender; Run starts
// them.
func Open(ctx context.Context, cfg Config) (*Relay, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Address == "" {
		return nil, errors.New("relay: an address is required")
	}
	st, err := store.Open(ctx, cfg.Database, store.Config{Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("relay: open store: %w", err)
	}
	r := &Relay{cfg: cfg, st: st, log: cfg.Logger}
	r.watch, err = watcher.New(watcher.Config{
		URL: cfg.IMAPURL, Username: cfg.IMAPUser, Password: cfg.IMAPPassword,
		MinBackoff: 100 * time.Millisecond, Logger: cfg.Logger,
	}, r.Handle)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("relay: watcher: %w", err)
	}
	helo := "localhost"
	r.send, err = sender.New(sender.Config{
		URL: cfg.SMTPURL, Username: cfg.SMTPUser, Password: cfg.SMTPPassword, Helo: helo, Logger: cfg.Logger,
	}, sendstore.Outbox(st), time.Now)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("relay: sender: %w", err)
	}
	return r, nil
}

// Store is the relay's store, for inspection.
func (r *Relay) Store() *store.Store { return r.st }

// Handle records one message and queues its acknowledgement in one
// transaction, as the host does with its answer; a message recorded before
// is left alone.
func (r *Relay) Handle(ctx context.Context, m watcher.Fetched) error {
	// The transaction in flight finishes even when the relay is stopping,
	// as the host's does.
	ctx = context.WithoutCancel(ctx)
	msgID, from, subject, fanout, body := headerFields(m.Raw)
	now := time.Now()
	return r.st.Update(ctx, func(tx *store.Tx) error {
		in, dup, err := tx.RecordInbound(ctx, store.Inbound{Mailbox: m.Mailbox, UIDValidity: m.UIDValidity,
			UID: m.UID, MessageID: msgID, Raw: m.Raw, ReceivedAt: now})
		if err != nil {
			return fmt.Errorf("relay: record inbound: %w", err)
		}
		if dup != store.NotDuplicate {
			return nil
		}
		if from == "" {
			return tx.SetInboundOutcome(ctx, in.ID, store.OutcomeIgnored, "no sender to answer", "")
		}
		if len(fanout) > 0 {
			for i, to := range fanout {
				out := store.OutMessage{MessageID: fmt.Sprintf("<relay.%d.%d.%d@%s>", in.ID, i, now.UnixNano(), domain(r.cfg.Address)),
					Kind: "thread", From: r.cfg.Address, To: []string{to}, Cause: fmt.Sprintf("inbox:%d", in.ID)}
				out.Raw = relayedCopy(r.cfg.Address, to, subject, out.MessageID, msgID, body, now)
				if _, err := tx.Enqueue(ctx, out, now); err != nil {
					return fmt.Errorf("relay: enqueue copy to %s: %w", to, err)
				}
			}
			return tx.SetInboundOutcome(ctx, in.ID, store.OutcomeApplied, "", "")
		}
		out := store.OutMessage{MessageID: fmt.Sprintf("<relay.%d.%d@%s>", in.ID, now.UnixNano(), domain(r.cfg.Address)),
			Kind: "confirm", From: r.cfg.Address, To: []string{from}, Cause: fmt.Sprintf("inbox:%d", in.ID)}
		out.Raw = acknowledgement(r.cfg.Address, from, subject, out.MessageID, msgID, now)
		if _, err := tx.Enqueue(ctx, out, now); err != nil {
			return fmt.Errorf("relay: enqueue answer: %w", err)
		}
		return tx.SetInboundOutcome(ctx, in.ID, store.OutcomeApplied, "", "")
	})
}

// Run runs the watcher and the sender until ctx ends or one fails; every
// committed answer wakes the sender, as in the host.
func (r *Relay) Run(ctx context.Context) error {
	return loops.All(ctx, map[string]func(context.Context) error{
		"relay watcher": r.watch.Run, "relay sender": r.send.Run, "relay outbox": r.send.KickOn(r.st.OutboxSignal()),
	})
}

// Close closes the store; call it after Run has returned.
func (r *Relay) Close() error { return r.st.Close() }

// FanoutField is the header field that lists the readers a message is
// copied to.
const FanoutField = "X-Bench-Fanout"

// headerFields reads the few header fields the answer needs, the readers
// of X-Bench-Fanout and the text. A message whose header cannot be read
// gives empty fields (and is not answered).
func headerFields(raw []byte) (msgID, from, subject string, fanout []string, body []byte) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "", "", "", nil, nil
	}
	msgID = strings.TrimSpace(m.Header.Get("Message-Id"))
	if a, err := mail.ParseAddress(m.Header.Get("From")); err == nil {
		from = a.Address
	}
	for _, to := range strings.Split(m.Header.Get(FanoutField), ",") {
		if to = strings.TrimSpace(to); to != "" {
			fanout = append(fanout, to)
		}
	}
	if len(fanout) > 0 {
		// Only a copied message needs its text.
		var b bytes.Buffer
		if _, err := b.ReadFrom(m.Body); err == nil {
			body = b.Bytes()
		}
	}
	return msgID, from, m.Header.Get("Subject"), fanout, body
}

func domain(addr string) string {
	if _, d, ok := strings.Cut(addr, "@"); ok && d != "" {
		return d
	}
	return "localhost"
}

// relayedCopy is one reader's copy of a message: the message's text under
// the relay's own header, threaded under the message.
func relayedCopy(from, to, subject, id, inReplyTo string, body []byte, now time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: Re: %s\r\nMessage-Id: %s\r\nDate: %s\r\n",
		from, to, strings.TrimSpace(strings.TrimPrefix(subject, "Re: ")), id, now.Format(time.RFC1123Z))
	if inReplyTo != "" {
		fmt.Fprintf(&b, "In-Reply-To: %s\r\nReferences: %s\r\n", inReplyTo, inReplyTo)
	}
	b.WriteString("Auto-Submitted: auto-generated\r\nX-Mafiamail-Kind: thread\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}

// acknowledgement is the relay's whole answer: a plain-text line, threaded
// under the message it answers.
func acknowledgement(from, to, subject, id, inReplyTo string, now time.Time) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: Re: %s\r\nMessage-Id: %s\r\nDate: %s\r\n",
		from, to, strings.TrimSpace(strings.TrimPrefix(subject, "Re: ")), id, now.Format(time.RFC1123Z))
	if inReplyTo != "" {
		fmt.Fprintf(&b, "In-Reply-To: %s\r\nReferences: %s\r\n", inReplyTo, inReplyTo)
	}
	b.WriteString("Auto-Submitted: auto-replied\r\nX-Mafiamail-Kind: confirm\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\nReceived.\r\n")
	return b.Bytes()
}
