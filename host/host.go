// Package host runs games: it takes each inbound message through
// authentication and the rules engine, and each deadline through the
// engine's clock, and commits what they cause — the inbox row, the events
// and the outgoing mail — in one store transaction.
package host

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// DefaultMaxPostBytes is the longest post relayed unless configured: some
// ten pages of text, far more than a day's longest case against a suspect,
// and small enough that a game's copies of it stay a few megabytes.
const DefaultMaxPostBytes = 32 << 10

// DefaultKeepRawMail is how long inbound mail is kept whole after its game
// ended: time for the referee to look into a dispute.
const DefaultKeepRawMail = 30 * 24 * time.Hour

// Config configures a Host.
type Config struct {
	// Address is the host's bare address, host@example.org.
	Address string
	// Referees may create games with NEW GAME.
	Referees []string
	// AuthServID is the trusted authserv-id (empty for none).
	AuthServID string
	// MaxMessageBytes and MaxCommandLines limit one message.
	MaxMessageBytes int
	MaxCommandLines int
	// PerSenderPerHour limits how many messages one address may send.
	PerSenderPerHour int
	// MaxPostBytes is the longest post relayed (after quotes and
	// signatures are taken away); 0 means DefaultMaxPostBytes.
	MaxPostBytes int
	// KeepRawMail is how long the whole of an inbound message is kept
	// after its game ended (or, for mail for no game, after it came); then
	// only its header and outcome are. 0 means DefaultKeepRawMail.
	KeepRawMail time.Duration
	// Setup is the setup of a new game until its referee sends SETUP.
	Setup engine.Setup
	// Language is the host's default language, a tag of package lang
	// ("" for English): of mail about no game, and of new games.
	Language string
	// Clock is game time; its zero value is real time.
	Clock Clock
	// ArrivalOrder makes commands count at their mail's arrival (Mail.Arrived)
	// and the clock apply a deadline only once every message that reached
	// the mailbox before it has been handled (Advance), or MailGrace after
	// it while the mailbox cannot be read (docs/arrival.md). Without it, as
	// where no watcher feeds the host, commands count when they are handled
	// and deadlines apply on time.
	ArrivalOrder bool
	// MailGrace is how long a deadline waits for unread mail unless the
	// game's setup says (mail_grace); zero means DefaultMailGrace.
	MailGrace time.Duration
	// RecipientsPerDay is the configured sending budget ([smtp]
	// recipients_per_day), 0 for the learned one; SendingDay is the
	// host's day in real time (24 hours, shorter with a fast clock). The
	// referee's STATUS shows them.
	RecipientsPerDay int
	SendingDay       time.Duration
	// Rand is the role draw's random source; nil means Key's, or
	// crypto/rand without a key. A seeded one makes a demo repeatable.
	Rand io.Reader
	// Key is the host key (internal/hostkey): without Rand, each game's
	// draw and salt derive from it and the game's name, so that a host
	// replaying its mailbox draws the same roles. The store's tokens derive
	// from it too (store.UseKey).
	Key   *hostkey.Key
	Store *store.Store
	Log   *slog.Logger
}

// Host hosts every game of one mailbox.
type Host struct {
	opts  Config
	st    *store.Store
	log   *slog.Logger
	proc  *inbound.Processor
	mail  *compose.Composer
	clock Clock
	// layout lays out the mail of groups beside their next messages.
	layout *layoutPool

	// mu serialises processing: one message or one tick at a time, as the
	// store has one writer and each step must see the last one's state.
	mu    sync.Mutex
	games map[string]*game
	// schedule indexes games by their deadlines for the clock; setGame
	// keeps it in step with games.
	schedule *schedule
	// wake tells the clock loop that a deadline may have moved.
	wake chan struct{}
	// watermark is the moment (real time, Unix nanoseconds; 0 for none
	// yet) before which every message that reached the mailbox has been
	// handled (Advance). The watcher raises it while a group is being
	// handled, so it is kept apart from mu.
	watermark atomic.Int64
	// started is when the host started, from which a deadline that
	// passed while it was down waits its grace.
	started time.Time
	// revokedSince is when the mail provider stopped accepting the host's
	// authorisation, zero while it accepts it: the referees are told once
	// per revocation (revoked.go). revocations counts them since the host
	// started.
	revokedSince time.Time
	revocations  int
	// nextPlan is when (real time) the host next weighs its games'
	// rounds against the sending budget (replan.go).
	nextPlan time.Time
	// barrier is the earliest deadline of any game as it stands between
	// transactions (real time; nil for none), for Barrier, which the
	// watcher reads while a group is being handled and must not wait for
	// it. Only a holder of mu sets it (publishBarrier).
	barrier atomic.Pointer[time.Time]
	// tx is the transaction in progress, nil between them: reads that
	// must see what the messages before in the same group did (a
	// participant's token) go through it.
	tx *store.Tx
}

// New opens the host on its store, rebuilding every game from its events.
func New(ctx context.Context, opts Config) (*Host, error) {
	if opts.Store == nil {
		return nil, errors.New("host: a store is required")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.KeepRawMail <= 0 {
		opts.KeepRawMail = DefaultKeepRawMail
	}
	if opts.MaxPostBytes <= 0 {
		opts.MaxPostBytes = DefaultMaxPostBytes
	}
	if opts.Setup.Players == 0 {
		opts.Setup = engine.Classic()
	}
	if opts.Setup.Language == "" && opts.Language != lang.Default {
		opts.Setup.Language = opts.Language
	}
	if opts.MailGrace <= 0 {
		opts.MailGrace = DefaultMailGrace
	}
	h := &Host{opts: opts, st: opts.Store, log: opts.Log, clock: opts.Clock,
		games: map[string]*game{}, schedule: newSchedule(), wake: make(chan struct{}, 1), layout: newLayoutPool()}
	h.started = h.clock.real()
	var limiter *inbound.Limiter
	if opts.PerSenderPerHour > 0 {
		limiter = inbound.NewLimiter(time.Hour/time.Duration(opts.PerSenderPerHour), max(10, opts.PerSenderPerHour/4))
	}
	proc, err := inbound.NewProcessor(inbound.Config{HostAddress: opts.Address, AuthServID: opts.AuthServID,
		MaxSize: opts.MaxMessageBytes, MaxCommands: opts.MaxCommandLines}, liveDirectory{h}, limiter, opts.Log)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	h.proc = proc
	if h.mail, err = compose.New(opts.Address); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	h.mail.SetSendingStatus(h.sendingStatus)
	h.mail.SetLanguage(opts.Language)
	if err := h.load(ctx); err != nil {
		return nil, err
	}
	if err := h.restoreRateLimit(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// load rebuilds every game from the store, checking snapshots against the log.
func (h *Host) load(ctx context.Context) error {
	rebuilt, err := h.st.RebuildAll(ctx, foldJSON, true)
	if err != nil {
		return fmt.Errorf("host: rebuild games: %w", err)
	}
	rows, err := h.st.Games(ctx)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	stored := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		stored[r.ID] = r.Deadline
	}
	for _, rb := range rebuilt {
		if rb.Stale {
			// Written by a program that kept less in a game's state: the
			// state is folded afresh from the log, and the next snapshot
			// replaces it.
			h.log.Warn("a game's snapshot does not match its log; rebuilt from the log", "game", rb.Game, "snapshot_seq", rb.FromSnapshot)
		}
		s := &engine.State{}
		if err := json.Unmarshal(rb.State, s); err != nil {
			return fmt.Errorf("host: decode game %s: %w", rb.Game, err)
		}
		g := &game{state: s, seq: rb.Seq, observers: map[string]string{}}
		g.stored = stored[rb.Game]
		ps, err := h.st.Participants(ctx, rb.Game)
		if err != nil {
			return fmt.Errorf("host: participants of %s: %w", rb.Game, err)
		}
		for _, p := range ps {
			switch {
			case p.Kind == store.KindReferee:
				g.referee = p
			case p.Kind == store.KindObserver && p.Status == store.StatusActive:
				g.observers[p.Address] = p.Token
			}
		}
		// Mail composed after a restart is never dated before the mail
		// composed before it.
		if raw, err := h.st.LastQueued(ctx, rb.Game); err != nil {
			return fmt.Errorf("host: %w", err)
		} else if len(raw) > 0 {
			g.lastDate = headerDate(raw)
		}
		if s.DigestEvery() > 0 && s.DigestPending > 0 {
			// The news gathered for the next digest is in the log since
			// the last one.
			evs, err := h.st.Events(ctx, rb.Game, 0)
			if err != nil {
				return fmt.Errorf("host: events of %s: %w", rb.Game, err)
			}
			var logged []compose.Logged
			for _, se := range evs {
				e, err := engine.UnmarshalEvent(se.Payload)
				if err != nil {
					return fmt.Errorf("host: event %d of %s: %w", se.Seq, rb.Game, err)
				}
				logged = append(logged, compose.Logged{Seq: se.Seq, Event: e})
			}
			g.digestSince = s.LastDigest
			for _, l := range logged {
				if l.Event.Type == engine.EvDigest {
					g.digest = nil
				} else if engine.Digestible(l.Event) {
					g.digest = append(g.digest, l)
				}
			}
		}
		g.updateNext()
		h.setGame(rb.Game, g)
	}
	h.publishBarrier()
	h.log.Info("games loaded", "games", len(rebuilt))
	return nil
}

// Now is the host's game time.
func (h *Host) Now() time.Time { return h.clock.Now() }

// Game returns a copy of a game's state, for status displays and tests.
func (h *Host) Game(id string) (*engine.State, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.games[id]
	if !ok {
		return nil, false
	}
	return g.state.Clone(), true
}

// GameIDs lists the games, sorted.
func (h *Host) GameIDs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.games))
	for id := range h.games {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Directory lets inbound authenticate a token against a store: the host's
// own, or a read-only view of it for `mafiamail parse`.
type Directory struct{ Store *store.Store }

// Participant returns the active participant a token belongs to.
func (d Directory) Participant(gameID, token string) (inbound.Participant, bool) {
	p, err := d.Store.ActiveParticipantByToken(context.Background(), gameID, token)
	if err != nil {
		return inbound.Participant{}, false
	}
	return participant(p), true
}

// participant is what the reading of a message needs to know of p.
func participant(p store.Participant) inbound.Participant {
	return inbound.Participant{Name: p.Name, Address: p.Address, Referee: p.Kind == store.KindReferee, Observer: p.Kind == store.KindObserver}
}

// liveDirectory is the host's own Directory: it reads inside the
// transaction in progress, so that a message sees the participants the
// messages before it in the same group added or replaced.
type liveDirectory struct{ h *Host }

// Participant returns the active participant a token belongs to.
func (d liveDirectory) Participant(gameID, token string) (inbound.Participant, bool) {
	var p store.Participant
	var err error
	if tx := d.h.tx; tx != nil {
		p, err = tx.ActiveParticipantByToken(context.Background(), gameID, token)
	} else {
		p, err = d.h.st.ActiveParticipantByToken(context.Background(), gameID, token)
	}
	if err != nil {
		return inbound.Participant{}, false
	}
	return participant(p), true
}

// work is one transaction in the making: the games it touched (copies, so
// that a failed commit leaves the live games as they were), their new
// events, and the mail it causes.
type work struct {
	h     *Host
	tx    *store.Tx
	now   time.Time
	cause string
	// inboundKey names the inbound message being handled, if any, for
	// the Message-IDs of its answers (see messageCause).
	inboundKey string
	// inboxID is the inbound message being processed, 0 for a deadline.
	inboxID int64
	games   map[string]*game
	order   []string
	evs     map[string][]engine.Event
	// sender is whose message caused the events: their private copies go
	// in the reply instead.
	sender *engine.Actor
	// reply is the answer to the message, composed once the events are in.
	reply *compose.Answer
	// out is the mail laid out since the last of parts; parts is the
	// step's mail before it, in order (see outPart).
	out   []compose.Outgoing
	parts []outPart
	// beside, when set, lays out the step's mail beside the group's next
	// messages (see layout.go); nil lays it out in the step.
	beside *beside
}

// failure is what a message or a deadline cannot get past: a panic, or
// mail that cannot be composed. Unlike a store error it would fail the
// same way on every retry.
type failure struct{ err error }

func (f *failure) Error() string { return "cannot be processed: " + f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

func (h *Host) transact(ctx context.Context, cause string, fn func(w *work) error) error {
	return h.transactAt(ctx, cause, h.clock.Now(), fn)
}

// transactAt is transact at game time now: a command's arrival, or the
// deadline being applied. It is a transaction of its own.
func (h *Host) transactAt(ctx context.Context, cause string, now time.Time, fn func(w *work) error) error {
	return h.inGroup(ctx, func(g *group) error {
		return h.attempt(ctx, g, cause, now, fn)
	})
}

// game returns the working copy of a game, or nil.
func (w *work) game(id string) *game {
	if g, ok := w.games[id]; ok {
		return g
	}
	g, ok := w.h.games[id]
	if !ok {
		return nil
	}
	c := g.clone()
	w.games[id] = c
	w.order = append(w.order, id)
	return c
}

// record keeps events a game's working copy has already folded.
func (w *work) record(id string, evs []engine.Event) {
	w.evs[id] = append(w.evs[id], evs...)
}

// flush stores the events and composes and enqueues the mail.
func (w *work) flush(ctx context.Context) error {
	for _, id := range w.order {
		evs := w.evs[id]
		if len(evs) == 0 {
			continue
		}
		g := w.games[id]
		news, err := toStore(evs)
		if err != nil {
			return err
		}
		stored, err := w.tx.AppendEvents(ctx, id, g.seq, w.cause, news...)
		if err != nil {
			return fmt.Errorf("store events of %s: %w", id, err)
		}
		// Held when anyone takes digests, before the batch or after it: a
		// MAIL EACH that ends the last reader's digests sends the digest
		// of what was held first.
		hold := g.state.DigestEvery() > 0
		batch := compose.Batch{Dir: g.dir(), Sender: w.sender}
		if live, ok := w.h.games[id]; ok {
			batch.Before = live.state
			hold = hold || live.state.DigestEvery() > 0
		}
		batch.HoldForDigest = hold
		if hold {
			batch.Held, batch.HeldSince = g.digest, g.digestSince
		}
		batch.NotBefore = g.lastDate
		if endsGame(evs) {
			// The end mail tells the game's whole story (see package story).
			if batch.History, err = history(ctx, w.tx, id, g.seq); err != nil {
				return err
			}
		}
		for i, e := range evs {
			batch.Events = append(batch.Events, compose.Logged{Seq: stored[i].Seq, Event: e})
		}
		// The answer to the message goes with its game's batch: after
		// the mail of its events, or in the sender's own thread copy.
		if w.reply != nil && w.reply.State != nil && w.reply.State.Game == id {
			batch.Answer, w.reply = w.reply, nil
		}
		drafts, err := w.h.mail.DraftBatch(batch)
		if err != nil {
			return &failure{fmt.Errorf("compose mail of %s: %w", id, err)}
		}
		w.draft(id, drafts)
		g.dated(drafts.Latest())
		if hold {
			g.gather(batch.Events)
		}
		prev := g.seq
		g.seq = stored[len(stored)-1].Seq
		if g.seq/snapshotEvery != prev/snapshotEvery {
			// A snapshot spares a long game's restart the fold of its whole
			// log; the store checks it against the log when it is read.
			b, err := json.Marshal(g.state)
			if err != nil {
				return fmt.Errorf("snapshot %s: %w", id, err)
			}
			if err := w.tx.SaveSnapshot(ctx, id, g.seq, b, w.now); err != nil {
				return err
			}
		}
		if err := w.h.sideEffects(ctx, w, id, evs); err != nil {
			return err
		}
		g.updateNext()
		// Most commands leave the deadline as it was: the row is written
		// only when it changes. (An ended game's row is written below
		// all the same: its time of change ages its mail out.)
		if next := g.nextOrZero(); !g.stored.Equal(next) {
			if err := w.tx.SetGameDeadline(ctx, id, next, w.now); err != nil {
				return err
			}
			g.stored = next
		}
		if g.state.Phase == engine.EndedPhase {
			if err := w.tx.SetGameStatus(ctx, id, "ended", w.now); err != nil {
				return err
			}
		}
	}
	if w.reply != nil {
		// An answer is never dated before the game's mail that came
		// before it.
		var last time.Time
		var g *game
		if w.reply.State != nil {
			if g = w.games[w.reply.State.Game]; g != nil {
				last = g.lastDate
			} else if live := w.h.games[w.reply.State.Game]; live != nil {
				last = live.lastDate
			}
		}
		if w.reply.Now.Before(last) {
			w.reply.Now = last
		}
		drafts, err := w.h.mail.DraftReply(*w.reply)
		if err != nil {
			return &failure{fmt.Errorf("compose reply: %w", err)}
		}
		about := "no game"
		if w.reply.State != nil {
			about = w.reply.State.Game
		}
		w.draft(about, drafts)
		if g != nil {
			g.dated(drafts.Latest())
		}
	}
	w.takeReady()
	real := w.h.clock.real()
	if w.beside != nil {
		w.beside.add(w.parts, w.cause, real)
		w.parts = nil
		return nil
	}
	for _, p := range w.parts {
		msgs, err := layOut(p)
		if err != nil {
			return &failure{err}
		}
		if err := enqueue(ctx, w.tx, msgs, w.cause, real); err != nil {
			return err
		}
	}
	w.parts = nil
	return nil
}

// snapshotEvery is how many events go by between snapshots of a game.
const snapshotEvery = 256

// nextOrZero is the game's next deadline, or the zero time for none.
func (g *game) nextOrZero() time.Time {
	if !g.hasNext {
		return time.Time{}
	}
	return g.next
}

// sideEffects keeps the store's tables in step with what the events say:
// roles, replaced and removed participants, suspensions.
func (h *Host) sideEffects(ctx context.Context, w *work, id string, evs []engine.Event) error {
	g := w.games[id]
	for _, e := range evs {
		switch e.Type {
		case engine.EvRolesDrawn:
			for _, p := range g.state.Players {
				if err := w.tx.SetRole(ctx, id, p.Token, string(p.Role)); err != nil {
					return err
				}
			}
		case engine.EvSuspended:
			if _, err := w.tx.Suspend(ctx, e.Address, e.Reason, id, w.now); err != nil {
				return err
			}
		case engine.EvPostHeld:
			author := ""
			if p := g.state.Player(e.Slot); p != nil {
				author = p.Token
			}
			hp, err := w.tx.HoldPost(ctx, store.HeldPost{Game: id, Author: author, InboundID: w.inboxID,
				Text: e.Text, Reason: e.Reason}, w.now)
			if err != nil {
				return err
			}
			if hp.Number != e.Held {
				return fmt.Errorf("held post %d of %s stored as %d", e.Held, id, hp.Number)
			}
		case engine.EvPostRelayed, engine.EvPostRejected:
			status := store.Relayed
			if e.Type == engine.EvPostRejected {
				status = store.Rejected
			}
			if _, err := w.tx.DecideHeldPost(ctx, id, e.Held, status, w.now); err != nil {
				return err
			}
		case engine.EvPlayerReplaced:
			old := e.Text
			ps, err := w.tx.Participants(ctx, id)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p.Kind == store.KindPlayer && strings.EqualFold(p.Address, old) && p.Status == store.StatusActive {
					if err := w.tx.SetParticipantStatus(ctx, id, p.Token, store.StatusReplaced); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// drawSource is the random source of game's role draw: the configured one,
// else a stream derived from the host key and the game, so that a replay
// draws the same roles with the same salt; crypto/rand without a key.
func (h *Host) drawSource(game string) io.Reader {
	switch {
	case h.opts.Rand != nil:
		return h.opts.Rand
	case h.opts.Key != nil:
		return h.opts.Key.Stream(game, "draw")
	}
	return rand.Reader
}
