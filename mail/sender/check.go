package sender

import (
	"context"
	"time"
)

// Check connects, says EHLO, upgrades with STARTTLS where the URL demands
// it and authenticates, as a batch of sending does, then quits without
// sending anything. The error says which step failed. It returns the
// connection's security: tls, starttls or plain (loopback only).
func Check(ctx context.Context, cfg Config) (string, error) {
	s, err := New(cfg, noOutbox{}, nil)
	if err != nil {
		return "", err
	}
	cn, err := s.connect(ctx)
	if err != nil {
		return s.ep.Security.String(), err
	}
	cn.quit()
	return s.ep.Security.String(), nil
}

// noOutbox is the empty outbox of a Check: there is nothing to send.
type noOutbox struct{}

func (noOutbox) ClaimDue(context.Context, time.Time, int) ([]Message, error) {
	return nil, nil
}
func (noOutbox) MarkAllSent(context.Context, []int64, time.Time) error     { return nil }
func (noOutbox) MarkRetry(context.Context, int64, time.Time, string) error { return nil }
func (noOutbox) MarkFailed(context.Context, int64, string) error           { return nil }
func (noOutbox) Release(context.Context, int64, time.Time, string) error   { return nil }
func (noOutbox) NextAttempt(context.Context) (time.Time, bool, error)      { return time.Time{}, false, nil }
func (noOutbox) NextAttemptAfter(context.Context, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}
