package host

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// gameNews are the kinds of news in the thread that the game cannot go on
// without: the day's start and end, deadline changes, deaths and the
// game's end. A thread message that carries any of them leaves before
// the posts when the sending budget is tight.
var gameNews = []string{"start", "draw", "day", "runoff", "extension", "deadline", "missed", "close",
	"death", "night", "dawn", "end", "pause", "announce", "mailplan"}

// priorityOf orders a message when the sending budget is tight: what the
// game cannot go on without first (role mails, night results, the close,
// dawn and end, deadline changes, answers to refused commands, the
// referee's channel), then tallies and reminders, then the thread's posts,
// then receipts. Within one priority mail leaves in the order it was
// queued, so each reader's mail of one kind keeps its order, and no
// secret waits behind discussion.
func priorityOf(m compose.Outgoing) int {
	has := func(kinds ...string) bool {
		return slices.ContainsFunc(m.Contents, func(c string) bool { return slices.Contains(kinds, c) })
	}
	switch m.Kind {
	case compose.KindRole, compose.KindDawn, compose.KindEnd, compose.KindError, compose.KindMafia, compose.KindReferee:
		return store.PriorityGame
	case compose.KindTally:
		return store.PriorityNotice
	case compose.KindThread:
		if has(gameNews...) {
			return store.PriorityGame
		}
		return store.PriorityThread
	case compose.KindPrivate:
		if len(m.Contents) > 0 && !slices.ContainsFunc(m.Contents, func(c string) bool { return c != "reminder" }) {
			return store.PriorityNotice
		}
		return store.PriorityGame
	case compose.KindConfirm:
		if has("refused") {
			return store.PriorityGame
		}
		return store.PriorityReceipt
	}
	return store.PriorityGame
}

// SendingHold is what the sender reports when the provider begins
// refusing mail for its sending limit.
type SendingHold struct {
	Reply         string
	Sent, Learned int
	Blocked       bool
}

// SendingHeld records that the provider refuses mail for its sending
// limit and, the first time for this hold, tells the referee of every game
// under way, in the same transaction: once, not for each message. The
// notices wait in the outbox with the rest, first in line.
func (h *Host) SendingHeld(ctx context.Context, hold SendingHold) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.transact(ctx, "sending-hold", func(w *work) error {
		started, err := w.tx.BeginHold(ctx, w.h.clock.real(), hold.Reply)
		if err != nil || !started {
			return err
		}
		waiting, err := w.tx.Waiting(ctx)
		if err != nil {
			return err
		}
		lim, err := w.tx.SendingLimit(ctx)
		if err != nil {
			return err
		}
		n := 0
		for _, c := range waiting {
			n += c
		}
		for _, g := range h.refereedGames() {
			msg, err := h.mail.SendingHold(compose.Hold{State: g.state, Dir: g.dir(), Since: w.now, Reply: hold.Reply,
				Sent: hold.Sent, Learned: hold.Learned, Waiting: n, Blocked: hold.Blocked, Number: lim.Holds, Now: w.now})
			if err != nil {
				return &failure{fmt.Errorf("compose the sending hold notice: %w", err)}
			}
			w.out = append(w.out, msg)
		}
		h.log.Warn("mail waits for the provider's sending limit; the referees are told", "reply", hold.Reply, "waiting", n)
		return nil
	})
}

// SendingResumed records that the provider takes mail again.
func (h *Host) SendingResumed(ctx context.Context) error {
	_, err := h.st.EndHold(ctx)
	return err
}

// sendingStatus reads the sending budget for the referee's STATUS: what
// was sent in the host's last day, the budget, the hold under way, what
// waits and when it will have gone out. It reads the store's committed
// state; a failure leaves the budget out of the answer.
func (h *Host) sendingStatus(game string) (compose.SendingStatus, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	day := h.opts.SendingDay
	if day <= 0 {
		day = 24 * time.Hour
	}
	now := h.clock.real()
	sent, err := h.st.SentSince(ctx, now.Add(-day))
	if err != nil {
		h.log.Warn("cannot read the mail sent for STATUS", "err", err)
		return compose.SendingStatus{}, false
	}
	lim, err := h.st.SendingLimit(ctx)
	if err != nil {
		h.log.Warn("cannot read the sending limit for STATUS", "err", err)
		return compose.SendingStatus{}, false
	}
	waiting, err := h.st.Waiting(ctx)
	if err != nil {
		h.log.Warn("cannot read the outbox for STATUS", "err", err)
		return compose.SendingStatus{}, false
	}
	ss := compose.SendingStatus{Limit: h.opts.RecipientsPerDay, Waiting: waiting}
	if !lim.HeldSince.IsZero() {
		ss.HeldSince = h.clock.Now().Add(-h.clock.gameSpan(now.Sub(lim.HeldSince)))
	}
	if ss.Limit == 0 {
		ss.Limit = lim.Learned
	}
	for _, x := range sent {
		ss.Used += x.Recipients
	}
	total := 0
	for _, n := range waiting {
		total += n
	}
	if f := sender.Forecast(sendstore.Sent(sent), total, ss.Limit, day, now); !f.IsZero() {
		// The outbox keeps real time; the game's clock may run faster.
		ss.Forecast = h.clock.Now().Add(h.clock.gameSpan(f.Sub(now)))
	}
	if p, ok, err := h.st.Plan(ctx, game); err != nil {
		h.log.Warn("cannot read the sending plan for STATUS", "game", game, "err", err)
	} else if ok && ss.Limit > 0 {
		ss.Round = roundForecast(p)
	}
	return ss, true
}

// gameSpan is the game time that passes in the real duration d.
func (c Clock) gameSpan(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.speed())
}

// refereedGames are the games under way with a referee to tell of what
// concerns the whole host (a sending hold, a withdrawn authorisation), in
// the order of their names. The caller holds h.mu.
func (h *Host) refereedGames() []*game {
	ids := make([]string, 0, len(h.games))
	for id, g := range h.games {
		if g.state.Phase != engine.EndedPhase && g.state.Referee != "" {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	games := make([]*game, len(ids))
	for i, id := range ids {
		games[i] = h.games[id]
	}
	return games
}
