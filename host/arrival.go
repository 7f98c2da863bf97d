package host

import (
	"bufio"
	"bytes"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// DefaultMailGrace is how long a deadline waits for mail that reached the
// mailbox before it while the mailbox cannot be read, unless the host's
// configuration or the game's setup says otherwise.
const DefaultMailGrace = 15 * time.Minute

// Mail is one message as the watcher read it.
type Mail struct {
	// Mailbox, UIDValidity and UID identify it on the server.
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	// Raw is the message, or its header alone when Size is larger.
	Raw  []byte
	Size int
	// Arrived is when it reached the mailbox (real time, INTERNALDATE);
	// zero means now. With Options.ArrivalOrder, its commands count then.
	Arrived time.Time
	// Quiet leaves its outcome out of the log: it is one of a flood, which
	// is logged as a whole.
	Quiet bool
}

// commandTime is the game time at which a message's commands count: with
// ArrivalOrder its arrival, never later than now, and never before the
// game's latest event, so that the game's time only moves forward (mail
// read after a deadline applied without it counts as coming after it).
func (h *Host) commandTime(gameID string, arrived time.Time) time.Time {
	now := h.clock.Now()
	if !h.opts.ArrivalOrder || arrived.IsZero() {
		return now
	}
	t := h.clock.At(arrived)
	if t.After(now) {
		t = now
	}
	if g := h.games[gameID]; g != nil && t.Before(g.state.Clock) {
		t = g.state.Clock
	}
	return t
}

// grace is how long game g's deadlines wait for unread mail.
func (h *Host) grace(g *game) time.Duration {
	if d := g.state.Setup.MailGrace; d > 0 {
		return d
	}
	return h.opts.MailGrace
}

// readPast reports whether every message that reached the mailbox before
// game time t has been handled.
func (h *Host) readPast(t time.Time) bool {
	w, ok := h.readUntil()
	return ok && !w.Before(h.clock.RealAt(t))
}

// readUntil is the watermark (real time); false while there is none.
func (h *Host) readUntil() (time.Time, bool) {
	n := h.watermark.Load()
	if n == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// raiseWatermark sets the watermark to w if that is later, and reports
// whether it was.
func (h *Host) raiseWatermark(w time.Time) bool {
	n := w.UnixNano()
	for {
		old := h.watermark.Load()
		if old != 0 && n <= old {
			return false
		}
		if h.watermark.CompareAndSwap(old, n) {
			return true
		}
	}
}

// graceEnd is the real time at which game g's next deadline is applied
// even if mail that reached the mailbox before it may still be unread: a
// grace after the deadline, or after the host started when it was down then.
func (h *Host) graceEnd(g *game) time.Time {
	from := h.clock.RealAt(g.next)
	if from.Before(h.started) {
		from = h.started
	}
	return from.Add(h.grace(g))
}

// Advance tells the host that every message that reached the mailbox
// before w (real time) has been handled, and applies the deadlines that
// waited for it. The watcher calls it on its own goroutine, before it
// hands over any mail that arrived after those deadlines, and also while
// the host handles a group: until w passes the next ordered deadline
// (Barrier) there is nothing to apply, and it returns without waiting for
// the group. A deadline that a group in progress brings before w is applied
// by the clock, which the group's end wakes.
func (h *Host) Advance(ctx context.Context, w time.Time) {
	if !h.raiseWatermark(w) {
		return
	}
	if b := h.Barrier(); b.IsZero() || w.Before(b) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// A deadline applied may bring the next one due at once (a round that
	// ends the night at once, a night that ended while the host was down).
	for range 16 {
		n, err := h.tickDue(ctx)
		if err != nil {
			h.log.Error("deadline processing failed; the clock retries", "err", err)
			return
		}
		if n == 0 {
			return
		}
	}
}

// Barrier is the next ordered deadline of any game (a round's close, a
// night's end, a reminder: engine.NextOrderedDeadline), in real time (zero
// for none): the watcher hands over mail that arrived after it only once
// the mail that arrived before it has been handled. A digest is not one:
// it goes out at its time, and were it a barrier, every game's mail would
// wait a slack's length after each digest of any game (with a thousand
// games taking hourly digests, one every few seconds). It is the deadline
// as of the latest transaction's end, read without waiting for the one in
// progress: the watcher asks while the host handles a group, and checks
// again once the group is done.
func (h *Host) Barrier() time.Time {
	if b := h.barrier.Load(); b != nil {
		return *b
	}
	return time.Time{}
}

// Triage tells, from a message's routing header fields alone, whether a
// game may use it: mail to a participant's channel with a token the host
// knows, to the sign-up or a confirmation address of a game that exists, or to the host's
// own address from a referee or a participant. Everything else (made-up
// tokens, games that do not exist, unknown senders to the host's address)
// is set aside by the watcher, behind the games' mail, and handled later
// like any other; nothing is dropped.
func (h *Host) Triage(header []byte) bool {
	th, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(ensureHeaderEnd(header))))
	if err != nil {
		return false
	}
	mh := mail.Header{Header: message.Header{Header: th}}
	route := inbound.FindRoute(mh, h.opts.Address)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case route.Kind.Participant():
		g := h.games[route.Game]
		return g != nil && g.knowsToken(route.Token)
	case route.Kind == inbound.RouteSignup, route.Kind == inbound.RouteConfirm:
		// A confirmation of a JOIN goes with its game's mail; one of a
		// NEW GAME names no game yet, and waits with the unknown.
		return h.games[route.Game] != nil
	case route.Kind == inbound.RouteHost:
		from, err := mh.AddressList("From")
		if err != nil || len(from) == 0 {
			return false
		}
		return h.knowsAddress(from[0].Address)
	}
	return false
}

// knowsToken reports whether token is that of one of the game's
// participants.
func (g *game) knowsToken(token string) bool {
	if token == "" {
		return false
	}
	if strings.EqualFold(g.referee.Token, token) {
		return true
	}
	for _, p := range g.state.Players {
		if strings.EqualFold(p.Token, token) {
			return true
		}
	}
	for _, t := range g.observers {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

// knowsAddress reports whether addr is a referee's or a participant's.
func (h *Host) knowsAddress(addr string) bool {
	if h.isReferee(addr) {
		return true
	}
	for _, g := range h.games {
		if strings.EqualFold(g.state.Referee, addr) {
			return true
		}
		for _, p := range g.state.Players {
			if strings.EqualFold(p.Address, addr) {
				return true
			}
		}
		for a := range g.observers {
			if strings.EqualFold(a, addr) {
				return true
			}
		}
	}
	return false
}

// ReportFlood tells the referee of every running game, once, of a flood of
// mail that no game could use: how many messages, and when they came.
func (h *Host) ReportFlood(ctx context.Context, messages int, first, last time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log.Warn("a flood of mail that no game could use was set aside", "messages", messages,
		"first", first.UTC(), "last", last.UTC())
	return h.transact(ctx, "flood:"+first.UTC().Format(time.RFC3339Nano), func(w *work) error {
		for _, id := range h.sortedGames() {
			g := h.games[id]
			if g.state.Phase == engine.EndedPhase {
				continue
			}
			m, err := h.mail.Mailbox(compose.MailboxNotice{State: g.state, Dir: g.dir(), Variant: compose.MailboxFlood,
				Messages: messages, First: h.clock.At(first), Last: h.clock.At(last), Now: w.now})
			if err != nil {
				return &failure{err}
			}
			w.out = append(w.out, m)
		}
		return nil
	})
}

// sortedGames lists the game IDs in order, for mail in a stable order.
func (h *Host) sortedGames() []string {
	ids := make([]string, 0, len(h.games))
	for id := range h.games {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// noticeUnread tells the referee that a deadline was applied before all
// the mail that reached the mailbox before it could be read.
func (h *Host) noticeUnread(w *work, g *game, deadline time.Time) error {
	var readUntil time.Time
	if w, ok := h.readUntil(); ok {
		readUntil = h.clock.At(w)
	}
	h.log.Warn("deadline applied before all mail that reached the mailbox before it was read",
		"game", g.state.Game, "deadline", deadline, "read_until", readUntil, "grace", h.grace(g))
	m, err := h.mail.Mailbox(compose.MailboxNotice{State: g.state, Dir: g.dir(), Variant: compose.MailboxUnread,
		Deadline: deadline, ReadUntil: readUntil, Grace: h.grace(g), Now: w.now})
	if err != nil {
		return &failure{err}
	}
	w.out = append(w.out, m)
	return nil
}

// ensureHeaderEnd adds the blank line that ends a header, which
// BODY[HEADER.FIELDS] usually has and a header read some other way may not.
func ensureHeaderEnd(h []byte) []byte {
	if bytes.HasSuffix(h, []byte("\r\n\r\n")) || bytes.HasSuffix(h, []byte("\n\n")) {
		return h
	}
	out := append([]byte(nil), h...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, "\r\n"...)
	}
	return append(out, "\r\n"...)
}
