package host

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// A misplaced line is a command of the game's grammar sent to an address
// that does not take it: KILL in the town thread, VOTE in a private
// channel, CLOSE from a player. It is never relayed and never applied, and
// never dropped in silence: the sender's one answer quotes it, says why,
// and names the exact address where it belongs. The answer depends on who
// the sender is in the game (player, referee, observer, outsider) and
// never on a player's hidden role: a Townsperson's KILL in the thread is
// answered exactly like a Mafioso's, and nothing of it is public.

// seat is who sent a message, as far as the answer to a misplaced line
// needs to know: the game and the sender's token in it, if any.
type seat struct {
	game  string
	kind  engine.ActorKind
	token string
	ended bool
}

// answerMisplaced adds one refused line to the reply for each misplaced
// line of the message. When any of them belongs in the sender's thread,
// the answer's Reply-To leads there.
func (h *Host) answerMisplaced(r inbound.Report, reply *compose.Answer, who seat) {
	for _, m := range r.Misplaced {
		msg, thread := h.whereItBelongs(m, who)
		if thread {
			reply.ReplyTo = h.mail.ThreadAddress(who.game, who.token)
		}
		reply.Lines = append(reply.Lines, compose.Line{Text: m.Raw, Err: msg})
	}
}

// misplacedReason is the inbox's record of a message's misplaced lines.
func misplacedReason(r inbound.Report) string {
	if len(r.Misplaced) == 0 {
		return ""
	}
	var verbs []string
	for _, m := range r.Misplaced {
		verbs = append(verbs, string(m.Verb))
	}
	return fmt.Sprintf("misplaced at the %s address: %s", r.Route.Kind, strings.Join(verbs, ", "))
}

// verbKind sorts the verbs by where they are used.
func verbKind(m command.Misplaced) string {
	switch m.Verb {
	case command.Vote, command.Unvote, command.Lock, command.Unlock:
		return "vote"
	case command.Kill, command.NoKill, command.Inspect, command.Protect, command.Shoot, command.Pass:
		return "night"
	case command.Join:
		return "join"
	case command.NewGame:
		return "newgame"
	}
	if slices.Contains(m.Homes, command.Thread) {
		return "thread" // TALLY, EXTEND
	}
	if slices.Contains(m.Homes, command.Private) {
		return "private" // STATUS
	}
	return "referee"
}

// whereItBelongs is the sentence that answers one misplaced line, and
// whether it sends the sender to their thread.
func (h *Host) whereItBelongs(m command.Misplaced, who seat) (*phrase.Error, bool) {
	v := string(m.Verb)
	if who.ended {
		return phrase.Errorf("game %s is over, so %s does nothing now; it was not posted", who.game, v), false
	}
	thread, private, signup := "", "", ""
	if who.game != "" {
		signup = h.mail.SignupAddress(who.game)
		if who.token != "" {
			thread = h.mail.ThreadAddress(who.game, who.token)
			private = h.mail.PrivateAddress(who.game, who.token)
		}
	}
	kind := verbKind(m)
	if kind == "newgame" {
		return phrase.Errorf("NEW GAME is written by a referee named in the host's configuration to the host's own address %s", h.mail.Host()), false
	}
	switch who.kind {
	case engine.ByPlayer:
		switch kind {
		case "vote", "thread":
			return phrase.Errorf("%s is written in the town thread, where every player sees it, and was not applied here. "+
				"Reply to this answer, or to any thread mail, with the line again; the thread address is %s", v, thread), true
		case "night", "private":
			return phrase.Errorf("%s is sent from your private channel and was not applied here; it was not posted either. "+
				"Send it to %s (reply to your role mail)", v, private), false
		case "join":
			return phrase.Errorf("you play in game %s already; JOIN is for the sign-up address %s", who.game, signup), false
		case "newgame":
			return phrase.Errorf("NEW GAME is written by a referee to the host's own address %s", h.mail.Host()), false
		}
		return phrase.Errorf("%s is a command for the referee of game %s, and was not posted", v, who.game), false
	case engine.ByReferee:
		switch kind {
		case "referee", "private", "thread":
			return phrase.Errorf("%s is a referee command and works from your referee channel, %s; it was not posted", v, private), false
		case "vote", "night":
			return phrase.Errorf("the referee does not vote or act at night, so %s was not applied and was not posted", v), false
		case "join":
			return phrase.Errorf("the referee cannot also play"), false
		}
		return phrase.Errorf("NEW GAME is written to the host's own address %s", h.mail.Host()), false
	case engine.ByObserver:
		switch kind {
		case "vote", "night":
			return phrase.Errorf("observers watch the game and do not vote or act, so %s was not applied", v), false
		case "join":
			return phrase.Errorf("you watch game %s as an observer; to play in a later game, ask its referee for its sign-up address", who.game), false
		case "thread", "private":
			return phrase.Errorf("%s is not for observers; TALLY and HELP are, in a reply to any thread mail (%s)", v, thread), false
		}
		return phrase.Errorf("%s is a command for the referee of game %s", v, who.game), false
	}
	// Someone with no seat in the game: at its sign-up address, or at the
	// host's own address, where the host may not know the game at all.
	if who.game == "" {
		switch kind {
		case "join":
			return phrase.Errorf("JOIN is written to the sign-up address of a game, %s with the game's name for GAME; "+
				"ask the game's referee for it", h.mail.SignupAddress("GAME")), false
		}
		return phrase.Errorf("%s belongs to a game, and this is the host's own address, which belongs to none; "+
			"reply to a mail of your game, or ask its referee for your addresses", v), false
	}
	switch kind {
	case "join":
		return phrase.Errorf("JOIN is written to the sign-up address of game %s, %s", who.game, signup), false
	case "newgame":
		return phrase.Errorf("NEW GAME is written by a referee to the host's own address %s", h.mail.Host()), false
	case "vote", "night", "thread", "private":
		return phrase.Errorf("only the players of game %s use %s; to play, write JOIN and your name to %s while sign-ups are open", who.game, v, signup), false
	}
	return phrase.Errorf("%s is a command for the referee of game %s", v, who.game), false
}

// seatByAddress finds who an address is in a game, for mail that came to an
// address with no token (the sign-up or the host's own): a player of the
// game writing there is answered with their own addresses.
func (h *Host) seatByAddress(w *work, id, addr string) seat {
	who := seat{game: id, kind: engine.ByOutsider}
	g := w.game(id)
	if g == nil {
		return seat{kind: engine.ByOutsider}
	}
	who.ended = g.state.Phase == engine.EndedPhase
	switch {
	case strings.EqualFold(g.state.Referee, addr):
		who.kind, who.token = engine.ByReferee, g.referee.Token
		return who
	}
	for _, p := range g.state.Players {
		if strings.EqualFold(p.Address, addr) {
			who.kind, who.token = engine.ByPlayer, p.Token
			return who
		}
	}
	for a, t := range g.observers {
		if strings.EqualFold(a, addr) {
			who.kind, who.token = engine.ByObserver, t
		}
	}
	return who
}

// gamesOf lists the running games an address takes part in, by name: mail
// to the host's own address names no game, and the host answers with the
// games it knows the sender from.
func (h *Host) gamesOf(addr string) []string {
	var out []string
	for id, g := range h.games {
		if g.state.Phase == engine.EndedPhase {
			continue
		}
		if strings.EqualFold(g.state.Referee, addr) {
			out = append(out, id)
			continue
		}
		for _, p := range g.state.Players {
			if strings.EqualFold(p.Address, addr) {
				out = append(out, id)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}
