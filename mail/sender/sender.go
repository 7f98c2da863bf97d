package sender

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mafiamail/mafiamail/internal/backoff"
	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// Outbox is the queue of outgoing mail; the host hands the sender its
// store through an adapter.
// MarkRetry and MarkFailed are called from several goroutines at once when
// Config.Connections is above 1.
type Outbox interface {
	// ClaimDue marks up to limit messages that are due at now as being
	// sent and returns them in the order they are to be handed over, the
	// order they were queued; a budget claims
	// through Ledger.ClaimDueWithin instead.
	ClaimDue(ctx context.Context, now time.Time, limit int) ([]Message, error)
	// MarkAllSent records that the server accepted claimed messages, in
	// one transaction: a batch's messages are recorded together once the
	// batch is done.
	MarkAllSent(ctx context.Context, ids []int64, now time.Time) error
	// MarkRetry makes a claimed message due again at next, after a
	// temporary failure described by errText.
	MarkRetry(ctx context.Context, id int64, next time.Time, errText string) error
	// Release puts a claimed message back, due at next, without counting
	// an attempt: one that was not attempted, or was refused for the
	// account's sending limit. Mail released again and again behind a
	// failing message, or held again and again for a limit, must not
	// build up a backoff of its own.
	Release(ctx context.Context, id int64, next time.Time, why string) error
	// MarkFailed records that a claimed message cannot be sent.
	MarkFailed(ctx context.Context, id int64, errText string) error
	// NextAttempt returns when the earliest message waiting to be sent is
	// due; ok is false when none is waiting.
	NextAttempt(ctx context.Context) (t time.Time, ok bool, err error)
	// NextAttemptAfter returns when the earliest message waiting to be
	// sent that is not due at t falls due; ok is false when none is.
	NextAttemptAfter(ctx context.Context, t time.Time) (next time.Time, ok bool, err error)
}

// Stats describe what a sender has done so far.
type Stats struct {
	// Sent counts messages the server accepted (for at least one
	// recipient); Retried counts attempts that failed for now (4xx,
	// network); Failed counts messages given up on (5xx). Refused counts
	// recipients refused for good in messages that were sent to others.
	Sent, Retried, Failed, Refused uint64
	// Connects counts connections that were ready to send (after TLS and
	// AUTH); ConnectFailures counts those that were not.
	Connects, ConnectFailures uint64
	// Drains counts completed passes over the due messages.
	Drains uint64
	// Holds counts the times the provider began refusing mail for its
	// sending limit; Held counts messages put back to wait for it.
	Holds, Held uint64
	// LastError is the latest error, "" if none.
	LastError string
}

// Sender drains an Outbox. Create it with New and run it with Run.
type Sender struct {
	cfg    Config
	ep     mailurl.Endpoint
	tls    *tls.Config
	outbox Outbox
	clock  func() time.Time
	log    *slog.Logger
	kick   chan struct{}

	// Only Run's goroutine touches failures: consecutive failures of the
	// server or the outbox; and idleUntil: after a drain that found mail
	// due but could claim none of it, when that may change (see idle).
	failures  int
	idleUntil time.Time

	// recMu guards unrecorded, the results the outbox failed to record,
	// which the workers of a drain add to.
	recMu      sync.Mutex
	unrecorded []record
	// sent are the messages of the batch in progress that the server
	// accepted, to be recorded together when it ends (recordSent).
	sent []record

	// holdMu guards hs, what the workers of a drain share about the
	// provider's limit; probing is set during a drain that probes a hold.
	holdMu  sync.Mutex
	hs      holdState
	probing atomic.Bool

	mu    sync.Mutex
	stats Stats
}

// record is a result to write to the outbox.
type record struct {
	what string
	id   int64
	save func(ctx context.Context) error
	// after runs once save has succeeded (OnFailed), on Run's goroutine.
	after func()
}

// New checks cfg and returns a Sender for outbox. clock gives the time
// used for the outbox (due times, sent times); nil means time.Now.
func New(cfg Config, outbox Outbox, clock func() time.Time) (*Sender, error) {
	if outbox == nil {
		return nil, errors.New("sender: an outbox is required")
	}
	if clock == nil {
		clock = time.Now
	}
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ep, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	tc := ep.TLSConfig(cfg.TLSConfig)
	s := &Sender{
		cfg:    cfg,
		ep:     ep,
		tls:    tc,
		outbox: outbox,
		clock:  clock,
		kick:   make(chan struct{}, 1),
	}
	s.log = cfg.Logger.With("component", "sender", "server", ep.Addr)
	return s, nil
}

// Kick wakes the sender to look for due messages now: call it after
// committing a transaction that enqueued mail (store.OutboxSignal does the
// same). Kicks coalesce, and are ignored while the sender waits out a
// backoff after the server failed: new mail does not make a down server
// come back sooner. It never blocks.
func (s *Sender) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Stats returns a snapshot of the sender's counters. It is safe to call
// from any goroutine.
func (s *Sender) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

func (s *Sender) update(f func(*Stats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// Run sends due messages until ctx ends, and then returns nil. It sleeps
// until the next message is due, a Kick, or the end of a backoff. Call it
// once.
func (s *Sender) Run(ctx context.Context) error {
	s.log.Info("sending mail", "security", s.ep.Security.String(), "auth", s.cfg.Username != "")
	s.resumeHold(ctx)
	for ctx.Err() == nil {
		err := s.sendDue(ctx)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			delay := backoff.Duration(s.failures, s.cfg.MinBackoff, s.cfg.MaxBackoff)
			s.failures++
			s.update(func(st *Stats) { st.LastError = err.Error() })
			s.log.Warn("sending stopped; trying again later", "err", err, "retry_in", delay.Round(time.Millisecond), "failures", s.failures)
			// Kicks are ignored meanwhile: the server or the outbox is
			// failing, and new mail does not change that.
			if !backoff.Sleep(ctx, delay) {
				break
			}
			continue
		}
		s.failures = 0
		if !s.waitForWork(ctx) {
			break
		}
	}
	s.log.Info("stopped sending mail")
	return nil
}

// SendDue sends, once, what is due at the sender's clock and fits the
// budget: it records the results a failing outbox could not take before,
// then drains the due messages. It is the pass Run repeats; a caller that
// moves the clock itself (a simulation in game time) calls it instead of
// Run, after ResumeHold, and gets the same sending, holds and budget.
// It returns an error when the server cannot be reached or the outbox
// fails; what was claimed and not attempted is then due again. Not safe
// to call while Run runs, or from several goroutines at once.
func (s *Sender) SendDue(ctx context.Context) error {
	return s.sendDue(ctx)
}

// ResumeHold takes up a hold the store records from before a restart, as
// Run does when it starts; call it once before the first SendDue.
func (s *Sender) ResumeHold(ctx context.Context) { s.resumeHold(ctx) }

func (s *Sender) sendDue(ctx context.Context) error {
	err := s.flush(ctx)
	if err == nil {
		err = s.drain(ctx)
	}
	if err == nil && ctx.Err() == nil {
		s.update(func(st *Stats) { st.Drains++ })
	}
	return err
}

// waitForWork sleeps until the next message is due or a Kick; it reports
// false when ctx ended.
func (s *Sender) waitForWork(ctx context.Context) bool {
	var timer <-chan time.Time
	next, ok, err := s.outbox.NextAttempt(ctx)
	switch {
	case err != nil:
		s.log.Warn("cannot read the outbox; looking again later", "err", err)
		t := time.NewTimer(s.cfg.MinBackoff)
		defer t.Stop()
		timer = t.C
	case ok:
		// While the provider or the budget makes mail wait, the wait
		// ends first; while the mail due is held back behind other
		// mail, until that may have changed (a kick still wakes it).
		if nb := s.notBefore(); nb.After(next) {
			next = nb
		}
		if s.idleUntil.After(next) {
			next = s.idleUntil
		}
		t := time.NewTimer(max(next.Sub(s.clock()), 0))
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.kick:
	case <-timer:
	}
	return true
}

// drain sends every due message, over up to Config.Connections
// connections at once. It returns an error when the server cannot be
// reached or the outbox fails; the messages it had claimed and not yet
// attempted are then released for a later attempt.
func (s *Sender) drain(ctx context.Context) (err error) {
	s.idleUntil = time.Time{}
	now := s.clock()
	if now.Before(s.notBefore()) {
		return nil
	}
	// Connect only when something is due.
	next, ok, err := s.outbox.NextAttempt(ctx)
	if err != nil {
		return fmt.Errorf("read the outbox: %w", err)
	}
	if !ok || next.After(now) {
		return nil
	}
	rcptRoom, msgRoom, err := s.budgetRoom(ctx)
	if err != nil || rcptRoom == 0 || msgRoom == 0 {
		return err
	}
	// Connect before claiming: while the server is down, messages stay
	// as they are instead of collecting failed attempts. The other
	// connections are opened once there is a message for them.
	c, err := s.connect(ctx)
	if err != nil {
		s.update(func(st *Stats) { st.ConnectFailures++ })
		return err
	}
	s.update(func(st *Stats) { st.Connects++ })
	p := newPool(s.cfg.Connections)
	p.conns[0] = c
	defer p.quit()
	// Refusals kept back to be judged are settled when the drain ends:
	// failed when nothing else told them from a blocked account, put
	// back when the drain broke off.
	defer func() { s.settleSuspects(ctx, runNow, err == nil) }()
	for {
		limit := s.cfg.BatchSize
		if s.held() {
			// A probe: one message, not a storm. The room is then one
			// message, as tight as a budget gets, so the probe is the
			// most urgent message due.
			s.probing.Store(true)
			limit, msgRoom = 1, 1
		}
		if msgRoom >= 0 {
			limit = min(limit, msgRoom)
		}
		msgs, err := s.claim(ctx, limit, rcptRoom, msgRoom)
		if err != nil {
			return fmt.Errorf("claim due messages: %w", err)
		}
		if len(msgs) == 0 {
			return s.idle(ctx)
		}
		// With no budget to weigh before each claim, the batch claims
		// more as it goes.
		refill := rcptRoom < 0 && msgRoom < 0 && !s.held()
		if err := s.sendBatch(ctx, p, msgs, refill); err != nil {
			s.announceHold(ctx)
			return err
		}
		if err := s.flush(ctx); err != nil {
			s.announceHold(ctx)
			return err
		}
		s.probing.Store(false)
		if s.held() {
			s.announceHold(ctx)
			return nil
		}
		if rcptRoom, msgRoom, err = s.budgetRoom(ctx); err != nil || rcptRoom == 0 || msgRoom == 0 {
			return err
		}
	}
}

// idle is the end of a drain that claimed nothing more. When mail is
// still due, none of it could be claimed: it waits behind earlier mail to
// its readers (a message waiting for its retry, or in flight), or it does
// not fit in the budget's room. Looking again at once would open
// connection after connection until that changes, so the sender waits
// until the earliest moment it may: the next message to fall due (the
// retry that holds the rest back) or the budget's window freeing, and a
// kick, as new mail may go, still wakes it.
func (s *Sender) idle(ctx context.Context) error {
	now := s.clock()
	next, ok, err := s.outbox.NextAttempt(ctx)
	if err != nil {
		return fmt.Errorf("read the outbox: %w", err)
	}
	if !ok || next.After(now) {
		return nil
	}
	until := now.Add(s.cfg.MinBackoff)
	if t, ok, err := s.outbox.NextAttemptAfter(ctx, now); err != nil {
		return fmt.Errorf("read the outbox: %w", err)
	} else if ok && t.Before(until) {
		until = t
	}
	if t, err := s.windowFrees(ctx, now); err != nil {
		return fmt.Errorf("count the mail sent against the budget: %w", err)
	} else if !t.IsZero() && t.Before(until) {
		until = t
	}
	s.idleUntil = until
	s.log.Debug("mail is due, but none may go yet; waiting", "until", until)
	return nil
}

// budgetRoom is room for the drain; when the budget has none, it records
// when it will.
func (s *Sender) budgetRoom(ctx context.Context) (rcpts, msgs int, err error) {
	rcpts, msgs, wait, err := s.room(ctx, s.clock())
	if err != nil {
		return 0, 0, fmt.Errorf("count the mail sent against the budget: %w", err)
	}
	s.holdMu.Lock()
	if rcpts == 0 || msgs == 0 {
		s.hs.budgetWait = wait
	} else {
		s.hs.budgetWait = time.Time{}
	}
	s.holdMu.Unlock()
	if rcpts == 0 || msgs == 0 {
		s.log.Debug("the sending budget is spent; waiting", "until", wait)
	}
	return rcpts, msgs, nil
}

// claim takes due messages from the outbox, within the budget's room.
func (s *Sender) claim(ctx context.Context, limit, rcpts, msgs int) ([]Message, error) {
	room := Room{Recipients: rcpts, Messages: msgs}
	if s.cfg.Ledger == nil || room == Unlimited {
		return s.outbox.ClaimDue(ctx, s.clock(), limit)
	}
	claimed, err := s.cfg.Ledger.ClaimDueWithin(ctx, s.clock(), limit, room)
	if err != nil || len(claimed) > 0 || rcpts < 0 {
		return claimed, err
	}
	// An empty window takes any one message, even one with more
	// recipients than the limit, which would otherwise wait for ever; only
	// one, so that a batch larger than the limit does not run into the
	// provider's refusal.
	if used, err := s.sentInWindow(ctx, s.clock()); err != nil || used > 0 {
		return nil, err
	}
	room.Oversized = true
	return s.cfg.Ledger.ClaimDueWithin(ctx, s.clock(), 1, room)
}

// release makes claimed messages that were not attempted due again, after
// delay.
func (s *Sender) release(ctx context.Context, msgs []Message, why string, delay time.Duration) {
	next := s.clock().Add(delay)
	for _, m := range msgs {
		s.save(ctx, record{what: "release", id: m.ID, save: func(ctx context.Context) error {
			return s.outbox.Release(ctx, m.ID, next, why)
		}}, runNow)
	}
}

// apply records the result of one attempt. It is called from the
// workers of a drain, several at once; notify runs a record's after on
// Run's goroutine.
func (s *Sender) apply(ctx context.Context, m Message, r result, notify func(func())) {
	log := s.log.With("id", m.ID, "message_id", m.MessageID, "kind", m.Kind, "game", m.Game, "attempts", m.Attempts+1)
	switch {
	case r.limit:
		s.update(func(st *Stats) { st.LastError = r.err.Error() })
		s.holdMessage(ctx, m, r.err, notify)
		// Refusals kept back may have been the limit too.
		s.settleSuspects(ctx, notify, false)
		s.startHold(ctx, r.err, false, "")
	case r.sent:
		s.holdMu.Lock()
		delete(s.hs.blockHeld, m.ID)
		s.holdMu.Unlock()
		if h := s.endHold(); h != nil {
			notify(func() { s.onResume(*h) })
		}
		// Mail flows: what was refused before earned it.
		s.settleSuspects(ctx, notify, true)
		s.update(func(st *Stats) {
			st.Sent++
			st.Refused += uint64(len(r.refused))
		})
		rec := record{what: "mark sent", id: m.ID, save: func(ctx context.Context) error {
			return s.outbox.MarkAllSent(ctx, []int64{m.ID}, s.clock())
		}}
		if len(r.refused) > 0 {
			rerr := &RecipientsError{Refused: r.refused}
			log.Warn("sent, but some recipients were refused", "err", rerr)
			rec.after = func() { s.onFailed(m, rerr) }
		} else {
			log.Debug("sent", "recipients", len(m.To))
		}
		// Recorded with the rest of the batch's (recordSent): until then
		// the message stays claimed, and holds back later mail to its
		// recipients as it did while it was being sent.
		s.recMu.Lock()
		s.sent = append(s.sent, rec)
		s.recMu.Unlock()
	case r.permanent:
		if key := blockKey(r.err); key != "" && s.judgeRefusal(ctx, m, r, key, notify) {
			return
		}
		s.settleSuspects(ctx, notify, true)
		s.fail(ctx, m, r, notify)
	default:
		delay := backoff.Duration(m.Attempts, s.cfg.MinBackoff, s.cfg.MaxBackoff)
		next := s.clock().Add(delay)
		s.update(func(st *Stats) {
			st.Retried++
			st.LastError = r.err.Error()
		})
		log.Warn("sending failed for now; will retry", "err", r.err, "retry_in", delay.Round(time.Millisecond))
		s.save(ctx, record{what: "mark retry", id: m.ID, save: func(ctx context.Context) error {
			return s.outbox.MarkRetry(ctx, m.ID, next, r.err.Error())
		}}, notify)
	}
}

// fail records that the server refused m for good.
func (s *Sender) fail(ctx context.Context, m Message, r result, notify func(func())) {
	s.update(func(st *Stats) {
		st.Failed++
		st.LastError = r.err.Error()
	})
	s.log.Error("the server refused the message for good", "id", m.ID, "message_id", m.MessageID, "kind", m.Kind, "game", m.Game, "err", r.err)
	s.save(ctx, record{what: "mark failed", id: m.ID, save: func(ctx context.Context) error {
		return s.outbox.MarkFailed(ctx, m.ID, r.err.Error())
	}, after: func() { s.onFailed(m, r.err) }}, notify)
}

// holdMessage puts m back to wait for the provider to take mail again.
// It is due at once, in its place in the queue: the hold, not the
// message, decides when it goes. It counts no attempt: the refusal was
// the account's, not the message's, and a message refused for it again
// and again (the probe of a long hold) must not build up a backoff that
// would keep it back for hours after the hold, once a passing failure
// meets it.
func (s *Sender) holdMessage(ctx context.Context, m Message, err error, notify func(func())) {
	s.update(func(st *Stats) { st.Held++ })
	why := "held for the provider's sending limit: " + describe(err)
	s.save(ctx, record{what: "hold", id: m.ID, save: func(ctx context.Context) error {
		return s.outbox.Release(ctx, m.ID, s.clock(), why)
	}}, notify)
}

// judgeRefusal decides what a 5xx that could mean a blocked account does
// to m, and reports whether it dealt with m. The first such refusal is
// kept back; the same refusal of another message to another recipient
// next means the account is blocked: both are held, as for a limit. A
// different result next (mail accepted, another refusal) means the first
// was the message's own, and it is failed.
func (s *Sender) judgeRefusal(ctx context.Context, m Message, r result, key string, notify func(func())) bool {
	s.holdMu.Lock()
	if h := s.hs.hold; h != nil && h.Blocked && h.key == key {
		s.holdMu.Unlock()
		s.holdMessage(ctx, m, r.err, notify)
		s.startHold(ctx, r.err, true, key)
		return true
	}
	if s.hs.blockHeld[m.ID] {
		// Held for a block before, and refused the same way after mail
		// flowed again: the message's own.
		delete(s.hs.blockHeld, m.ID)
		s.holdMu.Unlock()
		return false
	}
	old := s.hs.suspects
	if len(old) > 0 && old[0].key == key && !sharesRecipient(old, m) {
		s.hs.suspects = nil
		if s.hs.blockHeld == nil {
			s.hs.blockHeld = map[int64]bool{}
		}
		for _, sp := range old {
			s.hs.blockHeld[sp.m.ID] = true
		}
		s.hs.blockHeld[m.ID] = true
		s.holdMu.Unlock()
		for _, sp := range old {
			s.holdMessage(ctx, sp.m, sp.r.err, notify)
		}
		s.holdMessage(ctx, m, r.err, notify)
		s.startHold(ctx, r.err, true, key)
		return true
	}
	s.hs.suspects = []suspect{{m: m, r: r, key: key}}
	s.holdMu.Unlock()
	for _, sp := range old {
		s.fail(ctx, sp.m, sp.r, notify)
	}
	return true
}

func sharesRecipient(sps []suspect, m Message) bool {
	for _, sp := range sps {
		for _, a := range sp.m.To {
			for _, b := range m.To {
				if strings.EqualFold(a, b) {
					return true
				}
			}
		}
	}
	return false
}

// settleSuspects fails the refusals kept back (fail), or puts them back
// to be sent again.
func (s *Sender) settleSuspects(ctx context.Context, notify func(func()), fail bool) {
	s.holdMu.Lock()
	sps := s.hs.suspects
	s.hs.suspects = nil
	s.holdMu.Unlock()
	for _, sp := range sps {
		if fail {
			s.fail(ctx, sp.m, sp.r, notify)
		} else {
			s.holdMessage(ctx, sp.m, sp.r.err, notify)
		}
	}
}

func (s *Sender) onHold(h Hold) {
	if s.cfg.OnHold == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("OnHold panicked", "panic", v)
		}
	}()
	s.cfg.OnHold(h)
}

func (s *Sender) onResume(h Hold) {
	if s.cfg.OnResume == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("OnResume panicked", "panic", v)
		}
	}()
	s.cfg.OnResume(h)
}

func (s *Sender) onFailed(m Message, err error) {
	if s.cfg.OnFailed == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("OnFailed panicked", "message_id", m.MessageID, "panic", v)
		}
	}()
	s.cfg.OnFailed(m, err)
}

// recordTimeout bounds one write of a result to the outbox.
const recordTimeout = 30 * time.Second

// save writes a result to the outbox. What has been sent must be recorded
// even while Run is stopping, so the write does not end with ctx. A
// result the outbox cannot take now is kept and written before anything
// else is sent (flush); until then the message stays claimed, and is not
// sent again. It is safe to call from several goroutines at once.
func (s *Sender) save(ctx context.Context, r record, notify func(func())) {
	if err := s.write(ctx, r, notify); err != nil {
		s.log.Error("cannot record a result in the outbox; keeping it to record later", "what", r.what, "id", r.id, "err", err)
		s.recMu.Lock()
		s.unrecorded = append(s.unrecorded, r)
		s.recMu.Unlock()
	}
}

func (s *Sender) write(ctx context.Context, r record, notify func(func())) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := r.save(ctx); err != nil {
		return err
	}
	if r.after != nil {
		notify(r.after)
	}
	return nil
}

// recordSent records the messages the server accepted during a batch, in
// one transaction for the batch instead of one per message.
// A process that dies before this sends them again after its restart,
// with the same bytes and Message-ID, as it would one that died between
// the server's answer and its record. When the outbox cannot take them
// now, each is kept to be recorded before anything else is sent (flush).
// It runs on Run's goroutine once the batch's workers are done.
func (s *Sender) recordSent(ctx context.Context) {
	s.recMu.Lock()
	recs := s.sent
	s.sent = nil
	s.recMu.Unlock()
	if len(recs) == 0 {
		return
	}
	ids := make([]int64, len(recs))
	for i, r := range recs {
		ids[i] = r.id
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	err := s.outbox.MarkAllSent(wctx, ids, s.clock())
	cancel()
	if err != nil {
		s.log.Error("cannot record sent messages in the outbox; keeping them to record later", "messages", len(ids), "err", err)
		s.recMu.Lock()
		s.unrecorded = append(s.unrecorded, recs...)
		s.recMu.Unlock()
		return
	}
	for _, r := range recs {
		if r.after != nil {
			r.after()
		}
	}
}

// runNow is the notify of code that runs on Run's goroutine.
func runNow(f func()) { f() }

// flush writes the results the outbox could not take before. It runs on
// Run's goroutine while no worker is sending.
func (s *Sender) flush(ctx context.Context) error {
	s.recMu.Lock()
	defer s.recMu.Unlock()
	for len(s.unrecorded) > 0 {
		r := s.unrecorded[0]
		if err := s.write(ctx, r, runNow); err != nil {
			return fmt.Errorf("record earlier results in the outbox (%s of %d): %w", r.what, r.id, err)
		}
		s.unrecorded = s.unrecorded[1:]
	}
	return nil
}

// KickOn returns a loop that kicks the sender each time signal fires (the
// store's OutboxSignal: a committed transaction queued mail), until its
// context ends.
func (s *Sender) KickOn(signal <-chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-signal:
				s.Kick()
			}
		}
	}
}
