package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/mail/mailserver"
)

// The bench's mail stacks: the embedded servers in the bench's own
// process, or a real Postfix and Dovecot on loopback. Either way the
// players are plus-addresses of one mailbox, players+gG-pI@domain, the
// referee is players+referee@domain, and the host and the relay each have
// a user of their own.
const (
	stackEmbedded = "embedded"
	stackPostfix  = "postfix"
)

// benchStack is where the bench's mail goes. Every answer that reaches a
// player is reported to the bench's arrived, with the time it was in the
// player's mailbox as far as the stack can tell.
type benchStack interface {
	domain() string
	// smtpAddr is where players and the referee hand in their mail.
	smtpAddr() string
	imapAddr() string
	// smtpAuth tells whether the host and the relay log in to SMTP.
	smtpAuth() bool
	// inject puts mail into its recipients' mailboxes as if it had come
	// while the system was down; it returns once all of it is there.
	inject(ctx context.Context, msgs []benchMail) error
	// settle returns once no mail handed to the stack is still on its
	// way to a mailbox.
	settle(ctx context.Context) error
	// emptyPlayers removes every message from the players' mailbox, once
	// the games are set up: a real player's mailbox holds one player's
	// mail, not the set-up of every game's, which would make each
	// delivery and each IDLE wake of the instrument dearer for the host's
	// measurement than for the relay's.
	emptyPlayers(ctx context.Context) error
	close() error
}

type benchMail struct {
	from, to string
	raw      []byte
}

// arrivedFunc learns of one message in a player's mailbox.
type arrivedFunc func(m delivered)

// delivered is one message in a player's mailbox: its recipient (the full
// plus-address), its X-Mafiamail-Kind, when it was there, and, computed on
// demand, its Reply-To, its In-Reply-To and the start of its text.
type delivered struct {
	to, kind  string
	at        time.Time
	replyTo   func() string
	inReplyTo func() string
	// text is the message's body, or as much of its start as the stack
	// fetched (the day load's markers and addresses are in the first
	// lines of the plain part), with quoted-printable soft line breaks
	// undone so that an address folded over two lines reads whole.
	text func() []byte
}

// unfoldQP undoes quoted-printable soft line breaks.
func unfoldQP(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("=\r\n"), nil), []byte("=\n"), nil)
}

// startStack starts a mail stack; withText has it read the text of every
// message as well as its header, which the day load needs to match
// copies to posts (the STATUS load does not, and its instrument is kept
// as light as it was).
func startStack(kind string, arrived arrivedFunc, withText bool, logTo io.Writer) (benchStack, error) {
	switch kind {
	case stackEmbedded:
		return startEmbeddedStack(arrived, logTo)
	case stackPostfix:
		return startPostfixStack(arrived, withText, logTo)
	}
	return nil, fmt.Errorf("no mail stack %q: embedded or postfix", kind)
}

// embeddedStack is mail/mailserver; an answer counts as arrived when the
// server's delivery hook sees it delivered. The players' mailbox is a
// sink: nothing reads it over IMAP.
type embeddedStack struct{ srv *mailserver.Server }

func startEmbeddedStack(arrived arrivedFunc, logTo io.Writer) (*embeddedStack, error) {
	srv, err := mailserver.Start(mailserver.Config{
		Domain: "example.org",
		Users:  map[string]string{"host": benchPassword, "relay": benchPassword, "players": benchPassword},
		// The players' mail is seen by the hook and needed no further: kept,
		// it would grow the bench's heap by every answer of the run, and the
		// garbage collector's work on it would weigh on the host's share of
		// the machine at a thousand games.
		Sinks:  []string{"players"},
		Logger: slog.New(slog.NewTextHandler(logTo, nil)),
		OnMessage: func(m mailserver.Delivery) {
			if !m.Delivered {
				return
			}
			now := time.Now()
			kind := headerValue(m.Data, "X-Mafiamail-Kind")
			var text []byte
			for _, to := range m.To {
				arrived(delivered{to: strings.ToLower(to), kind: kind, at: now,
					replyTo:   func() string { return replyTo(m.Data) },
					inReplyTo: func() string { return headerValue(m.Data, "In-Reply-To") },
					text: func() []byte {
						if text == nil {
							_, body, _ := bytes.Cut(m.Data, []byte("\r\n\r\n"))
							text = unfoldQP(body)
						}
						return text
					}})
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("start embedded mail servers: %w", err)
	}
	return &embeddedStack{srv: srv}, nil
}

func (s *embeddedStack) domain() string   { return s.srv.Domain() }
func (s *embeddedStack) smtpAddr() string { return s.srv.SMTPAddr() }
func (s *embeddedStack) imapAddr() string { return s.srv.IMAPAddr() }
func (s *embeddedStack) smtpAuth() bool   { return true }
func (s *embeddedStack) close() error     { return s.srv.Close() }

// settle has nothing to wait for: the embedded server delivers before it
// answers DATA.
func (s *embeddedStack) settle(context.Context) error { return nil }

// emptyPlayers has nothing to do: the players' mailbox is a sink.
func (s *embeddedStack) emptyPlayers(context.Context) error { return nil }

func (s *embeddedStack) inject(_ context.Context, msgs []benchMail) error {
	for _, m := range msgs {
		if err := s.srv.Deliver(m.from, m.to, m.raw); err != nil {
			return fmt.Errorf("deliver backlog: %w", err)
		}
	}
	return nil
}

// postfixStack is a real Postfix and Dovecot (internal/testkit/mailstack). An
// answer counts as arrived when Dovecot announces it to an IDLE session on
// the players' INBOX; it is told apart by its Delivered-To.
type postfixStack struct {
	st   *mailstack.Stack
	idle *idleWatcher
}

func startPostfixStack(arrived arrivedFunc, withText bool, logTo io.Writer) (_ *postfixStack, err error) {
	st, err := mailstack.Launch(mailstack.Config{})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Close())
		}
	}()
	for _, u := range []string{"host", "relay", "players"} {
		if err := st.AddUser(u, benchPassword); err != nil {
			return nil, err
		}
	}
	w, err := watchIdle(st.IMAPAddr(), "players", benchPassword, arrived, withText,
		slog.New(slog.NewTextHandler(logTo, nil)))
	if err != nil {
		return nil, err
	}
	return &postfixStack{st: st, idle: w}, nil
}

func (s *postfixStack) domain() string   { return s.st.Domain() }
func (s *postfixStack) smtpAddr() string { return s.st.SMTPAddr() }
func (s *postfixStack) imapAddr() string { return s.st.IMAPAddr() }
func (s *postfixStack) smtpAuth() bool   { return false } // Postfix relays for loopback

func (s *postfixStack) close() error {
	return errors.Join(s.idle.close(), s.st.Close())
}

// settle waits for Postfix's queue to empty: at a thousand games the
// set-up leaves some ten thousand messages in it.
func (s *postfixStack) settle(context.Context) error {
	return s.st.WaitDeliveredWithin(30 * time.Minute)
}

// emptyPlayers deletes and expunges the players' mail on a connection
// of its own; the IDLE session hears of it and keeps its counts right.
func (s *postfixStack) emptyPlayers(context.Context) error {
	c, err := imapclient.DialInsecure(s.imapAddr(), nil)
	if err != nil {
		return fmt.Errorf("IMAP dial %s: %w", s.imapAddr(), err)
	}
	defer c.Close()
	if err := c.Login("players", benchPassword).Wait(); err != nil {
		return fmt.Errorf("IMAP login players: %w", err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		return fmt.Errorf("IMAP select: %w", err)
	}
	if sel.NumMessages == 0 {
		return nil
	}
	var all imap.SeqSet
	all.AddRange(1, 0)
	if err := c.Store(all, &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}, nil).Close(); err != nil {
		return fmt.Errorf("IMAP store \\Deleted: %w", err)
	}
	if err := c.Expunge().Close(); err != nil {
		return fmt.Errorf("IMAP expunge: %w", err)
	}
	return c.Logout().Wait()
}

// inject hands the mail to Postfix over a few SMTP connections and waits
// until Postfix's queue is empty, that is until Dovecot has it all.
func (s *postfixStack) inject(ctx context.Context, msgs []benchMail) error {
	const conns = 4
	work := make(chan benchMail)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialSMTP(s.smtpAddr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for m := range work {
				if err := c.SendMail(m.from, []string{m.to}, bytes.NewReader(m.raw)); err != nil {
					errs <- fmt.Errorf("hand backlog to Postfix: %w", err)
					return
				}
			}
		}()
	}
	sendAll := func() error {
		defer close(work)
		for _, m := range msgs {
			select {
			case work <- m:
			case err := <-errs:
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	err := sendAll()
	wg.Wait()
	close(errs)
	if err := errors.Join(append(drain(errs), err)...); err != nil {
		return err
	}
	return s.settle(ctx)
}

// idleWatcher keeps an IDLE session on a mailbox and reports every new
// message from its header. The time of a message is that of the first
// EXISTS that counted it: when Dovecot told the mailbox's reader of it,
// not when the watcher got round to fetching it.
type idleWatcher struct {
	c       *imapclient.Client
	arrived arrivedFunc
	// withText fetches the start of every message's text too, and the
	// whole text of role mail (where a Mafioso's mafia list address is).
	withText bool
	log      *slog.Logger

	mu    sync.Mutex
	notes []existsNote // ascending counts
	wake  chan struct{}

	cancel context.CancelFunc
	done   chan error
}

type existsNote struct {
	count uint32
	at    time.Time
}

var idleHeaderFields = []string{"Delivered-To", "To", "Reply-To", "In-Reply-To", "X-Mafiamail-Kind"}

// idleTextBytes is how much of each message's text the watcher fetches
// with withText: the plain part comes first, and its first lines say
// what the message is.
const idleTextBytes = 6 << 10

func watchIdle(addr, user, password string, arrived arrivedFunc, withText bool, log *slog.Logger) (*idleWatcher, error) {
	w := &idleWatcher{arrived: arrived, withText: withText, log: log, wake: make(chan struct{}, 1), done: make(chan error, 1)}
	c, err := imapclient.DialInsecure(addr, &imapclient.Options{
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			// On the client's reader goroutine: note and signal, never
			// call the client from here.
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					w.note(*d.NumMessages, time.Now())
				}
			},
			Expunge: w.expunged,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("IMAP dial %s: %w", addr, err)
	}
	w.c = c
	if err := c.Login(user, password).Wait(); err != nil {
		c.Close()
		return nil, fmt.Errorf("IMAP login %s: %w", user, err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("IMAP select: %w", err)
	}
	w.note(sel.NumMessages, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() { w.done <- w.run(ctx) }()
	return w, nil
}

func (w *idleWatcher) note(count uint32, at time.Time) {
	w.mu.Lock()
	if n := len(w.notes); n == 0 || count > w.notes[n-1].count {
		w.notes = append(w.notes, existsNote{count, at})
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// expunged shifts the counts noted after message seq down by one, as the
// mailbox shrank under them.
func (w *idleWatcher) expunged(seq uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range w.notes {
		if w.notes[i].count >= seq {
			w.notes[i].count--
		}
	}
}

// announced is when message seq was first counted by an EXISTS.
func (w *idleWatcher) announced(seq uint32) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.notes {
		if n.count >= seq {
			return n.at, true
		}
	}
	return time.Time{}, false
}

// forget drops the notes of messages already reported.
func (w *idleWatcher) forget(seq uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for i < len(w.notes)-1 && w.notes[i].count <= seq {
		i++
	}
	w.notes = w.notes[i:]
}

func (w *idleWatcher) run(ctx context.Context) error {
	var last imap.UID
	first := true
	for {
		var err error
		if last, err = w.fetchNew(last, first); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		first = false
		idle, err := w.c.Idle()
		if err != nil {
			return fmt.Errorf("IMAP IDLE: %w", err)
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
		}
		if err := idle.Close(); err != nil {
			return fmt.Errorf("IMAP IDLE: %w", err)
		}
		if err := idle.Wait(); err != nil && ctx.Err() == nil {
			return fmt.Errorf("IMAP IDLE: %w", err)
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// fetchNew reports the messages after UID last; the messages there before
// the watcher started (first) are skipped.
func (w *idleWatcher) fetchNew(last imap.UID, first bool) (imap.UID, error) {
	var set imap.UIDSet
	set.AddRange(last+1, 0) // last+1:*
	header := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierHeader, HeaderFields: idleHeaderFields, Peek: true}
	textSection := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierText, Peek: true,
		Partial: &imap.SectionPartial{Offset: 0, Size: idleTextBytes}}
	sections := []*imap.FetchItemBodySection{header}
	if w.withText && !first {
		sections = append(sections, textSection)
	}
	msgs, err := w.c.Fetch(set, &imap.FetchOptions{UID: true, BodySection: sections}).Collect()
	if err != nil {
		return last, fmt.Errorf("IMAP fetch: %w", err)
	}
	maxSeq := uint32(0)
	for _, m := range msgs {
		if m.UID <= last { // "*" is the last message even when it is older
			continue
		}
		last = max(last, m.UID)
		maxSeq = max(maxSeq, m.SeqNum)
		if first {
			continue
		}
		at, ok := w.announced(m.SeqNum)
		if !ok {
			at = time.Now()
		}
		raw := m.FindBodySection(header)
		text := unfoldQP(m.FindBodySection(textSection))
		h, err := mail.ReadMessage(bytes.NewReader(append(raw, "\r\n"...)))
		if err != nil {
			w.log.Warn("bench: unreadable header", "uid", m.UID, "err", err)
			continue
		}
		to := strings.ToLower(strings.Trim(strings.TrimSpace(h.Header.Get("Delivered-To")), "<>"))
		if to == "" {
			if a, err := mail.ParseAddress(h.Header.Get("To")); err == nil {
				to = strings.ToLower(a.Address)
			}
		}
		rt := func() string {
			if a, err := mail.ParseAddress(h.Header.Get("Reply-To")); err == nil {
				return strings.ToLower(a.Address)
			}
			return ""
		}
		kind := strings.TrimSpace(h.Header.Get("X-Mafiamail-Kind"))
		if w.withText && kind == "role" {
			// The mafia list's address may lie beyond the start fetched.
			if text, err = w.wholeText(m.UID); err != nil {
				return last, err
			}
		}
		irt := strings.TrimSpace(h.Header.Get("In-Reply-To"))
		w.arrived(delivered{to: to, kind: kind, at: at, replyTo: rt,
			inReplyTo: func() string { return irt }, text: func() []byte { return text }})
	}
	if maxSeq > 0 {
		w.forget(maxSeq)
	}
	return last, nil
}

// wholeText fetches the whole text of one message.
func (w *idleWatcher) wholeText(uid imap.UID) ([]byte, error) {
	section := &imap.FetchItemBodySection{Specifier: imap.PartSpecifierText, Peek: true}
	msgs, err := w.c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true,
		BodySection: []*imap.FetchItemBodySection{section}}).Collect()
	if err != nil {
		return nil, fmt.Errorf("IMAP fetch text of UID %d: %w", uid, err)
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	return unfoldQP(msgs[0].FindBodySection(section)), nil
}

func (w *idleWatcher) close() error {
	w.cancel()
	w.note(0, time.Now()) // wake the loop
	err := <-w.done
	return errors.Join(err, w.c.Close())
}
