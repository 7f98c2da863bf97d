package engine

import (
	"strings"
	"time"
)

// How a player takes the thread (MAIL), as with a mailing list's digest
// option: each post as it comes, or gathered into digests. Secrets and
// the answers to a player's own commands always come at once.
const (
	MailDigest = "DIGEST"
	MailEach   = "EACH"
)

// DefaultDigestInterval is how often a player who chose digests gets one
// in a game whose setup sends each post at once.
const DefaultDigestInterval = 2 * time.Hour

// DigestEvery is how often the thread's digest goes out: the setup's
// interval, or DefaultDigestInterval while any player takes digests in a
// game that sends each post; zero when no one takes them (T1); while the
// host's plan for its sending budget is in force, the plan's (T3).
func (s *State) DigestEvery() time.Duration {
	if s.MailPlan > 0 {
		// The host's plan for its sending budget (T3) gathers no more
		// often than the setup does.
		return max(s.MailPlan, s.Setup.DigestInterval)
	}
	if s.Setup.DigestInterval > 0 {
		return s.Setup.DigestInterval
	}
	for _, p := range s.Players {
		if p.Mail == MailDigest {
			return DefaultDigestInterval
		}
	}
	return 0
}

// TakesDigests reports whether the thread reaches the player in digests:
// their own choice, or else the setup's way; everyone while the host's
// plan for its sending budget is in force (T3).
func (s *State) TakesDigests(p *Player) bool {
	if s.MailPlan > 0 {
		return true // the budget's plan holds for everyone (T3)
	}
	switch p.Mail {
	case MailDigest:
		return true
	case MailEach:
		return false
	}
	return s.Setup.DigestInterval > 0
}

// mail sets or shows how a player takes the thread. A change first sends
// the digest of what is gathered, so that no post is held for a reader
// who now takes each one, nor sent twice to one who now takes digests.
func (t *step) mail(c Command) error {
	s := t.s
	if c.Channel != Private {
		return refuse(NotAllowed, "MAIL works in your private channel: reply to your role mail")
	}
	p := s.Player(c.By.Slot)
	mode := strings.ToUpper(strings.TrimSpace(c.Text))
	switch mode {
	case "":
		shown := p.Mail
		if shown == "" {
			shown = MailEach
			if s.TakesDigests(p) {
				shown = MailDigest
			}
		}
		t.emit(Event{Type: EvMailShown, To: toPlayer(p.Slot), Slot: p.Slot, Text: shown})
		return nil
	case MailDigest, MailEach:
	default:
		return refuse(BadArgument, "MAIL takes DIGEST (the thread gathered every few hours) or EACH (every post as it comes), not %q", c.Text)
	}
	t.digest()
	t.emit(Event{Type: EvMailSet, To: toPlayer(p.Slot), Slot: p.Slot, Text: mode})
	return nil
}
