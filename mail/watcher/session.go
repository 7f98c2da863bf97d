package watcher

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// logoutTimeout bounds the polite goodbye when Run's context ends.
const logoutTimeout = 5 * time.Second

// session is one connection, from dial to logout.
type session struct {
	w *Watcher
	c *imapclient.Client
	// wake receives a value when the server reports new mail. The
	// client's reader goroutine sends to it and must never block, nor
	// call the client (go-imap issue 668): the channel is buffered and
	// the send never waits.
	wake    chan struct{}
	canIdle bool
	// unseen is what one look at the header told of each unseen message
	// (see look); a message leaves it once it is handled. queue holds the
	// same messages in UID order, asideN counts those set aside, and
	// senders names the senders that pending.sender numbers (see add).
	unseen    map[imap.UID]*pending
	queue     []*pending
	asideN    int
	senders   []string
	senderIDs map[string]int
	// lastUID is the highest UID a search has found; searched is when the
	// latest search began.
	lastUID  imap.UID
	searched time.Time
	// turn is the fair queue through a backlog (see turns); reset once
	// the backlog is gone.
	turn fairQueue
	// busy is the group the handler is working on, nil if none; ready
	// the messages fetched meanwhile, its next group; ahead what they were
	// picked with (ahead.go). ready is empty while busy is nil.
	busy  *busy
	ready []Fetched
	ahead *ahead
}

// guard runs fn, and calls abort if ctx ends or d passes before fn returns,
// which makes fn return. It reports whether d passed.
func guard(ctx context.Context, d time.Duration, abort func(), fn func() error) (err error, timedOut bool) {
	var fired atomic.Bool
	t := time.AfterFunc(d, func() {
		fired.Store(true)
		abort()
	})
	stop := context.AfterFunc(ctx, abort)
	err = fn()
	t.Stop()
	stop()
	return err, fired.Load()
}

// do runs one exchange with the server, bounded by d: a server that does
// not answer in time has its connection closed, so that a dead connection
// is noticed rather than waited on for ever.
func (s *session) do(ctx context.Context, d time.Duration, what string, fn func() error) error {
	err, timedOut := guard(ctx, d, func() { s.c.Close() }, fn)
	switch {
	case timedOut:
		return fmt.Errorf("%s: no answer within %v", what, d)
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

func (s *session) cmd(ctx context.Context, what string, fn func() error) error {
	return s.do(ctx, s.w.cfg.CommandTimeout, what, fn)
}

// runSession connects, logs in and watches until an error or until ctx
// ends. ready is called once the first scan is complete: the connection
// works, and the reconnection backoff can start afresh.
func (w *Watcher) runSession(ctx context.Context, ready func()) error {
	s := &session{w: w, wake: make(chan struct{}, 1)}
	opts := &imapclient.Options{
		TLSConfig: w.tls,
		UnilateralDataHandler: &imapclient.UnilateralDataHandler{
			Mailbox: func(d *imapclient.UnilateralDataMailbox) {
				if d.NumMessages != nil {
					s.signal()
				}
			},
		},
	}
	c, err := w.dial(ctx, opts)
	if err != nil {
		return err
	}
	s.c = c
	defer c.Close()

	if err := s.login(ctx); err != nil {
		return err
	}
	if err := s.open(ctx); err != nil {
		return err
	}
	w.update(func(st *Stats) {
		st.Connected = true
		st.Connects++
	})
	w.log.Info("logged in", "uidvalidity", w.uidValidity, "idle", s.canIdle, "move_to", w.cfg.MoveTo)

	first := true
	for {
		s.drain()
		if err := s.scan(ctx); err != nil {
			return err
		}
		if first {
			ready()
			first = false
		}
		w.caughtUp()
		if s.canIdle {
			err = s.idle(ctx)
		} else {
			err = s.poll(ctx)
		}
		w.update(func(st *Stats) { st.CaughtUp = false })
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			s.logout()
			return ctx.Err()
		}
	}
}
