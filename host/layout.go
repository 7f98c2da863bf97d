package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// Laying out a message (its templates, its MIME) is most of what a
// command costs, and nothing the host decides next depends on it: a
// step's mail is decided and dated in the step (compose.Drafts), which
// is all the game's next step needs. So within a group of messages
// (HandleBatch) each message's mail is laid out on other cores while the
// host goes on with the next message, and the group's mail joins the
// outbox, in the order it was decided, just before the group commits: in
// the same transaction as ever, so nothing changes for a crash.
//
// A message whose mail cannot be laid out would fail alone if its mail
// were laid out in its own savepoint: the group is then done again that
// way (see HandleBatch).

// outPart is mail of a step, in the order it goes out: laid out
// already (ready), or drafted and yet to be laid out (drafts).
type outPart struct {
	ready  []compose.Outgoing
	drafts *compose.Drafts
	// game names the drafts' game, for errors.
	game string
}

// draft adds drafted mail to the step's mail, after what it has so far.
func (w *work) draft(game string, d compose.Drafts) {
	if d.Len() == 0 {
		return
	}
	w.takeReady()
	w.parts = append(w.parts, outPart{drafts: &d, game: game})
}

// takeReady moves the mail laid out so far into the step's parts.
func (w *work) takeReady() {
	if len(w.out) > 0 {
		w.parts = append(w.parts, outPart{ready: w.out})
		w.out = nil
	}
}

// layOut lays out one part of a step's mail: its drafts, or nothing for
// mail laid out already.
func layOut(p outPart) ([]compose.Outgoing, error) {
	if p.drafts == nil {
		return p.ready, nil
	}
	msgs, err := p.drafts.Finish()
	if err == nil && layOutForTest != nil {
		err = layOutForTest(msgs)
	}
	if err != nil {
		return nil, fmt.Errorf("compose mail of %s: %w", p.game, err)
	}
	return msgs, nil
}

// layOutForTest, when set by a test, sees the mail of each step laid out:
// an error from it stands for mail that cannot be laid out.
var layOutForTest func([]compose.Outgoing) error

// beside lays out a group's mail beside the group's next messages, and
// enqueues it when the group ends.
type beside struct {
	pool  *layoutPool
	steps []*besideStep
}

// besideStep is one step's mail being laid out.
type besideStep struct {
	parts []outPart
	cause string
	// real is when the step ran, by the clock the outbox keeps.
	real time.Time
	done chan struct{}
	msgs [][]compose.Outgoing
	err  error
}

// add starts laying out a step's mail. Mail laid out already (none
// drafted) needs no worker.
func (b *beside) add(parts []outPart, cause string, real time.Time) {
	if len(parts) == 0 {
		return
	}
	st := &besideStep{parts: parts, cause: cause, real: real, done: make(chan struct{})}
	b.steps = append(b.steps, st)
	if !slices.ContainsFunc(parts, func(p outPart) bool { return p.drafts != nil }) {
		st.layOut()
		return
	}
	b.pool.submit(st)
}

// layoutPool is the host's workers that lay out mail, one a core. They
// outlive the groups: laying out runs deep in the templates, and a
// worker's stack, once grown, serves every step after. A worker with
// nothing to do for layoutIdle goes; the next step starts it again.
type layoutPool struct {
	jobs chan *besideStep
	max  int
	// idle is how long a worker with nothing to lay out stays.
	idle time.Duration

	mu      sync.Mutex
	workers int
}

// layoutQueue is how many steps may wait for a worker before the group's
// next message waits for one: enough to keep the workers busy, and few,
// since a step waiting holds its drafts (the game states they show).
const layoutQueue = 8

// layoutIdle is how long a worker with nothing to lay out stays.
const layoutIdle = 5 * time.Second

func newLayoutPool() *layoutPool {
	return &layoutPool{jobs: make(chan *besideStep, layoutQueue), max: runtime.GOMAXPROCS(0), idle: layoutIdle}
}

// submit queues a step, and starts a worker if fewer than one a core
// run. A worker about to go looks at the queue under the lock first, so
// a step queued then is never left without one.
func (p *layoutPool) submit(st *besideStep) {
	p.jobs <- st
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.workers < p.max {
		p.workers++
		go p.work()
	}
}

func (p *layoutPool) work() {
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	for {
		select {
		case st := <-p.jobs:
			st.layOut()
			idle.Reset(p.idle)
		case <-idle.C:
			p.mu.Lock()
			if len(p.jobs) > 0 {
				p.mu.Unlock()
				idle.Reset(p.idle)
				continue
			}
			p.workers--
			p.mu.Unlock()
			return
		}
	}
}

// layOut lays out the step's mail.
func (st *besideStep) layOut() {
	defer close(st.done)
	defer func() {
		if p := recover(); p != nil {
			st.err = fmt.Errorf("panic: %v", p)
		}
	}()
	for _, p := range st.parts {
		msgs, err := layOut(p)
		if err != nil {
			st.err = err
			return
		}
		st.msgs = append(st.msgs, msgs)
	}
	// The drafts are done with: the group keeps only their mail.
	st.parts = nil
}

// wait waits until every step of the group is laid out: nothing a
// group started outlives it, however the group ends.
func (b *beside) wait() {
	for _, st := range b.steps {
		<-st.done
	}
}

// errLaidOut is the error of a group one of whose messages' mail could
// not be laid out: the group is done again, each message's mail laid
// out in its own savepoint.
var errLaidOut = errors.New("a message's mail could not be laid out")

// enqueue waits for the group's mail and enqueues it in order.
func (b *beside) enqueue(ctx context.Context, tx *store.Tx) error {
	for _, st := range b.steps {
		select {
		case <-st.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if st.err != nil {
			return fmt.Errorf("%w: %w", errLaidOut, st.err)
		}
		for _, msgs := range st.msgs {
			if err := enqueue(ctx, tx, msgs, st.cause, st.real); err != nil {
				return err
			}
		}
	}
	return nil
}

// enqueue puts a step's mail in the outbox.
func enqueue(ctx context.Context, tx *store.Tx, msgs []compose.Outgoing, cause string, real time.Time) error {
	for _, m := range msgs {
		om := store.OutMessage{MessageID: m.MessageID, Game: m.Game, Kind: m.Kind, From: m.From, To: m.To,
			Raw: m.Raw, Cause: cause, Priority: priorityOf(m), Town: m.Town,
			Public: m.Public, PublicIn: m.PublicIn}
		if _, err := tx.Enqueue(ctx, om, real); err != nil {
			return fmt.Errorf("enqueue %s: %w", m.MessageID, err)
		}
	}
	return nil
}
