package host

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang/phrase"
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
	return h.Handle(ctx, Mail{Mailbox: mailbox, UIDValidity: uidValidity, UID: uid, Raw: raw, Size: len(raw)})
}

// HandleOversized is HandleMessage for a message of size bytes, more than
// the size limit, of which the reader fetched only the header: that is
// enough to refuse it and tell its sender, and the header is what is
// recorded of it.
func (h *Host) HandleOversized(ctx context.Context, mailbox string, uidValidity, uid uint32, header []byte, size int) error {
	return h.Handle(ctx, Mail{Mailbox: mailbox, UIDValidity: uidValidity, UID: uid, Raw: header, Size: size})
}

// Handle is HandleMessage for a message as the watcher read it, with its
// arrival: HandleBatch of one message.
func (h *Host) Handle(ctx context.Context, m Mail) error {
	return h.HandleBatch(ctx, []Mail{m})[0]
}

// handleOne handles one message of a group in the group's transaction:
// it records it (a message seen before, by UID or by Message-ID, is left
// alone), decides what it means, and applies its commands, all in a
// savepoint of its own. A message that fails the same way on every try is
// recorded with the outcome "error" instead.
func (h *Host) handleOne(ctx context.Context, g *group, m Mail) error {
	mailbox, uidValidity, uid, raw, size := m.Mailbox, m.UIDValidity, m.UID, m.Raw, m.Size
	if size < len(raw) {
		size = len(raw)
	}
	now := h.clock.real()
	report := h.proc.Inspect(raw, size)
	at := h.commandTime(report.Route.Game, m.Arrived)
	// The rate limit draws on a sender's allowance once per new message,
	// and the allowance is saved with the message's outcome: a message seen
	// before costs nothing, and a restart gives no one a fresh allowance.
	// A Message-ID marks a duplicate only on the same channel, from the
	// same sender, with the same body: the key it is recorded under
	// also names the message in the Message-IDs of its answers.
	scope := report.Route.Address + " " + report.Sender.Address
	key := hex.EncodeToString(store.MessageIDHash(report.MessageID, scope, raw))
	var charge inbound.Charge
	limited := false
	record := func(w *work) (store.Inbound, bool, error) {
		in, dup, err := w.tx.RecordInbound(ctx, store.Inbound{Mailbox: mailbox, UIDValidity: uidValidity, UID: uid,
			MessageID: report.MessageID, Scope: scope, Raw: raw, ReceivedAt: now})
		if err != nil {
			return in, false, fmt.Errorf("record inbound: %w", err)
		}
		if dup != store.NotDuplicate {
			h.log.Info("message already processed", "mailbox", mailbox, "uid", uid, "message_id", report.MessageID)
			return in, false, nil
		}
		if !limited {
			charge, limited = h.proc.Limit(&report, now), true
			if !m.Quiet {
				h.proc.Log(report)
			}
		}
		if err := h.saveCharge(ctx, w.tx, charge, now); err != nil {
			return in, false, err
		}
		return in, true, nil
	}
	err := h.attempt(ctx, g, "", at, func(w *work) error {
		in, isNew, err := record(w)
		if err != nil || !isNew {
			return err
		}
		w.cause, w.inboxID, w.inboundKey = fmt.Sprintf("inbox:%d", in.ID), in.ID, key
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
		g.keep(h, charge)
	}
	var f *failure
	if !errors.As(err, &f) {
		return err
	}
	// A message that fails the same way on every try would be retried
	// forever, or bring the host down each time it starts: it is recorded
	// with the outcome "error" instead, and left for the referee.
	h.log.Error("message recorded as an error", "message_id", report.MessageID, "game", report.Route.Game, "err", f.err)
	err = h.attempt(ctx, g, "", at, func(w *work) error {
		in, isNew, err := record(w)
		if err != nil || !isNew {
			return err
		}
		return w.tx.SetInboundOutcome(ctx, in.ID, store.OutcomeError, f.Error(), report.Route.Game)
	})
	if err == nil {
		g.keep(h, charge)
	}
	return err
}

// saveCharge keeps a message's draw on the rate limit in its transaction,
// and forgets the buckets that have filled up since they were last drawn
// on: they decide as an unknown sender's would.
func (h *Host) saveCharge(ctx context.Context, tx *store.Tx, c inbound.Charge, now time.Time) error {
	if len(c.Draws) == 0 {
		return nil
	}
	for _, d := range c.Draws {
		if err := tx.SaveRateBucket(ctx, store.RateBucket{Key: d.Key, Tokens: d.Bucket.Tokens,
			Last: d.Bucket.Last, Refused: d.Bucket.Refused}); err != nil {
			return err
		}
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
		h.proc.Keep(inbound.Charge{Draws: []inbound.Draw{{Key: b.Key, Bucket: inbound.Bucket{Tokens: b.Tokens, Last: b.Last, Refused: b.Refused}}}})
	}
	return nil
}

// breakForTest, when set by a test, runs before a message is handled: a
// panic in it stands for a bug met on a message's content.
var breakForTest func(inbound.Report)

// messageCause identifies an inbound message stably for the Message-IDs
// of what answers it: the key it was recorded under, which two different
// messages under one Message-ID do not share.
func (w *work) messageCause(inbound.Report) string {
	return w.inboundKey
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
				Why: r.Verdict.Why, Cause: w.messageCause(r), Subject: r.Subject, Received: w.now, Now: w.now}
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
	reply := &compose.Answer{Cause: w.messageCause(r), Subject: r.Subject, Received: w.now, Now: w.now}
	var near []command.LineError
	for _, le := range r.Errors {
		if le.Near != nil && r.Route.Kind.Participant() {
			// Answered once the commands are applied (nearmiss.go).
			near = append(near, le)
			continue
		}
		var err error = errors.New(le.Message)
		if le.Phrase != nil {
			err = le.Phrase
		}
		line := compose.Line{Text: le.Text, Err: err}
		if le.Send != "" {
			line.Instead = []compose.Instead{{Line: le.Send}}
		}
		reply.Lines = append(reply.Lines, line)
	}
	errorLines := len(reply.Lines)
	var err error
	switch r.Route.Kind {
	case inbound.RouteHost:
		err = h.hostCommands(ctx, w, r, reply)
	case inbound.RouteSignup:
		err = h.signup(ctx, w, r, reply)
	case inbound.RouteConfirm:
		err = h.confirm(ctx, w, r, reply)
	default:
		err = h.channel(ctx, w, r, reply)
		if err == nil {
			h.answerNearMisses(w, r, reply, near, errorLines)
		}
	}
	if err != nil {
		return "", "", err
	}
	if r.Unproven && !h.isReferee(r.Sender.Address) {
		// A configured referee's address is the operator's own: its
		// answers (the referee channel of a new game) go out in full.
		quieten(r, reply)
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
	return store.OutcomeApplied, misplacedReason(r), nil
}

// hostCommands handles mail to the bare host address: HELP and NEW GAME.
func (h *Host) hostCommands(ctx context.Context, w *work, r inbound.Report, reply *compose.Answer) error {
	reply.Sender = engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}
	if done, err := h.misdirected(w, r); done || err != nil {
		return err
	}
	// The host's own address names no game: a sender who plays in exactly
	// one is answered with that game's addresses.
	who := seat{kind: engine.ByOutsider}
	mine := h.gamesOf(r.Sender.Address)
	if len(mine) == 1 {
		who = h.seatByAddress(w, mine[0], r.Sender.Address)
	}
	if noCommand(r) && len(r.Misplaced) == 0 {
		var msg *phrase.Error
		switch {
		case who.token != "" && who.kind == engine.ByReferee:
			msg = phrase.Errorf("this is the host's own address, which belongs to no game: it understands HELP, and NEW GAME name from a referee. "+
				"To write in game %s, use your referee channel %s", who.game, h.mail.PrivateAddress(who.game, who.token))
		case who.token != "":
			msg = phrase.Errorf("this is the host's own address, which belongs to no game: it understands HELP, and NEW GAME name from a referee. "+
				"To write in game %s, reply to its mails: the town thread is %s, your private channel %s",
				who.game, h.mail.ThreadAddress(who.game, who.token), h.mail.PrivateAddress(who.game, who.token))
		case len(mine) > 1:
			msg = phrase.Errorf("this is the host's own address, which belongs to no game: it understands HELP, and NEW GAME name from a referee. "+
				"You take part in games %s: reply to a mail of the game you mean", strings.Join(mine, ", "))
		default:
			msg = phrase.Errorf("this is the host's own address, which belongs to no game: it understands HELP, and NEW GAME name from a referee. " +
				"To play, ask a game's referee for its sign-up address")
		}
		reply.Lines = append(reply.Lines, discussionLine(r.Discussion, msg))
	}
	for _, c := range r.Commands {
		switch c.Verb {
		case command.NewGame:
			reply.Lines = append(reply.Lines, h.newGame(ctx, w, r, c, reply))
		default:
			reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw})
		}
	}
	h.answerMisplaced(r, reply, who)
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
func (h *Host) newGame(ctx context.Context, w *work, r inbound.Report, c command.Command, reply *compose.Answer) compose.Line {
	line := compose.Line{Text: c.Raw}
	fail := func(why error) compose.Line {
		line.Err = why
		return line
	}
	if !h.isReferee(r.Sender.Address) {
		return fail(phrase.Errorf("only a referee named in the host's configuration may create games"))
	}
	id := strings.ToLower(c.Name)
	if !engine.ValidGameID(id) {
		return fail(phrase.Errorf("a game name is 2 to 20 lowercase letters and digits, not %q", c.Name))
	}
	if _, exists := h.games[id]; exists || w.games[id] != nil {
		return fail(phrase.Errorf("a game called %s exists already", id))
	}
	if r.Unproven {
		if reply.Confirm != "" {
			return fail(phrase.Errorf("only one request is held for confirmation at a time: confirm the first, then send this one again"))
		}
		held, err := h.holdForConfirmation(ctx, w, store.Confirmation{Game: id, Address: r.Sender.Address,
			Verb: store.ConfirmNewGame, Name: id}, line, reply)
		if err != nil {
			return fail(phrase.Errorf("cannot hold %s for confirmation: %v", id, err))
		}
		return held
	}
	st, evs, err := engine.NewGame(id, r.Sender.Address, h.opts.Setup, w.now)
	if err != nil {
		return fail(err) // the engine's refusal of the setup
	}
	if err := w.tx.CreateGame(ctx, id, "signup", w.now); err != nil {
		return fail(phrase.Errorf("cannot create %s: %v", id, err))
	}
	ref, err := w.tx.AddParticipant(ctx, id, "Referee", r.Sender.Address, store.KindReferee, w.now)
	if err != nil {
		return fail(phrase.Errorf("cannot create %s: %v", id, err))
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
func (h *Host) signup(ctx context.Context, w *work, r inbound.Report, reply *compose.Answer) error {
	reply.Sender = engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}
	g := w.game(r.Route.Game)
	if g == nil {
		// No game of that name: the host cannot know which one was meant.
		reply.Lines = append(reply.Lines, labelLine(phrase.Errorf("(whole message)"),
			phrase.Errorf("%s is the sign-up address of no game: there is no game called %s. "+
				"Ask the referee of your game for its sign-up address", h.mail.SignupAddress(r.Route.Game), r.Route.Game)))
		return nil
	}
	reply.Channel = engine.Signup
	reply.State = g.state
	w.sender = &reply.Sender
	who := h.seatByAddress(w, r.Route.Game, r.Sender.Address)
	if noCommand(r) && len(r.Misplaced) == 0 {
		var msg *phrase.Error
		switch {
		case who.kind == engine.ByPlayer:
			msg = phrase.Errorf("this is the sign-up address of game %s, and you play in it already: the town thread is %s, your private channel %s",
				r.Route.Game, h.mail.ThreadAddress(who.game, who.token), h.mail.PrivateAddress(who.game, who.token))
		case who.kind == engine.ByReferee:
			msg = phrase.Errorf("this is the sign-up address of game %s, which you referee: your referee channel is %s",
				r.Route.Game, h.mail.PrivateAddress(who.game, who.token))
		case g.state.Phase == engine.SignupPhase:
			msg = phrase.Errorf("this is the sign-up address of game %s: write JOIN and the name you want to play as", r.Route.Game)
		default:
			msg = phrase.Errorf("this is the sign-up address of game %s, whose sign-ups are closed: ask its referee about the next game", r.Route.Game)
		}
		reply.Lines = append(reply.Lines, discussionLine(r.Discussion, msg))
	}
	h.answerMisplaced(r, reply, who)
	for _, c := range r.Commands {
		if c.Verb == command.Help {
			evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdHelp, Channel: engine.Signup, By: reply.Sender, Text: c.Text}, h.env(w, g.state.Game))
			w.record(r.Route.Game, evs)
			reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: err, Events: evs})
			continue
		}
		if c.Verb != command.Join {
			reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: phrase.Errorf("at a sign-up address only JOIN Name works")})
			continue
		}
		cmd := engine.Command{Verb: engine.CmdJoin, Channel: engine.Signup, Name: c.Name,
			By: engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}}
		if r.Unproven {
			l, err := h.holdJoin(ctx, w, r, g, cmd, c.Raw, reply)
			if err != nil {
				return err
			}
			reply.Lines = append(reply.Lines, l)
			continue
		}
		l, err := h.addSeat(ctx, w, r.Route.Game, g, cmd, c.Raw, r.Sender.Address, store.KindPlayer)
		if err != nil {
			return err
		}
		reply.Lines = append(reply.Lines, l)
	}
	if !noCommand(r) && strings.TrimSpace(r.Discussion) != "" {
		// A greeting written with the JOIN is not lost without a word.
		reply.Lines = append(reply.Lines, discussionLine(r.Discussion,
			phrase.Errorf("not posted: the sign-up address reads only JOIN; once the game starts, write to the town thread")))
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
	env := h.env(w, g.state.Game)
	if _, err := engine.Apply(g.state.Clone(), cmd, env); err != nil {
		line.Err = err
		if len(susp) > 0 && cmd.Verb == engine.CmdJoin {
			// The suspension is served by keeping them out of this game
			// (C3) — only if the JOIN would have seated them otherwise: a
			// JOIN to a game already running, or under a taken name, keeps
			// no one out of anything.
			free := cmd
			free.Suspension = ""
			if _, ferr := engine.Apply(g.state.Clone(), free, env); ferr == nil {
				if err := w.tx.ConsumeSuspension(ctx, susp[0].ID, id, w.now); err != nil {
					return line, err
				}
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
func (h *Host) channel(ctx context.Context, w *work, r inbound.Report, reply *compose.Answer) error {
	id := r.Route.Game
	g := w.game(id)
	if g == nil {
		return fmt.Errorf("accepted mail for unknown game %s", id)
	}
	// The sender is the participant the message's reading found by the
	// address's token, in this transaction.
	p, token := r.Sender.Participant, r.Route.Token
	if p == nil {
		return fmt.Errorf("accepted mail to %s's channel %s with no participant", id, r.Route.Kind)
	}
	actor := engine.Referee
	switch {
	case p.Referee:
	case p.Observer:
		actor = engine.Actor{Kind: engine.ByObserver, Address: p.Address}
	default:
		actor = engine.Actor{Kind: engine.ByOutsider, Address: p.Address}
		for _, pl := range g.state.Players {
			if pl.Token == token {
				actor = engine.PlayerActor(pl.Slot)
			}
		}
	}
	ch := map[inbound.RouteKind]engine.Channel{inbound.RouteThread: engine.Thread,
		inbound.RoutePrivate: engine.Private, inbound.RouteMafia: engine.MafiaCh}[r.Route.Kind]
	reply.State, reply.Sender, reply.Channel = g.state, actor, ch
	w.sender = &reply.Sender
	env := h.env(w, g.state.Game)
	who := seat{game: id, kind: actor.Kind, token: token, ended: g.state.Phase == engine.EndedPhase}
	if actor.Kind == engine.ByOutsider {
		who.token = "" // a replaced player's old seat: no addresses to offer
	}
	announced := false
	for _, c := range r.Commands {
		if c.Verb == command.Announce {
			announced = true
		}
	}
	text := strings.TrimSpace(r.Discussion)
	if r.Inline != nil && (ch == engine.Thread || ch == engine.MafiaCh) {
		rec, err := h.answered(ctx, w, r, id, ch)
		if err != nil {
			return err
		}
		var errs []command.LineError
		text, errs = r.InlineDiscussion(rec)
		text = strings.TrimSpace(text)
		for _, le := range errs {
			reply.Lines = append(reply.Lines, compose.Line{Text: le.Text, Err: le.Phrase})
		}
	}
	postFirst := text != "" && !announced && h.closesRound(g.state, r.Commands, actor, ch, env)
	if postFirst {
		// The message's own discussion is relayed before the close or the
		// end mail that its commands cause, as the last word of the round
		// or the game: the discussion that argued for a result comes
		// before it, in the digest before the close too.
		h.discuss(w, g, id, actor, ch, text, reply, env)
	}
	for _, c := range r.Commands {
		cmd, err := h.engineCommand(c, actor, ch)
		if err != nil {
			return fmt.Errorf("%w in a game channel of %s", err, id)
		}
		// DEADLINE's time goes as written: the engine reads it, in the
		// game's zone (D8).
		switch c.Verb {
		case command.Add, command.Replace:
			if actor.Kind == engine.ByReferee {
				l, err := h.addSeat(ctx, w, id, g, cmd, c.Raw, c.Address, store.KindPlayer)
				if err != nil {
					return err
				}
				l.Instead = instead(c, l.Err)
				reply.Lines = append(reply.Lines, l)
				continue
			}
		}
		evs, err := engine.Apply(g.state, cmd, env)
		w.record(id, evs)
		for _, e := range evs {
			if e.Type == engine.EvPlayerRenamed {
				if err := w.tx.SetParticipantName(ctx, id, token, e.Name); err != nil {
					return err
				}
			}
		}
		if err == nil && c.Verb == command.Admit {
			op, aerr := w.tx.AddParticipant(ctx, id, "Observer", c.Address, store.KindObserver, w.now)
			if aerr != nil {
				return aerr
			}
			g.observers[op.Address] = op.Token
		}
		in := instead(c, err)
		if in == nil {
			in = nameWithWords(g.state, c, err)
		}
		reply.Lines = append(reply.Lines, compose.Line{Text: c.Raw, Err: err, Events: evs, Instead: in})
	}
	h.answerMisplaced(r, reply, who)
	// What is not a command is discussion: relayed in the thread and the
	// mafia list, forwarded to the referee from a private channel.
	if text != "" && !announced && !postFirst {
		h.discuss(w, g, id, actor, ch, text, reply, env)
	}
	return nil
}

// instead are the lines to send in place of a command refused for naming
// a dead player whose name starts a living one's (D1): the same line with
// each living name the sender may have meant.
func instead(c command.Command, err error) []compose.Instead {
	var r *engine.Refusal
	if !errors.As(err, &r) || r.Reason != engine.Dead || c.Target == "" {
		return nil
	}
	var out []compose.Instead
	for _, name := range r.Candidates {
		out = append(out, compose.Instead{Meant: name, Line: c.WithTarget(name)})
	}
	return out
}

// engineCommand is a command line as the engine takes it.
func (h *Host) engineCommand(c command.Command, actor engine.Actor, ch engine.Channel) (engine.Command, error) {
	verb, ok := c.Verb.Engine()
	if !ok {
		return engine.Command{}, fmt.Errorf("%s is no command of the engine's", c.Verb)
	}
	return engine.Command{Verb: verb, By: actor, Channel: ch, Target: c.Target, Voter: c.Voter,
		Name: c.Name, Address: c.Address, Text: c.Text, Duration: c.Duration, Held: c.Held, Suspend: c.Suspend}, nil
}

// closesRound reports whether a message's commands would close the round
// or end the game, tried on a copy of it: then its discussion goes first.
func (h *Host) closesRound(s *engine.State, cmds []command.Command, actor engine.Actor, ch engine.Channel, env engine.Env) bool {
	if s.Phase == engine.EndedPhase || len(cmds) == 0 {
		return false
	}
	trial := s.Clone()
	for _, c := range cmds {
		switch c.Verb {
		case command.Add, command.Replace, command.Admit, command.Deadline, command.Start, command.Setup:
			// Seats, observers, setups and deadlines end no game, and
			// START must draw the roles once, from the real draw.
			continue
		}
		cmd, err := h.engineCommand(c, actor, ch)
		if err != nil {
			continue
		}
		evs, _ := engine.Apply(trial, cmd, env)
		for _, e := range evs {
			if e.Type == engine.EvRoundClosed || e.Type == engine.EvGameEnded {
				return true
			}
		}
	}
	return false
}

// discuss posts a message's discussion in its channel.
func (h *Host) discuss(w *work, g *game, id string, actor engine.Actor, ch engine.Channel, text string, reply *compose.Answer, env engine.Env) {
	if len(text) > h.opts.MaxPostBytes {
		// Every reader gets a copy of a post, in text and HTML: one long
		// post would make hundreds of megabytes of mail.
		reply.Lines = append(reply.Lines, labelLine(restOfMessage(), phrase.Errorf(
			"your post is %s long without the quoted text and signature, more than the %s a post may have; "+
				"it was not relayed: shorten it, or split it into several posts", kib(len(text)), kib(h.opts.MaxPostBytes))))
		return
	}
	evs, err := engine.Apply(g.state, engine.Command{Verb: engine.CmdPost, By: actor, Channel: ch, Text: text}, env)
	w.record(id, evs)
	switch {
	case err != nil:
		line := labelLine(restOfMessage(), err)
		line.Events = evs
		reply.Lines = append(reply.Lines, line)
	case len(reply.Lines) > 0 && held(evs):
		// A held post's notice comes with the reply to the commands;
		// a relayed post speaks for itself in the thread.
		line := labelLine(restOfMessage(), nil)
		line.Events = evs
		reply.Lines = append(reply.Lines, line)
	}
}

// kib is a size in words: "33 KiB".
func kib(n int) *phrase.Error { return phrase.Errorf("%d KiB", (n+1023)/1024) }

func held(evs []engine.Event) bool {
	for _, e := range evs {
		if e.Type == engine.EvPostHeld {
			return true
		}
	}
	return false
}

// env is what the engine is given for a command to game.
func (h *Host) env(w *work, game string) engine.Env {
	return engine.Env{Now: w.now, Rand: h.drawSource(game)}
}

// noCommand reports a message that holds no command at all: at the host's
// own address and at a sign-up address that is a mistake worth an answer
// (a vote sent to the wrong address), never something to drop in silence.
func noCommand(r inbound.Report) bool {
	return len(r.Commands) == 0 && len(r.Errors) == 0
}

// discussionLine is the line of a reply that answers a message's text,
// named by its start, with why it was not taken.
func discussionLine(text string, why error) compose.Line {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "…"
	}
	if line == "" {
		return labelLine(phrase.Errorf("(an empty message)"), why)
	}
	return compose.Line{Text: line, Err: why}
}

// labelLine is a line of a reply that stands for no line as written,
// named by the host ("(the rest of your message)").
func labelLine(label *phrase.Error, why error) compose.Line {
	return compose.Line{Text: label.Error(), Label: label, Err: why}
}

// restOfMessage names the discussion of a message in its reply.
func restOfMessage() *phrase.Error { return phrase.Errorf("(the rest of your message)") }
