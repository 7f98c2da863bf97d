package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// HandleMessage processes one message read from a mailbox: it records it
// (a message seen before, by UID or by Message-ID, is left alone), decides
// what it means, applies its commands, and commits all that together. When
// it returns nil the message's outcome is durable and it may be flagged
// \Seen; on error nothing of it was kept.
func (h *Host) HandleMessage(ctx context.Context, mailbox string, uidValidity, uid uint32, raw []byte) error {
	return h.handleMessage(ctx, mailbox, uidValidity, uid, raw, len(raw))
}

// HandleOversized is HandleMessage for a message of size bytes, more than
// the size limit, of which the reader fetched only the header: that is
// enough to refuse it and tell its sender, and the header is what is
// recorded of it.
func (h *Host) HandleOversized(ctx context.Context, mailbox string, uidValidity, uid uint32, header []byte, size int) error {
	return h.handleMessage(ctx, mailbox, uidValidity, uid, header, size)
}

func (h *Host) handleMessage(ctx context.Context, mailbox string, uidValidity, uid uint32, raw []byte, size int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clock.real()
	report := h.proc.Inspect(raw, size)
	// The rate limit draws on a sender's allowance once per new message,
	// and the allowance is saved with the message's outcome: a message seen
	// before costs nothing, and a restart gives no one a fresh allowance.
	var charge inbound.Charge
	limited := false
	record := func(w *work) (store.Inbound, bool, error) {
		in, dup, err := w.tx.RecordInbound(ctx, store.Inbound{Mailbox: mailbox, UIDValidity: uidValidity, UID: uid,
			MessageID: report.MessageID, Raw: raw, ReceivedAt: now})
		if err != nil {
			return in, false, fmt.Errorf("record inbound: %w", err)
		}
		if dup != store.NotDuplicate {
			h.log.Info("message already processed", "mailbox", mailbox, "uid", uid, "message_id", report.MessageID)
			return in, false, nil
		}
		if !limited {
			charge, limited = h.proc.Limit(&report, now), true
			h.proc.Log(report)
		}
		if err := h.saveCharge(ctx, w.tx, charge, now); err != nil {
			return in, false, err
		}
		return in, true, nil
	}
	err := h.transact(ctx, "", func(w *work) error {
		in, isNew, err := record(w)
		if err != nil || !isNew {
			return err
		}
		w.cause, w.inboxID = fmt.Sprintf("inbox:%d", in.ID), in.ID
		if breakForTest != nil {
			breakForTest(report)
		}
		outcome, reason, err := h.handle(ctx, w, report)
		if err != nil {
			return err
		}
		return w.tx.SetInboundOutcome(ctx, in.ID, outcome, reason, report.Route.Game)
	})
	if err == nil {
		h.proc.Keep(charge)
	}
	var f *failure
	if !errors.As(err, &f) {
		return err
	}
	// A message that fails the same way on every try would be retried
	// forever, or bring the host down each time it starts: it is recorded
	// with the outcome "error" instead, and left for the referee.
	h.log.Error("message recorded as an error", "message_id", report.MessageID, "game", report.Route.Game, "err", f.err)
	err = h.transact(ctx, "", func(w *work) error {
		in, isNew, err := record(w)
		if err != nil || !isNew {
			return err
		}
		return w.tx.SetInboundOutcome(ctx, in.ID, store.OutcomeError, f.Error(), report.Route.Game)
	})
	if err == nil {
		h.proc.Keep(charge)
	}
	return err
}

// saveCharge keeps a message's draw on the rate limit in its transaction,
// and forgets the buckets that have filled up since they were last drawn
// on: they decide as an unknown sender's would.
func (h *Host) saveCharge(ctx context.Context, tx *store.Tx, c inbound.Charge, now time.Time) error {
	if c.Key == "" {
		return nil
	}
	if err := tx.SaveRateBucket(ctx, store.RateBucket{Key: c.Key, Tokens: c.Bucket.Tokens,
		Last: c.Bucket.Last, Refused: c.Bucket.Refused}); err != nil {
		return err
	}
	_, err := tx.ForgetRateBuckets(ctx, now.Add(-h.proc.RateFillTime()))
	return err
}

// restoreRateLimit gives the rate limit back what it had drawn before the
// host last stopped.
func (h *Host) restoreRateLimit(ctx context.Context) error {
	fill := h.proc.RateFillTime()
	if fill == 0 {
		return nil
	}
	bs, err := h.st.RateBuckets(ctx, h.clock.real().Add(-fill))
	if err != nil {
		return fmt.Errorf("host: restore rate limit: %w", err)
	}
	for _, b := range bs {
		h.proc.Keep(inbound.Charge{Key: b.Key, Bucket: inbound.Bucket{Tokens: b.Tokens, Last: b.Last, Refused: b.Refused}})
	}
	return nil
}

// breakForTest, when set by a test, runs before a message is handled: a
// panic in it stands for a bug met on a message's content.
var breakForTest func(inbound.Report)

// cause identifies an inbound message stably for the Message-IDs of what
// answers it: its own Message-ID, or the inbox row without one.
func (w *work) messageCause(r inbound.Report) string {
	if r.MessageID != "" {
		return r.MessageID
	}
	return w.cause
}

// handle applies one report inside a transaction and says what became of it.
func (h *Host) handle(ctx context.Context, w *work, r inbound.Report) (store.Outcome, string, error) {
	switch r.Verdict.Kind {
	case inbound.Ignored:
		if r.Verdict.Bounce && r.Verdict.BouncedAddress != "" {
			n, err := w.tx.RecordBounce(ctx, r.Verdict.BouncedAddress, r.Verdict.Explanation, w.now)
			if err != nil {
				return "", "", err
			}
			h.log.Warn("bounce", "address", r.Verdict.BouncedAddress, "count", n)
		}
		return store.OutcomeIgnored, r.Verdict.Reason, nil
	case inbound.Refused:
		if r.Verdict.Notify != "" {
			n := compose.Notice{To: r.Verdict.Notify, Reason: r.Verdict.Reason, Explanation: r.Verdict.Explanation,
				Cause: w.messageCause(r), Subject: r.Subject, Received: w.now, Now: w.now}
			if g := w.game(r.Route.Game); g != nil {
				n.State, n.Dir = g.state, g.dir()
			}
			m, err := h.mail.NotAccepted(n)
			if err != nil {
				return "", "", &failure{err}
			}
			w.out = append(w.out, m)
		}
		return store.OutcomeRefused, r.Verdict.Reason, nil
	}
	reply := &compose.Reply{Cause: w.messageCause(r), Subject: r.Subject, Received: w.now, Now: w.now}
	for _, le := range r.Errors {
		reply.Lines = append(reply.Lines, compose.Line{Text: le.Text, Err: errors.New(le.Message)})
	}
	var err error
	switch r.Route.Kind {
	case inbound.RouteHost:
		err = h.hostCommands(ctx, w, r, reply)
	case inbound.RouteSignup:
		err = h.signup(ctx, w, r, reply)
	default:
		err = h.channel(ctx, w, r, reply)
	}
	if err != nil {
		return "", "", err
	}
	if len(reply.Lines) == 0 {
		// No reply: the sender's private copies (a held post's notice) go
		// out as mail of their own.
		w.sender = nil
	} else {
		if reply.State != nil {
			reply.Dir = w.games[reply.State.Game].dir()
		}
		w.reply = reply
	}
	return store.OutcomeApplied, "", nil
}

// hostCommands handles mail to the bare host address: HELP and NEW GAME.
func (h *Host) hostCommands(ctx context.Context, w *work, r inbound.Report, reply *compose.Reply) error {
	reply.Sender = engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}
	if done, err := h.misdirected(w, r); done || err != nil {
		return err
	}
	if noCommand(r) {
		reply.Lines = append(reply.Lines, compose.Line{Text: firstLine(r.Discussion),
			Err: errors.New("this is the host's own address: it understands HELP, and NEW GAME name from a referee")})
	}
	for _, c := range r.Commands {
		switch c.Verb {
		case command.NewGame:
			reply.Lines = append(reply.Lines, h.newGame(ctx, w, r, c, reply))
		default:
			reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw})
		}
	}
	return nil
}

func (h *Host) isReferee(addr string) bool {
	for _, a := range h.opts.Referees {
		if strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(addr)) {
			return true
		}
	}
	return false
}

// newGame creates a game for a configured referee.
func (h *Host) newGame(ctx context.Context, w *work, r inbound.Report, c command.Command, reply *compose.Reply) compose.Line {
	line := compose.Line{Text: c.Raw}
	fail := func(format string, args ...any) compose.Line {
		line.Err = fmt.Errorf(format, args...)
		return line
	}
	if !h.isReferee(r.Sender.Address) {
		return fail("only a referee named in the host's configuration may create games")
	}
	id := strings.ToLower(c.Name)
	if !engine.ValidGameID(id) {
		return fail("a game name is 2 to 20 lowercase letters and digits, not %q", c.Name)
	}
	if _, exists := h.games[id]; exists || w.games[id] != nil {
		return fail("a game called %s exists already", id)
	}
	st, evs, err := engine.NewGame(id, r.Sender.Address, h.opts.Setup, w.now)
	if err != nil {
		return fail("%v", err)
	}
	if err := w.tx.CreateGame(ctx, id, "signup", w.now); err != nil {
		return fail("cannot create %s: %v", id, err)
	}
	ref, err := w.tx.AddParticipant(ctx, id, "Referee", r.Sender.Address, store.KindReferee, w.now)
	if err != nil {
		return fail("cannot create %s: %v", id, err)
	}
	w.games[id] = &game{state: st, referee: ref, observers: map[string]string{}}
	w.order = append(w.order, id)
	w.record(id, evs)
	line.Events = evs
	reply.State, reply.Sender = st, engine.Referee
	w.sender = &reply.Sender
	return line
}

// signup handles JOIN at a game's sign-up address.
func (h *Host) signup(ctx context.Context, w *work, r inbound.Report, reply *compose.Reply) error {
	reply.Sender = engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}
	reply.Channel = engine.Signup
	g := w.game(r.Route.Game)
	if g == nil {
		reply.Lines = append(reply.Lines, compose.Line{Text: "(whole message)",
			Err: fmt.Errorf("there is no game called %s", r.Route.Game)})
		return nil
	}
	reply.State = g.state
	w.sender = &reply.Sender
	if noCommand(r) {
		reply.Lines = append(reply.Lines, compose.Line{Text: firstLine(r.Discussion),
			Err: errors.New("this is the sign-up address of game " + r.Route.Game + ": write JOIN and the name you want to play as")})
	}
	for _, c := range r.Commands {
		if c.Verb != command.Join {
			reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: errors.New("at a sign-up address only JOIN Name works")})
			continue
		}
		cmd := engine.Command{Verb: engine.CmdJoin, Channel: engine.Signup, Name: c.Name,
			By: engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}}
		l, err := h.addSeat(ctx, w, r.Route.Game, g, cmd, c.Raw, r.Sender.Address, store.KindPlayer)
		if err != nil {
			return err
		}
		reply.Lines = append(reply.Lines, l)
	}
	if !noCommand(r) && strings.TrimSpace(r.Discussion) != "" {
		// A greeting written with the JOIN is not lost without a word.
		reply.Lines = append(reply.Lines, compose.Line{Text: firstLine(r.Discussion),
			Err: errors.New("not posted: the sign-up address reads only JOIN; once the game starts, write to the town thread")})
	}
	return nil
}

// addSeat runs a command that gives someone a seat and a token (JOIN, ADD,
// REPLACE): the engine must accept it before the participant row and its
// token exist, so a refused sign-up leaves nothing behind.
func (h *Host) addSeat(ctx context.Context, w *work, id string, g *game, cmd engine.Command, raw, addr, kind string) (compose.Line, error) {
	line := compose.Line{Text: raw}
	susp, err := w.tx.ActiveSuspensions(ctx, addr)
	if err != nil {
		return line, err
	}
	if len(susp) > 0 {
		cmd.Suspension = susp[0].Reason
	}
	env := h.env(w)
	if _, err := engine.Apply(g.state.Clone(), cmd, env); err != nil {
		line.Err = err
		if len(susp) > 0 && cmd.Verb == engine.CmdJoin {
			// The suspension is served by keeping them out of this game (C3).
			if err := w.tx.ConsumeSuspension(ctx, susp[0].ID, id, w.now); err != nil {
				return line, err
			}
		}
		return line, nil
	}
	name := cmd.Name
	if cmd.Verb == engine.CmdReplace {
		name = cmd.Target
	}
	p, err := w.tx.AddParticipant(ctx, id, name, addr, kind, w.now)
	if err != nil {
		return line, err
	}
	cmd.Token = p.Token
	evs, err := engine.Apply(g.state, cmd, env)
	w.record(id, evs)
	line.Events = evs
	if err != nil {
		return line, fmt.Errorf("engine accepted %s on trial and refused it for real: %w", cmd.Verb, err)
	}
	return line, nil
}

// channel handles mail to a participant's thread, private or mafia address.
func (h *Host) channel(ctx context.Context, w *work, r inbound.Report, reply *compose.Reply) error {
	id := r.Route.Game
	g := w.game(id)
	if g == nil {
		return fmt.Errorf("accepted mail for unknown game %s", id)
	}
	p, err := w.tx.ActiveParticipantByToken(ctx, id, r.Route.Token)
	if err != nil {
		return fmt.Errorf("participant of %s: %w", id, err)
	}
	actor := engine.Referee
	switch p.Kind {
	case store.KindReferee:
	case store.KindObserver:
		actor = engine.Actor{Kind: engine.ByObserver, Address: p.Address}
	default:
		actor = engine.Actor{Kind: engine.ByOutsider, Address: p.Address}
		for _, pl := range g.state.Players {
			if pl.Token == p.Token {
				actor = engine.PlayerActor(pl.Slot)
			}
		}
	}
	ch := map[inbound.RouteKind]engine.Channel{inbound.RouteThread: engine.Thread,
		inbound.RoutePrivate: engine.Private, inbound.RouteMafia: engine.MafiaCh}[r.Route.Kind]
	reply.State, reply.Sender, reply.Channel = g.state, actor, ch
	w.sender = &reply.Sender
	env := h.env(w)
	announced := false
	for _, c := range r.Commands {
		cmd := engine.Command{Verb: engine.Verb(c.Verb), By: actor, Channel: ch, Target: c.Target, Voter: c.Voter,
			Name: c.Name, Address: c.Address, Text: c.Text, Duration: c.Duration, Held: c.Held, Suspend: c.Suspend}
		switch c.Verb {
		case command.Deadline:
			t, err := g.state.ParseGameTime(c.Text)
			if err != nil {
				reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: err})
				continue
			}
			cmd.Time = t
		case command.Announce:
			announced = true
		case command.Add, command.Replace:
			if actor.Kind == engine.ByReferee {
				l, err := h.addSeat(ctx, w, id, g, cmd, c.Raw, c.Address, store.KindPlayer)
				if err != nil {
					return err
				}
				reply.Lines = append(reply.Lines, l)
				continue
			}
		}
		evs, err := engine.Apply(g.state, cmd, env)
		w.record(id, evs)
		if err == nil && c.Verb == command.Admit {
			op, aerr := w.tx.AddParticipant(ctx, id, "Observer", c.Address, store.KindObserver, w.now)
			if aerr != nil {
				return aerr
			}
			g.observers[op.Address] = op.Token
		}
		reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: err, Events: evs})
	}
	// What is not a command is discussion: relayed in the thread and the
	// mafia list, forwarded to the referee from a private channel.
	if text := strings.TrimSpace(r.Discussion); text != "" && !announced {
		evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdPost, By: actor, Channel: ch, Text: text}, env)
		w.record(id, evs)
		switch {
		case err != nil:
			reply.Lines = append(reply.Lines, compose.Line{Text: "(the rest of your message)", Err: err, Events: evs})
		case len(reply.Lines) > 0 && held(evs):
			// A held post's notice comes with the reply to the commands;
			// a relayed post speaks for itself in the thread.
			reply.Lines = append(reply.Lines, compose.Line{Text: "(the rest of your message)", Events: evs})
		}
	}
	return nil
}

func held(evs []engine.Event) bool {
	for _, e := range evs {
		if e.Type == engine.EvPostHeld {
			return true
		}
	}
	return false
}

func (h *Host) env(w *work) engine.Env { return engine.Env{Now: w.now, Rand: h.opts.Rand} }

// noCommand reports a message that holds no command at all: at the host's
// own address and at a sign-up address that is a mistake worth an answer
// (a vote sent to the wrong address), never something to drop in silence.
func noCommand(r inbound.Report) bool {
	return len(r.Commands) == 0 && len(r.Errors) == 0
}

// firstLine is the start of a message's text, to name it in a reply.
func firstLine(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "…"
	}
	if line == "" {
		return "(an empty message)"
	}
	return line
}
