package watcher

import (
	"context"
	"errors"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
)

func (s *session) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// drain forgets a pending new-mail signal; the scan that follows looks at
// everything anyway.
func (s *session) drain() {
	select {
	case <-s.wake:
	default:
	}
}

// wakeAfter is how long to wait for new mail before looking again: the
// refresh or poll interval, or less when a deferred message is due sooner,
// a deadline is to be passed, or a flood may be over.
func (s *session) wakeAfter(interval time.Duration) time.Duration {
	if next := s.w.nextRetry(); !next.IsZero() {
		if d := time.Until(next); d < interval {
			interval = max(d, time.Millisecond)
		}
	}
	// The watermark passes the next deadline at a search that begins
	// ArrivalSlack and a second after it: a server's notice of new mail
	// may lag, and mail that reached the mailbox before the deadline must
	// be read before it is applied.
	if s.w.cfg.Barrier != nil {
		if b := s.w.cfg.Barrier(); !b.IsZero() && s.watermark().Before(b) {
			if d := time.Until(b.Add(s.barrierWait())); d < interval {
				interval = max(d, time.Millisecond)
			}
		}
	}
	if f := s.w.flood; f.Messages >= s.w.cfg.FloodSize {
		if d := time.Until(f.Last.Add(s.w.cfg.FloodQuiet)); d < interval {
			interval = max(d, time.Millisecond)
		}
	}
	return interval
}

// idle waits in IDLE for new mail, for the refresh interval, for a
// deferred message to become due, or for ctx to end. It leaves IDLE with
// DONE and, after a refresh interval, checks the connection with NOOP.
func (s *session) idle(ctx context.Context) error {
	var cmd *imapclient.IdleCommand
	if err := s.cmd(ctx, "IDLE", func() (err error) {
		cmd, err = s.c.Idle()
		return err
	}); err != nil {
		return err
	}
	s.w.update(func(st *Stats) { st.Idling = true })
	t := time.NewTimer(s.wakeAfter(s.w.cfg.IdleRefresh))
	defer t.Stop()
	refresh := false
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-t.C:
		refresh = true
	case <-s.c.Closed():
		return errors.New("the server closed the connection during IDLE")
	}
	s.w.update(func(st *Stats) { st.Idling = false })
	// DONE is sent even when ctx has ended, so that LOGOUT can follow.
	stopCtx := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		stopCtx, cancel = context.WithTimeout(stopCtx, logoutTimeout)
		defer cancel()
	}
	if err := s.cmd(stopCtx, "DONE", func() error {
		if err := cmd.Close(); err != nil {
			return err
		}
		return cmd.Wait()
	}); err != nil {
		return err
	}
	if refresh && ctx.Err() == nil {
		return s.cmd(ctx, "NOOP", func() error { return s.c.Noop().Wait() })
	}
	return nil
}

// poll waits for the poll interval (or a deferred message) without a
// command in progress.
func (s *session) poll(ctx context.Context) error {
	t := time.NewTimer(s.wakeAfter(s.w.cfg.PollInterval))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-s.wake:
	case <-t.C:
	case <-s.c.Closed():
		return errors.New("the server closed the connection")
	}
	return nil
}
