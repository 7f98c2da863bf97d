package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// steppedSpeed is how much faster than the host's real time the game time
// of a stepped demo runs: a game second is 20 µs of it. A stepped clock's
// "real time" is a stand-in that stands still with game time (see
// steppedClock); 1e9/steppedSpeed is whole, so that every whole game
// second maps to a whole nanosecond and back exactly.
const steppedSpeed = 50000

// steppedClock is the game time of a demo that moves it itself: it stands
// still while the bots act, one after another, and the conductor moves it
// on when they are done. No deadline can then come while a bot is still
// to act, however slow the machine, and the game is the same on any.
//
// The host reads it as a Clock whose real time is a stand-in, anchor plus
// the game time gone by at steppedSpeed, which the stepped clock makes
// stand still too. The stand-in starts a minute before the demo does and
// moves 1.7 s a game day, so it stays behind the real clock for a month of
// game time, far longer than a demo game lasts: the mail the host queues,
// due at its "now", is due at once for the sender, which keeps real time.
// The sending budget's windows are real time, so a stepped demo has no
// budget (see runDemo).
type steppedClock struct {
	anchor time.Time // the stand-in real time at the start
	start  time.Time // the game time at the start
	sec    atomic.Int64
}

func newSteppedClock(start time.Time) *steppedClock {
	return &steppedClock{anchor: time.Now().Add(-time.Minute), start: start}
}

// host is the clock the host reads.
func (c *steppedClock) host() host.Clock {
	return host.Clock{Anchor: c.anchor, Start: c.start, Speed: steppedSpeed, Real: c.real}
}

func (c *steppedClock) real() time.Time {
	return c.anchor.Add(time.Duration(c.sec.Load()) * (time.Second / steppedSpeed))
}

// now is the game time.
func (c *steppedClock) now() time.Time { return c.start.Add(time.Duration(c.sec.Load()) * time.Second) }

// moveTo moves game time on to t, or the whole second after it; never back.
func (c *steppedClock) moveTo(t time.Time) {
	d := t.Sub(c.start)
	n := int64(d / time.Second)
	if d%time.Second != 0 {
		n++
	}
	if n > c.sec.Load() {
		c.sec.Store(n)
	}
}

// demoStep is how much game time passes after each bot's message in a
// stepped demo, so that a day's votes come over some hours, as people's
// do, and a thread in digests gathers them into several: 25 players' votes
// take about four hours of a 36-hour day, a night's few actions well
// under its six-hour mark. A step never reaches a round's close, a
// night's end or a reminder (see conductor.step).
const demoStep = 10 * time.Minute

// conductor runs a demo game: it gives each bot its turn, one after
// another in the order they signed up, and waits until the host has
// applied each bot's message before the next one reads the table. With a
// stepped clock it then moves game time on to the next deadline itself;
// with a running one (--speed) it waits for the clock to bring it.
type conductor struct {
	svc      *service.Service
	clock    *steppedClock // nil when game time runs by itself
	box      *imapclient.Client
	validity uint32 // UIDVALIDITY of box
	ref      *bot
	refChan  string
	bots     []*bot
	failed   <-chan error // the host's end, if it ends early
	progress io.Writer
	// delivered counts the messages delivered so far.
	delivered func() int

	rounds int
	shown  string
	dead   map[int]bool
}

func (c *conductor) table() (*engine.State, bool) { return c.svc.Host().Game("demo") }

// check reports the host's end, if it has ended.
func (c *conductor) check() error {
	select {
	case err := <-c.failed:
		return fmt.Errorf("the host stopped: %w", err)
	default:
		return nil
	}
}

// pause waits a little, or reports why it cannot.
func (c *conductor) pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case err := <-c.failed:
		return fmt.Errorf("the host stopped: %w", err)
	case <-time.After(d):
		return nil
	}
}

// send sends a bot's message and waits until the host has applied it.
func (c *conductor) send(ctx context.Context, b *bot, to, body string) error {
	id, err := b.send(to, body)
	if err != nil {
		return fmt.Errorf("%s: %w", b.name, err)
	}
	return c.applied(ctx, b, id)
}

// applied waits until the host has handled the message with Message-ID id:
// its record in the store's inbox, which the transaction that applies it
// writes, is committed. The host holds its lock from before that
// transaction to after it has the game's new state in memory, so the table
// read after this shows what the message did.
func (c *conductor) applied(ctx context.Context, b *bot, id string) error {
	var uid imap.UID
	for uid == 0 {
		data, err := c.box.UIDSearch(&imap.SearchCriteria{Header: []imap.SearchCriteriaHeaderField{{Key: "Message-Id", Value: id}}}, nil).Wait()
		if err != nil {
			return fmt.Errorf("find %s's message %s in the host's mailbox: %w", b.name, id, err)
		}
		if uids := data.AllUIDs(); len(uids) > 0 {
			uid = uids[0]
			break
		}
		if err := c.pause(ctx, 2*time.Millisecond); err != nil {
			return fmt.Errorf("%s's message %s did not reach the host's mailbox: %w", b.name, id, err)
		}
	}
	for {
		m, err := c.svc.Store().InboundByUID(ctx, "INBOX", c.validity, uint32(uid))
		switch {
		case err == nil && m.Outcome == store.OutcomeError:
			return fmt.Errorf("the host failed on %s's message %s: %s", b.name, id, m.Reason)
		case err == nil:
			return nil
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if err := c.pause(ctx, 2*time.Millisecond); err != nil {
			return fmt.Errorf("the host did not handle %s's message %s: %w", b.name, id, err)
		}
	}
}

// roundID tells one round from another: a new round, a runoff, the
// extension of a tie, a night.
func roundID(s *engine.State) string {
	return fmt.Sprintf("%s %d %s %v %v %d %d", s.Phase, s.Day, s.Round, s.Extra, s.TieExtended,
		s.RoundStart.UnixNano(), s.Night.Start.UnixNano())
}

// play plays the game from its start to its end, and returns how it ended.
func (c *conductor) play(ctx context.Context) (*engine.State, error) {
	c.dead = map[int]bool{}
	played := map[string]bool{}
	for {
		if err := c.check(); err != nil {
			return nil, err
		}
		s, ok := c.table()
		if !ok {
			return nil, errors.New("the host has no game demo")
		}
		if err := c.show(ctx, s); err != nil {
			return nil, err
		}
		if s.Phase == engine.EndedPhase {
			return s, nil
		}
		id := roundID(s)
		if !played[id] {
			played[id] = true
			c.rounds++
			if err := c.playRound(ctx, s, id); err != nil {
				return nil, err
			}
			continue
		}
		if err := c.next(ctx, s, id); err != nil {
			return nil, err
		}
	}
}

// playRound gives every living bot its turn in the round s shows, in the
// order they signed up, after the referee's on a day. The turn names the
// round by its place in the game (the bots' choices depend on it, never
// on a time).
func (c *conductor) playRound(ctx context.Context, s *engine.State, id string) error {
	turn := fmt.Sprintf("%d %s %d %s %v %v", c.rounds, s.Phase, s.Day, s.Round, s.Extra, s.TieExtended)
	if _, weekends := s.WeekendZone(); weekends && s.Phase == engine.DayPhase && !s.InWeekend(s.Clock) && !s.WeekendClose {
		// The referee keeps the game moving as a referee would: the
		// round may close on a weekend once everyone has voted (D7).
		if err := c.send(ctx, c.ref, c.refChan, "WEEKEND CLOSE"); err != nil {
			return err
		}
	}
	for _, b := range c.bots {
		if err := b.readMail(); err != nil {
			return err
		}
		s, _ := c.table()
		if roundID(s) != id {
			// The bots before this one closed the round early (D5).
			return nil
		}
		to, body := b.move(s, turn)
		if to == "" {
			continue
		}
		if err := c.send(ctx, b, to, body); err != nil {
			return err
		}
		if err := c.step(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// step lets demoStep of game time pass after a bot's message, on a
// stepped clock, unless that would reach the round's next deadline that
// depends on who has acted (a close, a night's end, a reminder): the
// round's bots are not all done. What it makes due (a digest) is applied
// before the next bot's turn.
func (c *conductor) step(ctx context.Context, id string) error {
	if c.clock == nil {
		return nil
	}
	s, _ := c.table()
	if roundID(s) != id {
		return nil
	}
	next := c.clock.now().Add(demoStep)
	if t, ok := engine.NextOrderedDeadline(s); ok && !next.Before(t) {
		return nil
	}
	c.clock.moveTo(next)
	if err := c.svc.Host().TickDue(ctx); err != nil {
		return err
	}
	if s, _ := c.table(); roundID(s) != id {
		return fmt.Errorf("game time moved past a deadline of %s while bots were still to act", phaseLine(s))
	}
	return nil
}

// next waits for the clock to end the round s shows once every bot has
// had its turn in it: on a stepped clock it moves game time to the next
// deadline and has the host apply it; on a running one it waits until
// the round has changed.
func (c *conductor) next(ctx context.Context, s *engine.State, id string) error {
	if c.clock == nil {
		for {
			if err := c.pause(ctx, 20*time.Millisecond); err != nil {
				return err
			}
			now, _ := c.table()
			if roundID(now) != id || now.Phase == engine.EndedPhase {
				return nil
			}
		}
	}
	t, ok := engine.NextDeadline(s)
	if !ok {
		return fmt.Errorf("the game waits for nothing (%s)", phaseLine(s))
	}
	c.clock.moveTo(t)
	if err := c.svc.Host().TickDue(ctx); err != nil {
		return err
	}
	if after, _ := c.table(); after.Clock.Equal(s.Clock) && len(after.Players) == len(s.Players) && roundID(after) == id {
		if t2, ok := engine.NextDeadline(after); ok && t2.Equal(t) {
			return fmt.Errorf("the host did not apply the deadline %s (%s)", t.Format(time.RFC3339), phaseLine(s))
		}
	}
	return nil
}

// show prints the game's progress: each new phase, with the mail
// delivered so far, and each death. On a stepped clock the mail of the
// game so far is delivered first, so that the count is the game's and not
// the sender's pace.
func (c *conductor) show(ctx context.Context, s *engine.State) error {
	if s.Phase == engine.SignupPhase {
		return nil
	}
	line := phaseLine(s)
	news := line != c.shown
	for _, p := range s.Players {
		news = news || !p.Alive && !c.dead[p.Slot]
	}
	if !news {
		return nil
	}
	if c.clock != nil {
		if err := c.drained(ctx); err != nil {
			return err
		}
	}
	for _, p := range s.Players {
		if !p.Alive && !c.dead[p.Slot] {
			c.dead[p.Slot] = true
			fmt.Fprintf(c.progress, "    † %s (%s)\n", p.Name, compose.CauseWords(p.Cause))
		}
	}
	if line != c.shown {
		c.shown = line
		fmt.Fprintf(c.progress, "  %s  %-32s %6d messages so far\n", s.Clock.In(s.GameZone()).Format("Mon 2 Jan 15:04 MST"), line, c.delivered())
	}
	return nil
}

// drained waits until the host has no mail left to send: none pending or
// being sent, both read in one snapshot (see store.Waiting).
func (c *conductor) drained(ctx context.Context) error {
	for {
		waiting, err := c.svc.Store().Waiting(ctx)
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			return nil
		}
		if err := c.pause(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("the host's mail did not go out: %w", err)
		}
	}
}

func phaseLine(s *engine.State) string {
	alive := len(s.Living())
	switch s.Phase {
	case engine.DayPhase:
		r := "vote"
		switch {
		case s.Round == engine.Runoff:
			r = "runoff"
		case s.Extra:
			r = "extra round"
		}
		return fmt.Sprintf("Day %d, %s (%d alive)", s.Day, r, alive)
	case engine.NightPhase:
		return fmt.Sprintf("Night %d (%d alive)", s.Day, alive)
	case engine.EndedPhase:
		return "Game over"
	}
	return string(s.Phase)
}
