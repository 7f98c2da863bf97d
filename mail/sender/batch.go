package sender

import (
	"context"
	"strings"
	"sync"

	"github.com/mafiamail/mafiamail/internal/backoff"
)

// pool holds the connections of one drain, one slot per worker. Slot i is
// touched only by worker i while a batch runs, and by the drain between
// batches.
type pool struct {
	conns []*conn
	// refused marks the slots whose connection the server would not open
	// while others were open (a limit of connections per client): they
	// stay unused for the rest of the drain.
	refused []bool
}

func newPool(n int) *pool {
	return &pool{conns: make([]*conn, n), refused: make([]bool, n)}
}

// quit ends every open connection politely, all at once, so that a server
// that does not answer QUIT costs one quitTimeout, not one per connection.
func (p *pool) quit() {
	var wg sync.WaitGroup
	for i, c := range p.conns {
		if c == nil {
			continue
		}
		p.conns[i] = nil
		wg.Go(c.quit)
	}
	wg.Wait()
}

// batch hands the claimed messages to the workers.
type batch struct {
	mu   sync.Mutex
	cond *sync.Cond // signalled when queue, dialing or stopping changes
	// queue holds the messages no worker has taken yet.
	queue []Message
	// open counts the running workers that hold a connection; dialing
	// those that are opening one, with a message in hand; idle those
	// that hold one and wait for work.
	open, dialing, idle int
	// stopping is set when a connection could not be opened while no
	// other was open: the server is gone, and err says why.
	stopping bool
	err      error
	// halted is set when the provider refuses mail for its limit: the
	// messages not taken wait for the hold to end.
	halted bool
	// busy counts, by recipient, the messages taken and not yet done
	// with, and inFlight all of them; stalled marks the recipients of a
	// message that was not handed over. A recipient's mail goes in the
	// order it was claimed, one message at a time: a later message
	// neither travels beside an earlier one on another connection nor
	// overtakes one that must wait for a retry (docs/design.md
	// "Guarantees").
	busy     map[string]int
	inFlight int
	stalled  map[string]bool
	// more is set when the batch takes more mail from the outbox as it
	// goes (see refill): a worker that takes the last queued message
	// asks Run's goroutine, through it, to claim the next, which it then
	// does while the messages in flight are still being handed over.
	// Workers out of work wait for the answer rather than end, until
	// dry is set: the outbox had nothing more, or the batch may take no
	// more. claimed counts the messages the batch has been given.
	more    chan struct{}
	dry     bool
	claimed int
}

// refillCap bounds what a batch takes in refills, in batches of
// Config.BatchSize: between batches the sender writes the results the
// outbox could not take and weighs its hold and budget again.
const refillCap = 10

// refilling reports whether a worker out of work should wait for more
// mail rather than end. Called with mu held.
func (b *batch) refilling() bool {
	return b.more != nil && !b.dry && !b.stopping && len(b.stalled) == 0
}

// askMore asks for the next claim, once. Called with mu held.
func (b *batch) askMore() {
	select {
	case b.more <- struct{}{}:
	default:
	}
}

// add queues msgs claimed for the batch; none means the outbox had no
// more.
func (b *batch) add(msgs []Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.queue = append(b.queue, msgs...)
	b.claimed += len(msgs)
	if len(msgs) == 0 {
		b.dry = true
	}
	b.cond.Broadcast()
}

// stopRefills makes the batch end once its queue is done.
func (b *batch) stopRefills() {
	b.mu.Lock()
	b.dry = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

// recipientKeys names the recipients of m, for busy and stalled.
func recipientKeys(m Message) []string {
	keys := make([]string, len(m.To))
	for i, a := range m.To {
		keys[i] = strings.ToLower(strings.TrimSpace(a))
	}
	return keys
}

// next removes and returns the first queued message that may go now: no
// recipient of it has an earlier message in flight, stalled, or still
// queued. Called with mu held.
func (b *batch) next() (Message, bool) {
	behind := map[string]bool{}
	for i, m := range b.queue {
		keys := recipientKeys(m)
		free := true
		for _, k := range keys {
			if b.busy[k] > 0 || b.stalled[k] || behind[k] {
				free = false
			}
		}
		if !free {
			for _, k := range keys {
				behind[k] = true
			}
			continue
		}
		b.queue = append(b.queue[:i:i], b.queue[i+1:]...)
		if b.busy == nil {
			b.busy = map[string]int{}
		}
		for _, k := range keys {
			b.busy[k]++
		}
		b.inFlight++
		return m, true
	}
	return Message{}, false
}

// finished records that a worker is done with m: handed over (sent), or
// not, and then the rest of its recipients' mail waits for the next claim,
// where the outbox keeps it behind m.
func (b *batch) finished(m Message, sent bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.release(m)
	if !sent {
		if b.stalled == nil {
			b.stalled = map[string]bool{}
		}
		for _, k := range recipientKeys(m) {
			b.stalled[k] = true
		}
	}
	b.cond.Broadcast()
}

// release ends m's time in flight. Called with mu held.
func (b *batch) release(m Message) {
	for _, k := range recipientKeys(m) {
		if b.busy[k]--; b.busy[k] <= 0 {
			delete(b.busy, k)
		}
	}
	b.inFlight--
}

// halt stops the batch for a hold.
func (b *batch) halt() {
	b.mu.Lock()
	b.halted, b.stopping = true, true
	b.cond.Broadcast()
	b.mu.Unlock()
}

// take returns the next message for a worker, or false when the worker is
// done. While the batch may claim more (refilling), every worker waits
// for it. Otherwise a worker with a connection waits while others are
// dialing, since a dial that fails gives its message back, and a worker
// without one has no use once the queue is empty. A worker without a
// connection that gets a message counts as dialing until it calls dialed
// or dialFailed.
func (b *batch) take(ctx context.Context, hasConn bool) (Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		if b.stopping || ctx.Err() != nil {
			break
		}
		if hasConn || b.mayDial() {
			if m, ok := b.next(); ok {
				if !hasConn {
					b.dialing++
				}
				if len(b.queue) == 0 && b.refilling() {
					b.askMore()
				} else if len(b.queue) > 1 && b.more != nil {
					// Mail beyond what this worker takes: the workers
					// without a connection may open theirs (mayDial).
					b.cond.Broadcast()
				}
				return m, true
			}
		}
		// Nothing may go now; any worker waits while more mail may come;
		// one with a connection also while a dial may give a message
		// back, or while messages in flight may free the mail queued
		// behind them.
		refilling := b.refilling()
		if !refilling && (!hasConn || (b.dialing == 0 && (b.inFlight == 0 || len(b.queue) == 0))) {
			break
		}
		if refilling && (hasConn || len(b.queue) == 0) {
			// Nothing queued may go now: more may.
			b.askMore()
		}
		if hasConn {
			b.idle++
		}
		b.cond.Wait()
		if hasConn {
			b.idle--
		}
	}
	if hasConn {
		b.open--
	}
	return Message{}, false
}

// mayDial reports whether a worker without a connection may take a
// message and open one for it. In a batch that claims more as it goes,
// every slot has a worker from the start; one without a connection
// leaves the mail to the connections open while one of them waits for
// work or is about to, and opens another only for mail queued beyond
// what they take: a trickle of mail keeps to one connection. Called with
// mu held.
func (b *batch) mayDial() bool {
	return b.more == nil || b.open == 0 || (b.idle == 0 && len(b.queue) > 1)
}

// dialed records that a worker has opened its connection.
func (b *batch) dialed() {
	b.mu.Lock()
	b.dialing--
	b.open++
	b.cond.Broadcast()
	b.mu.Unlock()
}

// dialFailed gives m back and reports whether the failure stops the
// batch: it does when no other worker holds a connection, for then the
// server is unreachable; otherwise the server only limits connections,
// and the others go on without this one.
func (b *batch) dialFailed(m Message, err error) (fatal bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dialing--
	b.release(m)
	b.queue = append([]Message{m}, b.queue...)
	if b.open == 0 {
		b.stopping = true
		if b.err == nil {
			b.err = err
		}
	}
	b.cond.Broadcast()
	return b.stopping
}

// broke records that a worker's connection is gone.
func (b *batch) broke() {
	b.mu.Lock()
	b.open--
	b.mu.Unlock()
}

// sendBatch sends msgs over the pool's usable slots, opening connections
// as messages need them, and records every result. With refill, the batch
// claims more mail as its queue runs out, so that the connections do not
// wait for the slowest of them and for the outbox between batches (see
// refill). It returns an error when the server cannot be reached, after
// releasing the messages not attempted with the backoff of a failed
// connection, or when ctx ended, after releasing them at once. Results,
// and OnFailed, are done with before it returns; OnFailed runs on the
// caller's goroutine (Run's).
func (s *Sender) sendBatch(ctx context.Context, p *pool, msgs []Message, refill bool) error {
	b := &batch{queue: msgs, claimed: len(msgs)}
	b.cond = sync.NewCond(&b.mu)
	if refill {
		b.more = make(chan struct{}, 1)
	}
	// Slots with a connection first: a batch of one message uses the
	// connection that is open rather than opening another.
	var slots []int
	for i, c := range p.conns {
		if c != nil && !p.refused[i] {
			slots = append(slots, i)
		}
	}
	for i, c := range p.conns {
		if c == nil && !p.refused[i] {
			slots = append(slots, i)
		}
	}
	if len(slots) == 0 {
		// Every slot was refused or broke; the first is tried again.
		p.refused[0] = false
		slots = []int{0}
	}
	if !refill {
		slots = slots[:min(len(slots), len(msgs))]
	}
	for _, i := range slots {
		if p.conns[i] != nil {
			b.open++
		}
	}

	notices := make(chan func())
	notify := func(f func()) { notices <- f }
	var wg sync.WaitGroup
	for _, i := range slots {
		wg.Go(func() { s.work(ctx, b, p, i, notify) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	// A worker that sends a notice waits until it has run here, so once
	// done is closed none is left.
	for running := true; running; {
		select {
		case f := <-notices:
			f()
		case <-b.more:
			s.refill(ctx, b)
		case <-done:
			running = false
		}
	}

	s.recordSent(ctx)
	rest := b.queue
	switch {
	case ctx.Err() != nil:
		s.release(ctx, rest, "not attempted: the sender is stopping", 0)
		return ctx.Err()
	case b.err != nil:
		delay := backoff.Duration(s.failures, s.cfg.MinBackoff, s.cfg.MaxBackoff)
		s.release(ctx, rest, "not attempted: "+b.err.Error(), delay)
		return b.err
	case b.halted:
		s.release(ctx, rest, "not attempted: held for the provider's sending limit", 0)
	case len(rest) > 0:
		// Mail queued behind a message that was not handed over: it is
		// due again at once, and the outbox keeps it behind that message.
		s.release(ctx, rest, "not attempted: earlier mail to the same recipient was not sent", 0)
	}
	return nil
}

// refill claims the next messages for b, on Run's goroutine while the
// workers send. It first records what the batch has sent, so that the
// outbox lets the mail queued behind it go (a message being sent holds
// back later mail to its recipients). A batch takes no more once it
// has met a failure, a hold or an outbox it cannot write to, or has
// taken refillCap batches' worth: it then ends as any batch does.
func (s *Sender) refill(ctx context.Context, b *batch) {
	b.mu.Lock()
	open := b.refilling() && b.claimed < refillCap*s.cfg.BatchSize
	b.mu.Unlock()
	if !open || s.held() || ctx.Err() != nil {
		b.stopRefills()
		return
	}
	s.recordSent(ctx)
	s.recMu.Lock()
	unrecorded := len(s.unrecorded)
	s.recMu.Unlock()
	if unrecorded > 0 {
		b.stopRefills() // written before anything else is sent (flush)
		return
	}
	msgs, err := s.claim(ctx, s.cfg.BatchSize, -1, -1)
	if err != nil {
		// The drain's next claim meets it again and says so.
		s.log.Debug("cannot claim more for the batch", "err", err)
		b.stopRefills()
		return
	}
	b.add(msgs)
}

// work is one worker of a batch: it sends messages over the connection
// of its slot, opening it when it has none, and records each result.
func (s *Sender) work(ctx context.Context, b *batch, p *pool, slot int, notify func(func())) {
	c := p.conns[slot]
	for {
		m, ok := b.take(ctx, c != nil)
		if !ok {
			return
		}
		if c == nil {
			// No connection yet, or it broke on an earlier message: one
			// try. If the server is gone, the rest of the batch waits
			// as long as the next connection will.
			var err error
			if c, err = s.connect(ctx); err != nil {
				s.update(func(st *Stats) { st.ConnectFailures++ })
				if !b.dialFailed(m, err) {
					p.refused[slot] = true
					s.log.Info("cannot open another connection; going on with those open", "err", err)
				}
				return
			}
			s.update(func(st *Stats) { st.Connects++ })
			p.conns[slot] = c
			b.dialed()
		}
		res := c.send(ctx, m)
		s.apply(ctx, m, res, notify)
		b.finished(m, res.sent)
		if s.held() {
			b.halt()
		}
		if res.broken {
			c.close()
			c = nil
			p.conns[slot] = nil
			b.broke()
		}
	}
}
