package host

import (
	"errors"
	"slices"
	"strings"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// A near miss is a line that is no command but looks like one: a verb
// misspelt ("VOET Mallory"), a command inside a sentence ("I vote Mallory
// too."), or a verb written with characters that only look like Latin
// letters (mail/command). None is applied: a guess must not change the
// game where it could be wrong. Each is answered in the author's one
// answer to the message, with what it looks like, where the line to send
// belongs, and the line itself; when that is the town thread, the
// answer's Reply-To is the author's thread address, so that pressing
// Reply and sending the line does it. A misspelt command is not relayed; a
// sentence is discussion and is relayed as any other, and nothing of the
// question reaches anyone but its author.
//
// The answer depends on who the author is in the game (player, referee,
// observer) and never on a player's hidden role: an INSPCT from a
// Townsperson is answered exactly as the Inspector's, with where INSPECT
// is sent; whether the author may use it is the engine's to say when the
// line is sent. A vote said in a sentence is asked about only where
// sending the line would cast that vote (a living player's, by day, for a
// living player the vote is not on already): everyone votes, so that
// tells nothing of a role, and it keeps talk about votes from drawing a
// question at every post.

// answerNearMisses adds the answers to a message's near misses to its
// reply, at index at, once the message's commands are applied.
func (h *Host) answerNearMisses(w *work, r inbound.Report, reply *compose.Answer, near []command.LineError, at int) {
	g := w.game(r.Route.Game)
	if g == nil {
		return
	}
	who := seat{game: r.Route.Game, kind: reply.Sender.Kind, token: r.Route.Token, ended: g.state.Phase == engine.EndedPhase}
	if who.kind == engine.ByOutsider {
		who.token = "" // a replaced player's old seat: no addresses to offer
	}
	type ask struct {
		le   command.LineError
		home command.Set
	}
	var asks []ask
	thread := false
	for _, le := range near {
		if le.Relayed() && !h.worthAsking(w, g, reply.Sender, le, who) {
			continue
		}
		home := nearHome(le, r.CommandSet, who)
		thread = thread || home == command.Thread
		asks = append(asks, ask{le, home})
	}
	// A refused line of the thread that offers lines to send instead (a
	// vote for the dead, a name with words after it) offers thread lines.
	if r.Route.Kind == inbound.RouteThread {
		for _, l := range reply.Lines {
			thread = thread || len(l.Instead) > 0
		}
	}
	if thread && who.kind == engine.ByPlayer && who.token != "" && !who.ended {
		reply.ReplyTo = h.mail.ThreadAddress(who.game, who.token)
	}
	if len(asks) == 0 {
		return
	}
	replyGoes := command.Private // a player's answers come from the private channel
	if reply.ReplyTo != "" {
		replyGoes = command.Thread
	}
	lines := make([]compose.Line, 0, len(asks))
	for _, a := range asks {
		lines = append(lines, h.nearMissLine(a.le, a.home, who, replyGoes))
	}
	reply.Lines = slices.Insert(reply.Lines, min(at, len(reply.Lines)), lines...)
}

// worthAsking reports whether a sentence with a command inside is worth a
// question: not after the game, and for a vote, only where sending the
// line would cast it; for a name, only where it is a player's.
func (h *Host) worthAsking(w *work, g *game, by engine.Actor, le command.LineError, who seat) bool {
	if who.ended {
		return false // the post-game talk is talk
	}
	n := le.Near
	if n.Command == command.Vote {
		if by.Kind != engine.ByPlayer {
			return false
		}
		evs, err := engine.Apply(g.state.Clone(), engine.Command{Verb: engine.CmdVote, By: by, Channel: engine.Thread,
			Target: n.Target}, h.env(w, g.state.Game))
		if err != nil {
			return false
		}
		for _, e := range evs {
			if e.Type == engine.EvVoted && e.Slot == by.Slot {
				return true
			}
		}
		return false
	}
	if n.Target == "" {
		return true
	}
	want := engine.NormalizeName(n.Target)
	for _, p := range g.state.Players {
		if strings.HasPrefix(engine.NormalizeName(p.Name), want) {
			return true
		}
	}
	return false
}

// nearHome is where the line to send of a near miss belongs, for its
// author: the address it was written to where that takes it (but the
// mafia list, whose commands the private channel takes too), else the
// thread, else the private channel; the referee's, the referee channel.
// "" where the author has no such address (an observer, a referee who
// misspelt a player's command in the thread).
func nearHome(le command.LineError, sent command.Set, who seat) command.Set {
	homes := le.Near.Homes
	switch who.kind {
	case engine.ByPlayer:
		if who.token == "" {
			return ""
		}
		if sent != command.Mafia && slices.Contains(homes, sent) {
			return sent
		}
		for _, h := range []command.Set{command.Thread, command.Private} {
			if slices.Contains(homes, h) {
				return h
			}
		}
	case engine.ByReferee:
		if slices.Contains(homes, command.Referee) {
			return command.Referee
		}
	}
	return ""
}

// nearMissLine is the answer to one near miss: what it looks like, where
// the line to send belongs, and the line.
func (h *Host) nearMissLine(le command.LineError, home command.Set, who seat, replyGoes command.Set) compose.Line {
	var what error = errors.New(le.Message)
	if le.Phrase != nil {
		what = le.Phrase
	}
	line := compose.Line{Text: le.Text}
	if who.ended || home == "" {
		// No line to send: what the verb is for, as for a command sent
		// to the wrong address.
		why, _ := h.whereItBelongs(command.Misplaced{Raw: le.Send, Verb: le.Near.Command, Homes: le.Near.Homes}, who)
		line.Err = phrase.Errorf("%s; %s", what, why)
		return line
	}
	verb := le.Near.Verb
	var where *phrase.Error
	switch home {
	case command.Thread:
		addr := h.mail.ThreadAddress(who.game, who.token)
		where = phrase.Errorf("%s is written in the town thread, %s", verb, addr)
		if replyGoes == command.Thread {
			where = phrase.Errorf("%s is written in the town thread, %s, and pressing Reply to this mail sends it there", verb, addr)
		}
	case command.Referee:
		where = phrase.Errorf("%s is written in your referee channel, %s, and pressing Reply to this mail sends it there",
			verb, h.mail.PrivateAddress(who.game, who.token))
	default:
		addr := h.mail.PrivateAddress(who.game, who.token)
		where = phrase.Errorf("%s is sent from your private channel, %s (reply to your role mail)", verb, addr)
		if replyGoes == command.Private {
			where = phrase.Errorf("%s is sent from your private channel, %s, and pressing Reply to this mail sends it there", verb, addr)
		}
	}
	line.Err = phrase.Errorf("%s. %s", what, where)
	line.Instead = []compose.Instead{{Line: le.Send}}
	return line
}

// nameWithWords are the lines to send for a command refused for a name
// that is a living player's name with words after it ("VOTE Mallory
// please", "vote for mallory please"): the line with the name alone. The
// host does not apply it (the words may be part of a name it does not
// know); it offers it.
func nameWithWords(s *engine.State, c command.Command, err error) []compose.Instead {
	var r *engine.Refusal
	if !errors.As(err, &r) || r.Reason != engine.UnknownName || c.Target == "" {
		return nil
	}
	words := strings.Fields(c.Target)
	for k := len(words) - 1; k >= 1; k-- {
		want := engine.NormalizeName(strings.Join(words[:k], " "))
		var found []string
		for _, slot := range s.Living() {
			if name := s.Player(slot).Name; strings.HasPrefix(engine.NormalizeName(name), want) {
				found = append(found, name)
			}
		}
		if len(found) == 1 {
			return []compose.Instead{{Meant: found[0], Line: c.WithTarget(found[0])}}
		}
		if len(found) > 1 {
			return nil
		}
	}
	return nil
}
