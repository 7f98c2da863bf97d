package mailserver

import (
	"sync"
	"time"

	"github.com/emersion/go-smtp"
)

// LimitStage is the step of an SMTP transaction at which a SendLimit
// refuses mail once the window is full.
type LimitStage int

const (
	// LimitAtMail refuses MAIL FROM, as Gmail does once the daily limit is
	// reached.
	LimitAtMail LimitStage = iota
	// LimitAtRcpt refuses each RCPT TO that would go past the limit.
	LimitAtRcpt
	// LimitAtData takes the whole transaction and refuses it after DATA.
	LimitAtData
)

// SendLimit makes the server behave like a mailbox provider with a sending
// limit: an authenticated user may send to at most Recipients recipients
// in any rolling Window; past that, the server answers Reply (by default
// Gmail's "550 5.4.5 Daily user sending limit exceeded") at Stage until
// earlier sends age out of the window. Mail from unauthenticated sessions
// (inbound mail to local users) is never limited.
type SendLimit struct {
	Recipients int
	Window     time.Duration
	Stage      LimitStage
	// Reply is the refusal; nil means Gmail's.
	Reply *smtp.SMTPError
	// Clock gives the time; nil means time.Now.
	Clock func() time.Time

	mu sync.Mutex
	// sent holds, per user, when each recipient was accepted.
	sent map[string][]time.Time
	// open counts, per user, the recipients of transactions under way
	// (from MAIL, where the first is counted, to the end of DATA).
	open map[string]int
	// refused counts refusals given.
	refused int
}

// GmailLimitReply is what Gmail answers once an account's daily sending
// limit is reached.
var GmailLimitReply = &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 4, 5},
	Message: "Daily user sending limit exceeded. For more information on Gmail sending limits go to https://support.google.com/a/answer/166852"}

func (l *SendLimit) now() time.Time {
	if l.Clock != nil {
		return l.Clock()
	}
	return time.Now()
}

func (l *SendLimit) reply() *smtp.SMTPError {
	if l.Reply != nil {
		return l.Reply
	}
	return GmailLimitReply
}

// used returns how many recipients user has been accepted for in the
// window, forgetting older ones. l.mu must be held.
func (l *SendLimit) used(user string) int {
	cut := l.now().Add(-l.Window)
	ts := l.sent[user]
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	l.sent[user] = ts[i:]
	return len(ts) - i
}

func (l *SendLimit) lock() {
	l.mu.Lock()
	if l.sent == nil {
		l.sent, l.open = map[string][]time.Time{}, map[string]int{}
	}
}

// admit counts n more recipients of a transaction of user as open; when
// the limit applies at stage, it first refuses if the window, with the
// recipients of every transaction under way, cannot take them. Check and
// count are one step, so that parallel connections cannot all pass.
func (l *SendLimit) admit(user string, stage LimitStage, n int) error {
	if l == nil || user == "" {
		return nil
	}
	l.lock()
	defer l.mu.Unlock()
	if stage == l.Stage && l.used(user)+l.open[user]+n > l.Recipients {
		l.refused++
		return l.reply()
	}
	l.open[user] += n
	return nil
}

// release gives up n open recipients of user.
func (l *SendLimit) release(user string, n int) {
	if l == nil || user == "" || n == 0 {
		return
	}
	l.lock()
	defer l.mu.Unlock()
	l.open[user] -= n
}

// takeAtData is the check after DATA: it refuses when the window cannot
// take the n recipients of the transaction, and otherwise counts them as
// sent, in one step.
func (l *SendLimit) takeAtData(user string, n int) error {
	if l == nil || user == "" || l.Stage != LimitAtData {
		return nil
	}
	l.lock()
	defer l.mu.Unlock()
	// The transaction's own recipients are open until now: they pass from
	// open to sent in this one step, never counted twice.
	if l.used(user)+n > l.Recipients {
		l.refused++
		return l.reply()
	}
	l.open[user] -= n
	now := l.now()
	for range n {
		l.sent[user] = append(l.sent[user], now)
	}
	return nil
}

// count records that n open recipients of user were delivered: they pass
// from open to sent in one step, before the client hears of it, so that no
// other connection ever sees them counted twice (the session gives up its
// open recipients only after the reply is written). After DATA,
// takeAtData counted them already.
func (l *SendLimit) count(user string, n int) {
	if l == nil || user == "" || l.Stage == LimitAtData {
		return
	}
	l.lock()
	defer l.mu.Unlock()
	l.open[user] -= n
	now := l.now()
	for range n {
		l.sent[user] = append(l.sent[user], now)
	}
}

// Used returns how many recipients user has sent to in the window.
func (l *SendLimit) Used(user string) int {
	l.lock()
	defer l.mu.Unlock()
	return l.used(user)
}

// Refused returns how many refusals the limit has given.
func (l *SendLimit) Refused() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

// SetSendLimit installs a sending limit (nil removes it). Sessions already
// open see it from their next command.
func (s *Server) SetSendLimit(l *SendLimit) {
	s.mu.Lock()
	s.sendLimit = l
	s.mu.Unlock()
}

func (s *Server) currentSendLimit() *SendLimit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sendLimit
}
