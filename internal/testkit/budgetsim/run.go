package budgetsim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/store"
)

// Result is how a simulated game went, with everything the host queued
// and the provider delivered.
type Result struct {
	Config Config
	// Started is when the referee started the game, Ended when it ended
	// (zero if it did not), Drained when the last message was sent.
	Started, Ended, Drained time.Time
	Winner                  engine.Side
	// Day is the game's last day.
	Day int
	// Dead tells who died, of what, with their role and missed votes.
	Dead []string
	// Players are the players' addresses, in seat order.
	Players []string
	// Posted is when each thread post was handed to the host, by its
	// mark; Marks are the marks of the posts each thread message of the
	// outbox brings.
	Posted map[string]time.Time
	Marks  map[int64][]string
	// Plans are the host's plans for the thread against the budget, in
	// the order it set them.
	Plans  []PlanChange
	Outbox []store.OutMessage
	// Class is each queued message's class in the report, by outbox id.
	Class      map[int64]string
	Deliveries []Delivery
	// Refused is how many times the provider refused the host's mail.
	Refused int
	// Written counts the messages the players wrote, by kind; Skipped
	// those they did not know where to send.
	Written, Skipped map[string]int
	// SendErrors counts the passes of the sender that ended in an error.
	SendErrors int
	// Holds counts the times the sender held the outbox for the provider.
	Holds uint64
}

// ErrUnfinished is returned, with a Result, when the game or its mail did
// not end within the configured bounds.
var ErrUnfinished = errors.New("unfinished")

// Run plays one game to its end and until the outbox is empty, moving the
// clock itself. It returns the Result even with ErrUnfinished, so that
// what piled up can be told.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	w, err := start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer w.close()
	res, err := w.play(ctx)
	res.Config = w.cfg
	if res != nil {
		ms, oerr := w.st.OutMessages(ctx, "")
		if oerr != nil {
			return res, errors.Join(err, oerr)
		}
		res.Class, res.Marks = map[int64]string{}, map[int64][]string{}
		for i := range ms {
			c := classify(ms[i])
			res.Class[ms[i].ID] = c
			if ms[i].Kind == "thread" {
				// Posts, digests, and thread news that carries a post
				// composed with it.
				res.Marks[ms[i].ID] = postMarks.FindAllString(mailbox.Parse(ms[i].Raw).Text, -1)
			}
			// The checks need the envelope and the times, not the bytes.
			ms[i].Raw = nil
		}
		res.Outbox = ms
		evs, eerr := w.st.Events(ctx, gameID, 0)
		if eerr != nil {
			return res, errors.Join(err, eerr)
		}
		for _, se := range evs {
			if e, uerr := engine.UnmarshalEvent(se.Payload); uerr == nil && e.Type == engine.EvMailPlan {
				res.Plans = append(res.Plans, PlanChange{At: e.At, Every: e.Duration})
			}
		}
	}
	return res, err
}

// PlanChange is the host's plan for the thread set at At: digests for
// everyone every Every, or (zero) the thread as the players chose.
type PlanChange struct {
	At    time.Time
	Every time.Duration
}

func (w *world) play(ctx context.Context) (*Result, error) {
	cfg := w.cfg
	w.posted = map[string]time.Time{}
	res := &Result{Config: cfg, Written: w.written, Skipped: w.skipped, Posted: w.posted}
	w.referee = &player{name: "Referee", addr: refAddr, rng: rand.New(rand.NewPCG(w.rng.Uint64(), 1))}
	for i := range cfg.Setup.Players {
		p := &player{name: names[i], addr: userOf(names[i]) + "@example.org",
			rng: rand.New(rand.NewPCG(w.rng.Uint64(), w.rng.Uint64())),
			// Some write much more than others.
			chatty: 0.3 + w.rng.ExpFloat64()}
		w.players = append(w.players, p)
		res.Players = append(res.Players, p.addr)
	}
	byAddr := map[string]*player{refAddr: w.referee}
	for _, p := range w.players {
		byAddr[p.addr] = p
	}
	if err := w.send(ctx, w.referee, hostAddr, "New game", "NEW GAME "+gameID); err != nil {
		return res, err
	}
	begun := w.clock.Now()
	limit := begun.Add(time.Duration(cfg.MaxDays) * 24 * time.Hour)
	stage, key := "new", ""
	nextReport := begun.Add(24 * time.Hour)
	for {
		w.clock.Advance(cfg.Step)
		now := w.clock.Now()
		for _, d := range w.takeInbox() {
			for _, to := range d.To {
				if p := byAddr[strings.ToLower(to)]; p != nil {
					p.learn(d)
				}
			}
		}
		if err := w.referee.setUp(ctx, w, &stage); err != nil {
			return res, err
		}
		s, ok := w.table()
		if ok && s.Phase != engine.EndedPhase && stage == "started" {
			if k := roundKey(s); k != key {
				key = k
				switch s.Phase {
				case engine.DayPhase:
					w.planRound(s, now)
				case engine.NightPhase:
					w.planNight(s, now)
				}
			}
			if s.Phase == engine.DayPhase {
				w.planPosts(s, now, cfg.Step)
			}
		}
		if err := w.act(ctx); err != nil {
			return res, err
		}
		if err := w.h.TickDue(ctx); err != nil {
			return res, fmt.Errorf("tick: %w", err)
		}
		if err := w.snd.SendDue(ctx); err != nil {
			res.SendErrors++
			cfg.Log.Warn("a sending pass failed", "err", err)
		}
		if s, ok := w.table(); ok {
			res.Day, res.Winner = s.Day, s.Winner
			if s.Phase == engine.EndedPhase && res.Ended.IsZero() {
				res.Ended = s.Clock
				for _, p := range s.Players {
					if !p.Alive {
						res.Dead = append(res.Dead, fmt.Sprintf("%s (%s, %s, missed %d)", p.Name, p.Role, p.Cause, p.Missed))
					}
				}
			}
		}
		res.Refused, res.Holds = w.limit.Refused(), w.snd.Stats().Holds
		if cfg.Progress != nil && !now.Before(nextReport) {
			nextReport = nextReport.Add(24 * time.Hour)
			byKind, waiting, _ := w.waiting(ctx)
			phase := "not started"
			if s, ok := w.table(); ok {
				phase = fmt.Sprintf("%s of day %d", s.Phase, s.Day)
			}
			cfg.Progress(fmt.Sprintf("%s: %s; %d messages wait %v", now.Format("Mon 2 Jan 15:04"), phase, waiting, byKind))
		}
		res.Deliveries, res.Started = w.snapshot(), w.started
		if !res.Ended.IsZero() {
			byKind, waiting, err := w.waiting(ctx)
			if err != nil {
				return res, err
			}
			if waiting == 0 {
				res.Drained = now
				return res, nil
			}
			if now.After(res.Ended.Add(time.Duration(cfg.MaxDrainDays) * 24 * time.Hour)) {
				return res, fmt.Errorf("%w: %d messages still wait %d days after the game ended, by kind %v", ErrUnfinished, waiting, cfg.MaxDrainDays, byKind)
			}
			// Only the mail is left: look at it less often.
			w.clock.Advance(cfg.DrainStep - cfg.Step)
			continue
		}
		if now.After(limit) {
			byKind, _, _ := w.waiting(ctx)
			phase := "not started"
			if s, ok := w.table(); ok {
				phase = fmt.Sprintf("%s of day %d", s.Phase, s.Day)
			}
			return res, fmt.Errorf("%w: the game did not end in %d days (%s); waiting mail by kind %v", ErrUnfinished, cfg.MaxDays, phase, byKind)
		}
	}
}

// act sends the players' actions that are due, each if the game is still
// in the round it was meant for and the player alive and knowing where to
// write.
func (w *world) act(ctx context.Context) error {
	for _, a := range w.due(w.clock.Now()) {
		s, ok := w.table()
		if !ok || roundKey(s) != a.round || !a.who.alive(s) {
			continue
		}
		to, body := a.write(s)
		if body == "" {
			continue
		}
		if to == "" {
			w.skipped[a.kind]++
			continue
		}
		w.written[a.kind]++
		if err := w.send(ctx, a.who, to, "Re: the game", body); err != nil {
			return fmt.Errorf("%s's %s: %w", a.who.name, a.kind, err)
		}
		if after, ok := w.h.Game(gameID); ok && a.kind == "post" && !a.who.alive(after) {
			// The clock killed its author as the post came (a dawn at
			// that instant): it went to the referee, as the dead's posts
			// do, and is owed to no reader.
			for _, mark := range postMarks.FindAllString(body, 1) {
				delete(w.posted, mark)
			}
		}
	}
	return nil
}

// setUp is the referee opening the game: NEW GAME (sent before the first
// step), then SETUP once its answer came, the players joining over the
// next hours, and START once all have.
func (ref *player) setUp(ctx context.Context, w *world, stage *string) error {
	now := w.clock.Now()
	switch *stage {
	case "new":
		if ref.private == "" {
			return nil
		}
		if err := w.send(ctx, ref, ref.private, "Setup", "SETUP "+w.cfg.Setup.Name); err != nil {
			return err
		}
		for _, p := range w.players {
			w.schedule(between(w.rng, now.Add(5*time.Minute), now.Add(3*time.Hour)), p, "signup", "join",
				func(*engine.State) (string, string) { return "host+" + gameID + "@example.org", "JOIN " + p.name })
		}
		*stage = "joining"
		return nil
	case "joining":
		for _, a := range w.due(now) {
			w.written[a.kind]++
			to, body := a.write(nil)
			if err := w.send(ctx, a.who, to, "Join", body); err != nil {
				return err
			}
		}
		if s, ok := w.table(); ok && len(s.Players) == w.cfg.Setup.Players {
			if err := w.send(ctx, ref, ref.private, "Start", "START"); err != nil {
				return err
			}
			*stage = "started"
			w.started = now
		}
	}
	return nil
}

func (w *world) snapshot() []Delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.deliveries
}

// waiting counts the messages not yet sent, by kind.
func (w *world) waiting(ctx context.Context) (map[string]int, int, error) {
	byKind, err := w.st.Waiting(ctx)
	n := 0
	for _, k := range byKind {
		n += k
	}
	return byKind, n, err
}

func firstLines(body string, n int) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, ">") || strings.HasSuffix(l, "wrote:") || l == "--" {
			continue
		}
		out = append(out, l)
		if len(out) == n {
			break
		}
	}
	return strings.Join(out, "\n")
}
