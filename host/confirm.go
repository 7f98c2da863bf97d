package host

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// Without an authserv-id the host cannot tell who sent mail to its own or
// a sign-up address: anyone may put any address in From. A NEW GAME or a
// JOIN from such mail would give a game or a seat to an address whose owner
// never asked, and seat a forger under a victim's name. So the request is
// held, and the answer (which goes to the address in From, never to the
// forger) carries a one-time address: the request takes effect when a
// reply reaches it, which only that mailbox can send. Mailing lists confirm
// subscriptions the same way.

// confirmFor is how long a held request waits for its reply, on the
// host's clock.
const confirmFor = 48 * time.Hour

// holdForConfirmation keeps a request that unproven mail made, answering
// line with the one-time address to reply to.
func (h *Host) holdForConfirmation(ctx context.Context, w *work, c store.Confirmation, line compose.Line, reply *compose.Answer) (compose.Line, error) {
	held, err := w.tx.HoldForConfirmation(ctx, c, w.now, w.now.Add(confirmFor))
	if err != nil {
		return line, err
	}
	h.log.Info("request held for confirmation", "game", c.Game, "verb", c.Verb, "address", c.Address)
	reply.Confirm, reply.ConfirmBy = h.mail.ConfirmAddress(c.Game, held.Token), held.ExpiresAt
	line.Pending = true
	return line, nil
}

// confirm handles a reply to a confirmation address: the request held
// under its token is applied as if its mail had been proven, once.
func (h *Host) confirm(ctx context.Context, w *work, r inbound.Report, reply *compose.Answer) error {
	reply.Lines = nil // what the reply says does not matter: that it came does
	reply.Sender = engine.Actor{Kind: engine.ByOutsider, Address: r.Sender.Address}
	c, err := w.tx.Confirmation(ctx, r.Route.Game, r.Route.Token)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !strings.EqualFold(c.Address, r.Sender.Address)) {
		// A made-up token, or someone else's: like any address of no
		// game, it is not answered, so it cannot be used to make the host
		// mail anyone (the outcome is recorded in the inbox).
		h.log.Info("confirmation refused: unknown token or another sender", "game", r.Route.Game, "from", r.Sender.Address)
		return nil
	}
	if err != nil {
		return err
	}
	zone := engine.DefaultLocation()
	// The answer is in the game's language (the sender holds no seat
	// yet), the host's for a game that is not there.
	l := lang.Get(h.opts.Language)
	if g := w.game(c.Game); g != nil {
		reply.State = g.state
		reply.Channel = engine.Signup
		zone = g.state.GameZone()
		l = lang.Get(g.state.GameLanguage())
	}
	what := strings.ToUpper(c.Verb)
	switch {
	case !c.UsedAt.IsZero():
		reply.Lines = append(reply.Lines, compose.Line{Text: what,
			Err: phrase.Errorf("this request was confirmed already, on %s: nothing more to do", l.Time(lang.LayoutShort, c.UsedAt.In(zone)))})
		return nil
	case w.now.After(c.ExpiresAt):
		lapsed := l.Time(lang.LayoutShort, c.ExpiresAt.In(zone))
		why := phrase.Errorf("this request lapsed on %s, unconfirmed: to make it again, "+
			"send JOIN and your name to the sign-up address %s again", lapsed, h.mail.SignupAddress(c.Game))
		if c.Verb == store.ConfirmNewGame {
			why = phrase.Errorf("this request lapsed on %s, unconfirmed: to make it again, "+
				"send NEW GAME %s to %s again", lapsed, c.Game, h.opts.Address)
		}
		reply.Lines = append(reply.Lines, compose.Line{Text: what, Err: why})
		return nil
	}
	if err := w.tx.UseConfirmation(ctx, c.Token, w.now); err != nil {
		return err
	}
	h.log.Info("request confirmed", "game", c.Game, "verb", c.Verb, "address", c.Address)
	// The request is handled as the mail that made it would have been,
	// had its sender been proven: the same checks, now against the game
	// as it is.
	held := r
	held.Unproven, held.Quiet = false, false
	held.Discussion, held.Own, held.Misplaced, held.Errors, held.InReplyTo, held.Inline = "", "", nil, nil, nil, nil
	if c.Verb == store.ConfirmNewGame {
		held.Route = inbound.Route{Kind: inbound.RouteHost, Address: h.opts.Address}
		held.Commands = []command.Command{{Verb: command.NewGame, Name: c.Name, Raw: "NEW GAME " + c.Name}}
		return h.hostCommands(ctx, w, held, reply)
	}
	held.Route = inbound.Route{Kind: inbound.RouteSignup, Game: c.Game, Address: h.mail.SignupAddress(c.Game)}
	held.Commands = []command.Command{{Verb: command.Join, Name: c.Name, Raw: "JOIN " + c.Name}}
	return h.signup(ctx, w, held, reply)
}

// holdJoin holds a JOIN from unproven mail for confirmation, if the game
// would take it now; a JOIN it would refuse is refused at once, as it
// would be after the confirmation. A suspension is left for the confirmed
// JOIN to serve: a forged one must not use it up.
func (h *Host) holdJoin(ctx context.Context, w *work, r inbound.Report, g *game, cmd engine.Command, raw string, reply *compose.Answer) (compose.Line, error) {
	line := compose.Line{Text: raw}
	if _, err := engine.Apply(g.state.Clone(), cmd, h.env(w, g.state.Game)); err != nil {
		line.Err = err
		return line, nil
	}
	if reply.Confirm != "" {
		line.Err = phrase.Errorf("only one request is held for confirmation at a time: confirm the first, then send this one again")
		return line, nil
	}
	return h.holdForConfirmation(ctx, w, store.Confirmation{Game: r.Route.Game, Address: r.Sender.Address,
		Verb: store.ConfirmJoin, Name: cmd.Name}, line, reply)
}
