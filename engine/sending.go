package engine

import (
	"fmt"
	"time"
)

// The host's mailbox may send only so many copies a day. The host, which
// alone knows how much it has sent, tells the engine when the thread must
// be gathered into digests to fit (T3) and when a deadline must wait for
// mail the limit holds back (T4). These commands come from the host, never
// from mail: the mail grammar has no words for them, and the engine takes
// them from no one else.
const (
	// ByHost is the host itself, acting on what its sending budget allows.
	ByHost ActorKind = "host"

	// CmdMailPlan gathers the thread into digests every Duration for
	// everyone, to stay within the sending limit; a zero Duration returns
	// to the setup's way and each player's choice (T3).
	CmdMailPlan Verb = "MAIL PLAN"
	// CmdMailWait holds the round's close, until Time at the latest,
	// while mail the players need before it is held back (T4).
	CmdMailWait Verb = "MAIL WAIT"
	// CmdMailFlowed says the held mail has gone out: a close that waits
	// for it comes now (T4).
	CmdMailFlowed Verb = "MAIL FLOWED"
)

// Events of the host's sending.
const (
	// EvMailPlan: the thread is gathered every Duration for everyone, or
	// (zero) is sent as the setup and the players chose again (T3).
	EvMailPlan EventType = "mail_plan"
	// EvMailWait: the round's close waits for held mail, until Deadline
	// at the latest (T4).
	EvMailWait EventType = "mail_wait"
	// EvMailFlowed: the held mail has gone out; the round closes at
	// Deadline, now (T4).
	EvMailFlowed EventType = "mail_flowed"
)

// DefaultSendingGrace is how long a deadline waits at most for mail the
// sending limit holds back, unless the setup says otherwise (T4).
const DefaultSendingGrace = 2 * time.Hour

// SendingGrace is how long a deadline may wait for held mail; zero when
// the setup says it may not wait at all.
func (s Setup) SendingGrace() time.Duration {
	switch {
	case s.HeldMailGrace == 0:
		return DefaultSendingGrace
	case s.HeldMailGrace < 0:
		return 0
	}
	return s.HeldMailGrace
}

// PlanIntervals are the digest intervals the host chooses from when the
// thread must fit the sending budget, shortest first (T3): spans a reader
// can plan around.
var PlanIntervals = []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour,
	6 * time.Hour, 8 * time.Hour, 12 * time.Hour}

// hostCommand applies a command of the host's.
func (t *step) hostCommand(c Command) error {
	switch c.Verb {
	case CmdMailPlan:
		return t.mailPlan(c.Duration)
	case CmdMailWait:
		return t.mailWait(c.Time)
	case CmdMailFlowed:
		return t.mailFlowed()
	}
	return refuse(NotAllowed, "the host does not send %s", c.Verb)
}

// mailPlan sets or ends the plan. As with a player's MAIL, what is
// gathered goes out first, so no post is held back or sent twice.
func (t *step) mailPlan(every time.Duration) error {
	s := t.s
	if every < 0 || (every > 0 && every < time.Minute) {
		return refuse(BadArgument, "a digest interval of %s is too short", every)
	}
	if s.Phase == SignupPhase {
		return refuse(WrongPhase, "the thread of game %s has not begun", s.Game)
	}
	if every == s.MailPlan {
		return nil
	}
	t.digest()
	t.emit(Event{Type: EvMailPlan, To: toAll, Duration: every})
	return nil
}

// ClockCloseDue reports whether the round's close by the clock is due at
// now: the deadline of a day round, the latest end of a night. Early
// closes (every lock in, a night that ends at an earlier mark with every
// action in) are not: the players who ended the round need no more mail
// for it. A night that ends at its latest end ends by the clock, whether
// or not every action came in before it: were it to wait only when one
// is missing, the wait would tell the town so.
func (s *State) ClockCloseDue(now time.Time) bool {
	if s.Paused {
		return false
	}
	switch s.Phase {
	case DayPhase:
		return !now.Before(s.closeAt()) && !s.earlyCloseDue()
	case NightPhase:
		return !now.Before(s.Night.End) && !s.nightEndsAt().Before(s.Night.End)
	}
	return false
}

// MailWaiting reports whether the round's close waits for held mail (T4).
func (s *State) MailWaiting() bool { return !s.MailWaitUntil.IsZero() }

// mailWait holds the round's close until latest at most. A round waits
// once: the host asks when its close comes due, and a close already held
// stays as it is.
func (t *step) mailWait(latest time.Time) error {
	s := t.s
	switch {
	case s.Phase != DayPhase && s.Phase != NightPhase:
		return refuse(WrongPhase, "no round of game %s is running", s.Game)
	case s.MailWaiting():
		return nil
	case !s.ClockCloseDue(t.now):
		return refuse(WrongPhase, "the round of game %s does not close by the clock now", s.Game)
	case !latest.After(t.now):
		return refuse(BadArgument, "a close cannot wait until %s, which has passed", latest.Format(time.RFC3339))
	}
	t.emit(Event{Type: EvMailWait, To: toAll, Deadline: latest.UTC(), Duration: latest.Sub(t.now)})
	return nil
}

// mailFlowed ends the wait: the held mail has gone out, and the round
// closes now.
func (t *step) mailFlowed() error {
	if !t.s.MailWaiting() {
		return nil
	}
	t.emit(Event{Type: EvMailFlowed, To: toAll, Deadline: t.now})
	return nil
}

// applyMailPlan folds EvMailPlan into the state.
func (s *State) applyMailPlan(e Event) {
	if e.Duration > 0 && s.DigestEvery() == 0 && s.DigestPending == 0 {
		// Digests begin now: the first interval runs from here.
		s.LastDigest = e.At
	}
	s.MailPlan, s.MailPlanAt = e.Duration, e.At
}

// applyMailWait folds EvMailWait and EvMailFlowed into the state: the
// round's close moves to the event's Deadline.
func (s *State) applyMailWait(e Event) error {
	switch s.Phase {
	case DayPhase:
		s.Deadline = e.Deadline
	case NightPhase:
		s.Night.End = e.Deadline
	default:
		return fmt.Errorf("%s outside a round", e.Type)
	}
	if e.Type == EvMailWait {
		s.DeadlineMoves++ // the calendar's event moves with it (T5)
		s.MailWaitUntil = e.Deadline
	} else {
		s.MailWaitUntil = time.Time{}
	}
	return nil
}
