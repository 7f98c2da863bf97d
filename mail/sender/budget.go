package sender

import (
	"context"
	"time"

	"github.com/mafiamail/mafiamail/internal/backoff"
)

// Budget is how much the account may send. Zero fields mean no limit of
// that kind.
type Budget struct {
	// RecipientsPerDay bounds the recipients of the messages accepted in
	// any rolling Day; 0 means the limit learned from the provider, if
	// any (see Ledger).
	RecipientsPerDay int
	// MessagesPerMinute bounds the messages accepted in any rolling
	// Minute.
	MessagesPerMinute int
	// Day and Minute are the windows in real time: the host's day and
	// minute, shorter when game time runs faster than real time. Defaults
	// 24 hours and 1 minute.
	Day, Minute time.Duration
}

// Ledger is where the sender counts what it has sent and keeps what it
// learns of the provider's limit, so that both survive restarts.
// The host hands the sender its store through an adapter.
type Ledger interface {
	// SentSince returns the messages accepted after since, oldest first.
	SentSince(ctx context.Context, since time.Time) ([]Sent, error)
	// ClaimDueWithin is ClaimDue within a budget's room: by priority
	// while the mail due is more than the room takes.
	ClaimDueWithin(ctx context.Context, now time.Time, limit int, room Room) ([]Message, error)
	// SendingLimit returns the learned limit and the hold under way.
	SendingLimit(ctx context.Context) (SendingLimit, error)
	// LearnLimit keeps n as the limit in recipients per day.
	LearnLimit(ctx context.Context, n int, at time.Time) error
}

// Hold describes a time the provider refuses mail for its sending limit:
// the sender holds every message (none is marked failed) and probes now
// and then with one message until the provider takes mail again.
type Hold struct {
	// Since is when the first limit reply came; Reply is what it said.
	Since time.Time
	Reply string
	// SentInWindow is the recipients sent in the budget's Day before the
	// refusal; Learned is the limit learned from it (0 when a limit was
	// configured, or nothing had been sent).
	SentInWindow int
	Learned      int
	// Blocked is set when the hold comes from the same refusal of
	// different messages and recipients in a row, rather than a reply
	// known as a limit.
	Blocked bool
	// NextProbe is when the sender tries again.
	NextProbe time.Time
	// Probes counts the probes refused so far.
	Probes int
	// key is the refusal that started a Blocked hold.
	key string
}

// holdState is what a drain's workers share about a hold; guarded by
// Sender.holdMu.
type holdState struct {
	hold *Hold
	// suspects are messages refused for good, not yet recorded: the next
	// result tells whether they earned it or the account is blocked.
	suspects []suspect
	// blockHeld are messages that were held for a blocked account: when
	// refused the same way again after mail flowed, they are failed.
	blockHeld map[int64]bool
	// budgetWait is when the budget has room again, zero when it has.
	budgetWait time.Time
	// announce is set while a new hold waits for announceHold.
	announce bool
}

type suspect struct {
	m   Message
	r   result
	key string
}

func (b *Budget) setDefaults() {
	if b.Day <= 0 {
		b.Day = 24 * time.Hour
	}
	if b.Minute <= 0 {
		b.Minute = time.Minute
	}
}

// notBefore is when the sender may next send: the end of a hold's wait or
// of a full budget's, zero for now.
func (s *Sender) notBefore() time.Time {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	t := s.hs.budgetWait
	if s.hs.hold != nil && s.hs.hold.NextProbe.After(t) {
		t = s.hs.hold.NextProbe
	}
	return t
}

// held reports whether a hold is under way.
func (s *Sender) held() bool {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	return s.hs.hold != nil
}

// CurrentHold returns the hold under way, if any.
func (s *Sender) CurrentHold() (Hold, bool) {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if s.hs.hold == nil {
		return Hold{}, false
	}
	return *s.hs.hold, true
}

// recipientLimit is the configured or learned limit of recipients per day,
// 0 for none.
func (s *Sender) recipientLimit(ctx context.Context) (int, error) {
	if s.cfg.Budget.RecipientsPerDay > 0 || s.cfg.Ledger == nil {
		return s.cfg.Budget.RecipientsPerDay, nil
	}
	l, err := s.cfg.Ledger.SendingLimit(ctx)
	if err != nil {
		return 0, err
	}
	return l.Learned, nil
}

// room returns how many recipients and messages the budget lets the sender
// send now (-1 for no limit), and, when it lets none, when it will.
func (s *Sender) room(ctx context.Context, now time.Time) (rcpts, msgs int, wait time.Time, err error) {
	rcpts, msgs = -1, -1
	if s.cfg.Ledger == nil {
		return rcpts, msgs, time.Time{}, nil
	}
	perDay, err := s.recipientLimit(ctx)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	perMinute := s.cfg.Budget.MessagesPerMinute
	if perDay <= 0 && perMinute <= 0 {
		return rcpts, msgs, time.Time{}, nil
	}
	b := s.cfg.Budget
	since := now.Add(-b.Minute)
	if perDay > 0 {
		since = now.Add(-max(b.Day, b.Minute))
	}
	sent, err := s.cfg.Ledger.SentSince(ctx, since)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	if perDay > 0 {
		used := 0
		for _, x := range sent {
			if x.At.After(now.Add(-b.Day)) {
				used += x.Recipients
			}
		}
		rcpts = max(perDay-used, 0)
		if rcpts == 0 {
			// The window has room for one more once enough of the oldest
			// sends have aged out.
			over := used - perDay + 1
			for _, x := range sent {
				if !x.At.After(now.Add(-b.Day)) {
					continue
				}
				over -= x.Recipients
				if over <= 0 {
					wait = x.At.Add(b.Day)
					break
				}
			}
		}
	}
	if perMinute > 0 {
		var recent []time.Time
		for _, x := range sent {
			if x.At.After(now.Add(-b.Minute)) {
				recent = append(recent, x.At)
			}
		}
		msgs = max(perMinute-len(recent), 0)
		if msgs == 0 {
			if w := recent[len(recent)-perMinute].Add(b.Minute); w.After(wait) {
				wait = w
			}
		}
	}
	if (rcpts == 0 || msgs == 0) && !wait.After(now) {
		// Only a clock step back can bring this; look again soon.
		wait = now.Add(s.cfg.MinBackoff)
	}
	return rcpts, msgs, wait, nil
}

// windowFrees is when the budget next has more room than at now: when
// the oldest send in one of its windows ages out of it. Zero when no
// budget applies or nothing was sent in its windows.
func (s *Sender) windowFrees(ctx context.Context, now time.Time) (time.Time, error) {
	if s.cfg.Ledger == nil {
		return time.Time{}, nil
	}
	perDay, err := s.recipientLimit(ctx)
	if err != nil {
		return time.Time{}, err
	}
	b := s.cfg.Budget
	window := time.Duration(0)
	switch {
	case perDay > 0:
		window = max(b.Day, b.Minute)
	case b.MessagesPerMinute > 0:
		window = b.Minute
	default:
		return time.Time{}, nil
	}
	sent, err := s.cfg.Ledger.SentSince(ctx, now.Add(-window))
	if err != nil {
		return time.Time{}, err
	}
	var first time.Time
	for _, x := range sent {
		for _, w := range []time.Duration{b.Day, b.Minute} {
			if t := x.At.Add(w); t.After(now) && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
	}
	return first, nil
}

// sentInWindow is the recipients accepted in the last Day.
func (s *Sender) sentInWindow(ctx context.Context, now time.Time) (int, error) {
	if s.cfg.Ledger == nil {
		return 0, nil
	}
	sent, err := s.cfg.Ledger.SentSince(ctx, now.Add(-s.cfg.Budget.Day))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, x := range sent {
		n += x.Recipients
	}
	return n, nil
}

// probeDelay is the wait before the probe after n refused ones: the
// configured ProbeEvery doubled n times, at most MaxProbe.
func (s *Sender) probeDelay(n int) time.Duration {
	return backoff.Duration(n, s.cfg.ProbeEvery, s.cfg.MaxProbe)
}

// startHold begins a hold, or extends the one under way while probing,
// after a limit reply (or the same refusal of different messages) err.
// It returns the hold when it is a new one; announceHold completes it.
// Called by the workers.
func (s *Sender) startHold(ctx context.Context, err error, blocked bool, key string) *Hold {
	now := s.clock()
	s.holdMu.Lock()
	if h := s.hs.hold; h != nil {
		if !s.probing.Load() {
			// Another connection's answer to the same refusal.
			s.holdMu.Unlock()
			return nil
		}
		h.Probes++
		h.NextProbe = now.Add(s.probeDelay(h.Probes))
		s.holdMu.Unlock()
		s.log.Warn("the provider still refuses mail for its sending limit; holding the outbox", "reply", describe(err), "next_probe_in", h.NextProbe.Sub(now).Round(time.Second))
		return nil
	}
	h := &Hold{Since: now, Reply: describe(err), Blocked: blocked, key: key, NextProbe: now.Add(s.probeDelay(0))}
	s.hs.hold = h
	s.hs.announce = true
	s.holdMu.Unlock()
	s.update(func(st *Stats) { st.Holds++ })
	s.log.Warn("the provider refuses mail for its sending limit; holding every message until it takes mail again",
		"reply", h.Reply, "blocked", blocked)
	return h
}

// announceHold completes a hold begun in the drain's last batch, once
// every result of the batch is recorded: it learns the limit from what
// had been sent in the window, times the first probe, and calls OnHold.
// It runs on Run's goroutine.
func (s *Sender) announceHold(ctx context.Context) {
	s.holdMu.Lock()
	h := s.hs.hold
	if h == nil || !s.hs.announce {
		s.holdMu.Unlock()
		return
	}
	s.hs.announce = false
	blocked := h.Blocked
	s.holdMu.Unlock()

	now := s.clock()
	ctx = context.WithoutCancel(ctx)
	used, err := s.sentInWindow(ctx, now)
	if err != nil {
		s.log.Warn("cannot count the mail sent in the window", "err", err)
	}
	learned := 0
	// The first refusal teaches the limit; later ones, which may come of
	// the provider's window running on a clock of its own, only make the
	// probes wait.
	known, _ := s.recipientLimit(ctx)
	if known == 0 && s.cfg.Ledger != nil && used > 0 && !blocked {
		if err := s.cfg.Ledger.LearnLimit(ctx, used, now); err != nil {
			s.log.Warn("cannot keep the learned sending limit", "err", err)
		} else {
			learned = used
		}
	}
	var wait time.Time
	if max(learned, s.cfg.Budget.RecipientsPerDay) > 0 {
		// With a limit known, the first probe waits for the window to
		// have room.
		if _, _, w, err := s.room(ctx, now); err == nil {
			wait = w
		}
	}
	s.holdMu.Lock()
	h.SentInWindow, h.Learned = used, learned
	if wait.After(h.NextProbe) {
		h.NextProbe = wait
	}
	snapshot := *h
	s.holdMu.Unlock()
	s.log.Warn("holding the outbox for the provider's sending limit", "sent_in_window", used, "learned_limit", learned,
		"next_probe_in", snapshot.NextProbe.Sub(now).Round(time.Second))
	s.onHold(snapshot)
}

// endHold ends the hold under way, if any, once the provider accepted a
// probe; it returns the hold for OnResume. A message accepted on another
// connection just after the refusal that began the hold is no probe: the
// provider's count had not yet reached it.
func (s *Sender) endHold() *Hold {
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	h := s.hs.hold
	if h == nil || !s.probing.Load() {
		return nil
	}
	s.hs.hold = nil
	s.log.Info("the provider takes mail again; sending what was held", "held_for", s.clock().Sub(h.Since).Round(time.Second))
	return h
}

// Forecast is when waiting recipients will all have been sent, at perDay
// recipients in any rolling day, given what was sent (oldest first) and
// now: each send frees its room a day after it. Zero when they fit now or
// no limit is known.
func Forecast(sent []Sent, waiting, perDay int, day time.Duration, now time.Time) time.Time {
	if perDay <= 0 || waiting <= 0 {
		return time.Time{}
	}
	used := 0
	var window []Sent
	for _, x := range sent {
		if x.At.After(now.Add(-day)) {
			window = append(window, x)
			used += x.Recipients
		}
	}
	room := perDay - used
	if waiting <= room {
		return time.Time{}
	}
	waiting -= max(room, 0)
	// The rest goes as the window frees: first as today's sends age out,
	// then a day's worth a day.
	over := max(used-perDay, 0)
	for _, x := range window {
		freed := x.Recipients
		if over > 0 {
			d := min(over, freed)
			over -= d
			freed -= d
		}
		waiting -= freed
		if waiting <= 0 {
			return x.At.Add(day)
		}
	}
	last := now
	if len(window) > 0 {
		last = window[len(window)-1].At.Add(day)
	}
	days := (waiting + perDay - 1) / perDay
	return last.Add(time.Duration(days) * day)
}

// resumeHold takes up a hold the store records from before a restart: the
// sender probes first, as it would have, and the first accepted probe ends
// it (OnResume), so that the record does not outlive the hold. The
// referees were told when it began.
func (s *Sender) resumeHold(ctx context.Context) {
	if s.cfg.Ledger == nil {
		return
	}
	l, err := s.cfg.Ledger.SendingLimit(ctx)
	if err != nil {
		s.log.Warn("cannot read the sending limit's record", "err", err)
		return
	}
	if l.HeldSince.IsZero() {
		return
	}
	s.holdMu.Lock()
	s.hs.hold = &Hold{Since: l.HeldSince, Reply: l.HeldReply, NextProbe: s.clock()}
	s.holdMu.Unlock()
	s.log.Info("the provider refused mail for its sending limit before the restart; probing first", "since", l.HeldSince)
}
