package watcher

import (
	"context"
	"slices"
	"time"

	"github.com/emersion/go-imap/v2"
)

// Working a backlog off one batch after another leaves the handler idle
// while the watcher searches, fetches the next batch and flags the last
// one: three exchanges with the server per batch. So the handler works on
// a group of messages on a goroutine of its own (busy) while the session
// picks and fetches what comes next, turn after turn, until the handler
// is done; then all that was fetched meanwhile (ready) goes to the
// handler as its next group, and the group before is flagged \Seen. The
// handler still takes one group at a time, each message once it has
// returned for every message picked before, and a message is flagged
// only once the handler has returned nil for it. A slow handler thus gets
// larger groups, whose one commit costs less per message, and mail that
// comes during a backlog waits for no more than the group in hand and one
// batch fetched before it came. Short of a backlog, the next group is
// topped up with the mail that came while the handler worked (topUp), so
// that it waits for no more than the group in hand.
//
// A turn picked while the handler works is handed over only if the group
// before it is all handled and the barrier has not moved (see keepAhead):
// otherwise what was picked ahead is dropped, its messages stay unseen and
// are picked again, as they would have been had the pick waited.

// busy is the group the handler is working on.
type busy struct {
	group []Fetched
	errs  []error
	// finished is when the handler returned; errs and finished are
	// written before done is closed.
	finished time.Time
	done     chan struct{}
}

// ahead is what the turns picked while the handler works were picked
// with, to check them once it is done and to undo them if they no longer
// stand.
type ahead struct {
	barrier time.Time
	// turn is the fair queue as it was before the first of them.
	turn fairQueue
}

// start hands group to the handler on a goroutine of its own. The caller
// has finished the group before.
func (s *session) start(ctx context.Context, group []Fetched) {
	b := &busy{group: group, done: make(chan struct{})}
	s.busy = b
	go func() {
		defer func() {
			b.finished = time.Now()
			close(b.done)
		}()
		b.errs = s.w.call(ctx, group)
	}()
}

// handlerDone reports whether the handler has finished its group, or has none.
func (s *session) handlerDone() bool {
	if s.busy == nil {
		return true
	}
	select {
	case <-s.busy.done:
		return true
	default:
		return false
	}
}

// handOver waits for the handler's group, if any, records its outcome,
// hands the ready messages over as the next group (or drops them, see
// ahead) and flags \Seen the messages of the finished group that were
// handled.
func (s *session) handOver(ctx context.Context) error {
	ready := s.ready
	s.ready = nil
	b := s.busy
	s.busy = nil
	var handled []imap.UID
	allHandled := true
	if b != nil {
		<-b.done
		for i, ok := range s.w.settle(ctx, b.group, b.errs) {
			if ok {
				handled = append(handled, imap.UID(b.group[i].UID))
			} else {
				allHandled = false
			}
		}
	}
	if s.keepAhead(allHandled) && len(ready) > 0 && ctx.Err() == nil {
		s.start(ctx, ready)
	}
	if err := s.done(ctx, handled); err != nil {
		return err
	}
	s.forget(handled)
	return nil
}

// settleAll hands over and waits until the handler has nothing left: the
// session is about to wait, or to hand over a message by itself.
func (s *session) settleAll(ctx context.Context) error {
	for s.busy != nil || len(s.ready) > 0 {
		if err := s.handOver(ctx); err != nil {
			return err
		}
	}
	return nil
}

// pickAhead picks the next turn while the handler works, or returns nil
// when the next must wait for it: when mail is set aside, when no mail
// that arrived before the barrier waits, when the barrier moved since the
// turns picked so far, when the turn would make the ready messages more
// than a batch (Config.BatchSize), or when it would not be fetched in one
// go (a message over MaxMessageBytes, sizes not known, more than
// MaxBatchBytes).
func (s *session) pickAhead(now time.Time) []imap.UID {
	if s.asideN > 0 || len(s.ready) >= s.w.cfg.BatchSize {
		return nil
	}
	// What the handler has and what is ready are taken; the rest of the
	// due mail, in UID order like the queue, is free. They are set apart
	// by walking both in UID order: a lookup in a set of the taken for
	// every message of a backlog, at every turn, cost more than the
	// choice among them.
	taken := make([]imap.UID, 0, len(s.busy.group)+len(s.ready))
	var bytes int64
	for _, m := range s.busy.group {
		taken = append(taken, imap.UID(m.UID))
	}
	for _, m := range s.ready {
		taken = append(taken, imap.UID(m.UID))
		bytes += m.Size
	}
	slices.Sort(taken)
	due, _ := s.w.due(s.queue, now)
	free := make([]*pending, 0, len(due))
	for _, p := range due {
		for len(taken) > 0 && taken[0] < p.uid {
			taken = taken[1:]
		}
		if len(taken) > 0 && taken[0] == p.uid {
			continue
		}
		free = append(free, p)
	}
	early, barrier := s.early(free)
	if len(early) == 0 || (s.ahead != nil && !barrier.Equal(s.ahead.barrier)) {
		return nil
	}
	was := s.turn.clone()
	next := s.turns(early)
	if len(s.ready) > 0 && len(s.ready)+len(next) > s.w.cfg.BatchSize {
		s.turn = was
		return nil
	}
	for _, u := range next {
		p := s.unseen[u]
		if p == nil || p.size < 0 || (s.w.cfg.MaxMessageBytes > 0 && p.size > s.w.cfg.MaxMessageBytes) {
			s.turn = was
			return nil
		}
		bytes += p.size
	}
	if bytes > s.w.cfg.MaxBatchBytes {
		s.turn = was
		return nil
	}
	if s.ahead == nil {
		s.ahead = &ahead{barrier: barrier, turn: was}
	}
	return next
}

// topUp waits for the handler and, when the ready messages fall short of
// a batch, looks for mail once more before they are handed over, and
// picks what is due into them. Only a backlog fills a batch while the
// handler works; under a live load the ready messages are what the search
// at the start of the group found, and mail that came during the group
// would otherwise wait for the next group as well as for that one. The
// handler waits for this search and fetch, as it did before it had a
// goroutine of its own. searched reports that the session has looked for
// mail since the handler finished, so that the next group need not begin
// with a search of its own.
func (s *session) topUp(ctx context.Context) (searched bool, err error) {
	<-s.busy.done
	if len(s.ready) >= s.w.cfg.BatchSize {
		return false, nil
	}
	if s.searched.Before(s.busy.finished) {
		if err := s.look(ctx); err != nil {
			return false, err
		}
		s.report()
	}
	for ctx.Err() == nil {
		next := s.pickAhead(time.Now())
		if next == nil {
			break
		}
		if err := s.batch(ctx, next); err != nil {
			return false, err
		}
	}
	return true, nil
}

// keepAhead reports whether the turns picked ahead still stand now that
// the group before them is handled, and undoes their pick if not. They
// stand when every message of that group was handled (a message deferred
// after an error changes what is due, and the pick is made again knowing
// it) and the barrier has not moved (the group may have changed a
// deadline).
func (s *session) keepAhead(allHandled bool) bool {
	a := s.ahead
	if a == nil {
		return true
	}
	s.ahead = nil
	var barrier time.Time
	if s.w.cfg.Barrier != nil {
		barrier = s.w.cfg.Barrier()
	}
	if allHandled && barrier.Equal(a.barrier) {
		return true
	}
	s.turn = a.turn
	return false
}
