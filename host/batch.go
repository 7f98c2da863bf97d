package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// HandleBatch handles messages read together, in their order, in one
// transaction: one commit, and so one fsync, for all of them (a group
// commit). Each message is applied in a savepoint of its own and sees
// what the ones before it did; a message that fails is rolled back alone,
// and the others keep their work. The result has one error per message:
// nil means its outcome is committed and it may be flagged \Seen. When the
// commit itself fails, every message of the group gets that error and
// nothing of it was kept, in the store or in memory; the messages after
// it are not attempted, so that none overtakes one that will be retried.
//
// A group that has taken groupWindow commits, and the rest of the
// messages go on in a new one: the first message's answer waits for its
// group's commit, and a long group would make it wait too long.
//
// The mail of a group's messages is laid out beside the group's next
// messages and joins the outbox before the commit (see layout.go). When
// a message's mail cannot be laid out, nothing of the group is kept and
// the group is done again with each message's mail laid out in its own
// savepoint: the message fails alone, as it would have.
func (h *Host) HandleBatch(ctx context.Context, ms []Mail) []error {
	errs := make([]error, len(ms))
	h.mu.Lock()
	defer h.mu.Unlock()
	// One message alone has nothing to lay its mail out beside.
	layBeside := len(ms) > 1
	for start := 0; start < len(ms); {
		began := time.Now()
		next := start
		err := h.inGroup(ctx, func(g *group) error {
			if layBeside {
				g.beside = &beside{pool: h.layout}
				defer g.beside.wait()
			}
			for next < len(ms) {
				i := next
				next++
				errs[i] = h.handleOne(ctx, g, ms[i])
				var b *brokenTx
				if errors.As(errs[i], &b) {
					// The transaction itself is gone: nothing of the
					// group can be committed.
					return b
				}
				if time.Since(began) >= groupWindow {
					break
				}
			}
			if g.beside == nil {
				return nil
			}
			return g.beside.enqueue(ctx, g.tx)
		})
		if errors.Is(err, errLaidOut) {
			// Nothing of the group was kept. Done again with each
			// message's mail laid out in its own savepoint, the message
			// whose mail cannot be is recorded as an error alone.
			h.log.Warn("a group is done again message by message: a message's mail could not be laid out", "err", err)
			layBeside = false
			continue
		}
		if err != nil {
			for i := start; i < len(ms); i++ {
				errs[i] = err
			}
			break
		}
		start = next
	}
	return errs
}

// groupWindow is how long a group of messages may take before it
// commits: a few milliseconds of fsync in it are then a small part, and
// the first message's answer waits little. Tests change it to choose
// how a group is cut.
var groupWindow = 25 * time.Millisecond

// group is one transaction of the host's, which holds one message or
// deadline, or a group of messages read together. The games that one of
// its parts changed are live as soon as that part is done, so that the
// next part sees them; the group remembers what they were before, to put
// it back if the transaction does not commit.
type group struct {
	tx *store.Tx
	// before holds each game as it was before the group changed it (nil
	// for one the group created).
	before map[string]*game
	// undo puts back the rate limit's buckets as they were.
	undo inbound.Charge
	// undone records which keys undo holds already: their first state
	// is the one to put back.
	undone map[string]bool
	// beside, when set, lays out the group's mail beside its next
	// messages (see layout.go).
	beside *beside
}

// brokenTx is an error after which the group's transaction cannot go on:
// a savepoint that could not be rolled back or released.
type brokenTx struct{ err error }

func (b *brokenTx) Error() string { return "the transaction cannot go on: " + b.err.Error() }
func (b *brokenTx) Unwrap() error { return b.err }

// inGroup runs fn in one store transaction and commits it. On any error
// the games and the rate limit are put back as they were before.
func (h *Host) inGroup(ctx context.Context, fn func(g *group) error) error {
	g := &group{before: map[string]*game{}, undone: map[string]bool{}}
	err := h.st.Update(ctx, func(tx *store.Tx) error {
		g.tx, h.tx = tx, tx
		defer func() { h.tx = nil }()
		return fn(g)
	})
	if err != nil {
		g.restore(h)
		return err
	}
	h.publishBarrier()
	select {
	case h.wake <- struct{}{}:
	default:
	}
	return nil
}

// attempt runs fn in a savepoint of the group's transaction, at game
// time now, and composes and enqueues the mail of what it did (flush).
// When fn or the flush fails, or panics, the savepoint is rolled back and
// the live games stay as they were; otherwise the games it changed become
// live.
func (h *Host) attempt(ctx context.Context, g *group, cause string, now time.Time, fn func(w *work) error) error {
	sp, err := g.tx.Savepoint(ctx)
	if err != nil {
		return &brokenTx{err}
	}
	w := &work{h: h, tx: g.tx, now: now, cause: cause, games: map[string]*game{}, evs: map[string][]engine.Event{}, beside: g.beside}
	err = func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = &failure{fmt.Errorf("panic: %v", p)}
			}
		}()
		if err := fn(w); err != nil {
			return err
		}
		return w.flush(ctx)
	}()
	if err != nil {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return &brokenTx{errors.Join(err, rerr)}
		}
		return err
	}
	if err := sp.Release(ctx); err != nil {
		return &brokenTx{err}
	}
	for id, c := range w.games {
		if _, ok := g.before[id]; !ok {
			g.before[id] = h.games[id]
		}
		h.setGame(id, c)
	}
	return nil
}

// keep applies a message's draw on the rate limit, remembering what it
// replaced.
func (g *group) keep(h *Host, c inbound.Charge) {
	for _, d := range h.proc.Undo(c).Draws {
		if !g.undone[d.Key] {
			g.undone[d.Key] = true
			g.undo.Draws = append(g.undo.Draws, d)
		}
	}
	h.proc.Keep(c)
}

// restore puts the games and the rate limit back as they were before
// the group.
func (g *group) restore(h *Host) {
	for id, was := range g.before {
		h.setGame(id, was)
	}
	h.proc.Keep(g.undo)
}
