package watcher

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mafiamail/mafiamail/internal/backoff"
	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// Fetched is one message read from the mailbox.
type Fetched struct {
	// Mailbox, UIDValidity and UID identify the message on the server.
	// After a change of UIDVALIDITY the same message comes again under
	// new numbers.
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	// Raw is the message exactly as the server returned BODY[], or, when
	// HeaderOnly is set, its header as the server returned BODY[HEADER].
	Raw []byte
	// Size is the message's size in bytes: RFC822.SIZE for a message
	// fetched HeaderOnly, len(Raw) otherwise.
	Size int64
	// HeaderOnly is set for a message larger than Config.MaxMessageBytes,
	// of which only the header was fetched.
	HeaderOnly bool
	// Arrived is when the message reached the mailbox: its INTERNALDATE,
	// set by the receiving server (never the sender's Date), narrowed
	// within its whole second by when the watcher first found it, and
	// never later than the moment the watcher read it.
	Arrived time.Time
	// SetAside is set for mail that Config.Triage found no game can use;
	// Flood, when it comes with enough others of its kind (Config.FloodSize)
	// that it should not be logged one by one.
	SetAside, Flood bool
}

// Handler applies one message. It returns nil only once the message's
// outcome (applied, refused, ignored, or recorded as an error) is durably
// committed; then the watcher marks it \Seen. It returns nil without doing
// anything for a message it has committed before, which comes again after a
// crash or a change of UIDVALIDITY. An error leaves the message unseen, to
// be offered again after a backoff.
//
// The handler runs on a goroutine of Run's, one message at a time, never
// two at once; meanwhile the watcher reads on (see GroupHandler). ctx ends
// when Run's context does.
type Handler func(ctx context.Context, m Fetched) error

// GroupHandler applies a group of messages together, in the order given,
// and returns one error per message, with the meaning Handler's has: a
// handler that commits them in one transaction pays for one fsync instead
// of one per message. It must keep every message's own guarantee: nil
// only once that message's outcome is durable, and one message's failure
// must not lose another's work. The messages of a group all arrived on
// the same side of every deadline (Config.Barrier).
//
// A group is what the watcher fetched while the handler worked on the
// group before (at most Config.BatchSize messages), or one batch when the
// handler was idle: the turns among senders in the order they were
// picked, each turn in UID order. The handler is never called again
// before it has returned; while it works, the watcher searches, fetches
// and calls Config.Triage, Barrier and OnWatermark on its own goroutine.
type GroupHandler func(ctx context.Context, ms []Fetched) []error

// Stats describe what a watcher has done so far.
type Stats struct {
	// Connected is true while the watcher is logged in with the mailbox
	// selected.
	Connected bool
	// CaughtUp is true while every unseen message has been offered to the
	// handler and the watcher waits for new mail (in IDLE, or between
	// polls). Messages waiting for a retry after a handler error do not
	// count against it; Deferred says how many there are.
	CaughtUp bool
	// Idling is true while the server has acknowledged IDLE and the
	// watcher waits in it for news of new mail.
	Idling bool
	// UIDValidity is that of the mailbox at the latest login.
	UIDValidity uint32
	// Connects counts successful logins; Disconnects counts connections
	// that ended in an error (not those closed because Run's context
	// ended).
	Connects    uint64
	Disconnects uint64
	// Scans counts completed passes over the unseen mail.
	Scans uint64
	// Fetched counts messages read whole to be handed to the handler
	// (read again after a handler error or a dropped pick, counted again).
	Fetched uint64
	// Handled counts messages for which the handler returned nil;
	// HandlerErrors counts the times it returned an error.
	Handled       uint64
	HandlerErrors uint64
	// Deferred is how many messages wait for a retry after a handler error.
	Deferred int
	// LastError is the latest error of the connection, "" if none.
	LastError string
}

// Watcher watches one mailbox. Create it with New and run it with Run.
type Watcher struct {
	cfg     Config
	ep      mailurl.Endpoint
	tls     *tls.Config
	handler GroupHandler
	log     *slog.Logger

	// Only Run's goroutine touches these.
	uidValidity uint32
	retries     map[imap.UID]retry
	// reported is the latest watermark given to OnWatermark; flood counts
	// the mail set aside since the last flood ended.
	reported  time.Time
	flood     Flood
	floodUIDs map[imap.UID]bool
	// searched is when the latest search began, in any session.
	searched time.Time

	mu    sync.Mutex
	stats Stats
}

// retry is a message whose handler failed: when to offer it again.
type retry struct {
	failures int
	next     time.Time
}

// New checks cfg and returns a Watcher that hands messages to handler,
// one at a time.
func New(cfg Config, handler Handler) (*Watcher, error) {
	if handler == nil {
		return nil, errors.New("watcher: a handler is required")
	}
	w, err := newWatcher(cfg)
	if err != nil {
		return nil, err
	}
	w.handler = func(ctx context.Context, ms []Fetched) []error {
		errs := make([]error, len(ms))
		for i := range ms {
			// A panic fails its own message only: the ones before it are
			// done.
			errs[i] = w.recovered(ms[i:i+1], func() []error { return []error{handler(ctx, ms[i])} })[0]
		}
		return errs
	}
	return w, nil
}

// NewGroup checks cfg and returns a Watcher that hands the messages of
// each FETCH to handler together.
func NewGroup(cfg Config, handler GroupHandler) (*Watcher, error) {
	if handler == nil {
		return nil, errors.New("watcher: a handler is required")
	}
	w, err := newWatcher(cfg)
	if err != nil {
		return nil, err
	}
	w.handler = handler
	return w, nil
}

// newWatcher checks cfg and returns a Watcher with no handler yet.
func newWatcher(cfg Config) (*Watcher, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ep, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	tc := ep.TLSConfig(cfg.TLSConfig)
	w := &Watcher{
		cfg:     cfg,
		ep:      ep,
		tls:     tc,
		retries: map[imap.UID]retry{},
	}
	w.log = cfg.Logger.With("component", "watcher", "server", ep.Addr, "user", cfg.Username, "mailbox", cfg.Mailbox)
	return w, nil
}

// Run watches the mailbox until ctx ends, reconnecting after every error,
// and then returns nil. Call it once.
func (w *Watcher) Run(ctx context.Context) error {
	w.log.Info("watching mailbox", "security", w.ep.Security.String())
	failures := 0
	for ctx.Err() == nil {
		ready := false
		err := w.runSession(ctx, func() { ready = true })
		w.update(func(s *Stats) { s.Connected, s.CaughtUp, s.Idling = false, false, false })
		if ctx.Err() != nil {
			break
		}
		if ready {
			failures = 0
		}
		delay := backoff.Duration(failures, w.cfg.MinBackoff, w.cfg.MaxBackoff)
		failures++
		w.update(func(s *Stats) {
			s.Disconnects++
			s.LastError = err.Error()
		})
		w.log.Warn("IMAP connection failed; reconnecting", "err", err, "retry_in", delay.Round(time.Millisecond), "failures", failures)
		if !backoff.Sleep(ctx, delay) {
			break
		}
	}
	w.log.Info("stopped watching mailbox")
	return nil
}

// Stats returns a snapshot of the watcher's counters. It is safe to call
// from any goroutine.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

func (w *Watcher) update(f func(*Stats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

// caughtUp records that every unseen message has been offered.
func (w *Watcher) caughtUp() {
	w.mu.Lock()
	w.stats.CaughtUp = true
	w.stats.Scans++
	w.stats.Deferred = len(w.retries)
	st := w.stats
	w.mu.Unlock()
	if w.cfg.OnCaughtUp != nil {
		w.cfg.OnCaughtUp(st)
	}
}

// setUIDValidity records the mailbox's UIDVALIDITY at login. When it
// changed, every UID known so far means nothing any more.
func (w *Watcher) setUIDValidity(v uint32) {
	if w.uidValidity != 0 && w.uidValidity != v {
		w.log.Warn("UIDVALIDITY changed: mail processed before will be offered again and must be recognised by its Message-ID",
			"old", w.uidValidity, "new", v)
		clear(w.retries)
	}
	w.uidValidity = v
	w.update(func(s *Stats) { s.UIDValidity = v })
}

// due splits the unseen messages into those to offer now and the earliest
// time one of the others is due, and forgets retries of messages that are
// no longer unseen. With no retry waiting, due is unseen itself, which the
// caller must not change.
func (w *Watcher) due(unseen []*pending, now time.Time) (due []*pending, next time.Time) {
	if len(w.retries) == 0 {
		return unseen, time.Time{}
	}
	present := make(map[imap.UID]bool, len(w.retries))
	for _, p := range unseen {
		r, ok := w.retries[p.uid]
		if !ok {
			due = append(due, p)
			continue
		}
		present[p.uid] = true
		if r.next.After(now) {
			if next.IsZero() || r.next.Before(next) {
				next = r.next
			}
			continue
		}
		due = append(due, p)
	}
	for uid := range w.retries {
		if !present[uid] {
			delete(w.retries, uid)
		}
	}
	return due, next
}

// nextRetry is when the earliest deferred message is due; zero if none is.
func (w *Watcher) nextRetry() time.Time {
	var next time.Time
	for _, r := range w.retries {
		if next.IsZero() || r.next.Before(next) {
			next = r.next
		}
	}
	return next
}

// handle offers messages to the handler and reports which it returned nil
// for. A handler error defers the message; a panic counts as an error for
// every message of the call, so that one bad message cannot stop the host.
func (w *Watcher) handle(ctx context.Context, ms []Fetched) (ok []bool) {
	return w.settle(ctx, ms, w.call(ctx, ms))
}

// settle records what the handler returned for ms (errs, one each) and
// reports which it returned nil for. It runs on Run's goroutine.
func (w *Watcher) settle(ctx context.Context, ms []Fetched, errs []error) (ok []bool) {
	ok = make([]bool, len(ms))
	for i, m := range ms {
		err := errs[i]
		uid := imap.UID(m.UID)
		if err == nil {
			delete(w.retries, uid)
			w.update(func(s *Stats) { s.Handled++ })
			w.log.Debug("message handled", "uidvalidity", m.UIDValidity, "uid", m.UID, "bytes", len(m.Raw))
			ok[i] = true
			continue
		}
		if ctx.Err() != nil {
			continue
		}
		r := w.retries[uid]
		delay := backoff.Duration(r.failures, w.cfg.MinBackoff, w.cfg.MaxBackoff)
		r.failures++
		r.next = time.Now().Add(delay)
		w.retries[uid] = r
		w.update(func(s *Stats) { s.HandlerErrors++ })
		w.log.Warn("handler failed; the message stays unseen and will be offered again",
			"uidvalidity", m.UIDValidity, "uid", m.UID, "err", err, "failures", r.failures, "retry_in", delay.Round(time.Millisecond))
	}
	return ok
}

func (w *Watcher) call(ctx context.Context, ms []Fetched) []error {
	errs := w.recovered(ms, func() []error { return w.handler(ctx, ms) })
	if len(errs) != len(ms) {
		w.log.Error("the handler returned a result for each of too few or too many messages", "results", len(errs), "messages", len(ms))
		errs = make([]error, len(ms))
		for i := range errs {
			errs[i] = errors.New("the handler returned no result for this message")
		}
	}
	return errs
}

// recovered runs fn, which handles ms, turning a panic into an error for
// each of them.
func (w *Watcher) recovered(ms []Fetched, fn func() []error) (errs []error) {
	defer func() {
		if v := recover(); v != nil {
			uids := make([]uint32, len(ms))
			for i, m := range ms {
				uids[i] = m.UID
			}
			w.log.Error("handler panicked", "uids", uids, "panic", v, "stack", string(debug.Stack()))
			errs = make([]error, len(ms))
			for i := range errs {
				errs[i] = fmt.Errorf("handler panicked: %v", v)
			}
		}
	}()
	return fn()
}
