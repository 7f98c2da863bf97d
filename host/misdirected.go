package host

import (
	"strings"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/command"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// misdirected answers a message that a registered player of a running
// game sent to the host's bare address, typically a Reply whose client
// dropped the tokened Reply-To: it is never applied (the bare address
// proves nothing), and the player is told, at their registered address,
// every line the host saw and the exact address the message belongs to,
// with Reply-To set to it. The game and the channel come from the mail it
// answers (In-Reply-To, References); without one, from the only running
// game the sender plays in, and the channel from the lines themselves.
// The answer is shaped the same whatever the sender's role.
//
// It reports false for a message that is not such a one: from a referee,
// holding the host's own commands, or from an address that plays in no
// running game, or in several with nothing to tell which.
func (h *Host) misdirected(w *work, r inbound.Report) (bool, error) {
	if !noCommand(r) || r.Sender.Address == "" || h.isReferee(r.Sender.Address) {
		return false, nil
	}
	g, ch := h.misdirectedGame(w, r)
	if g == nil {
		return false, nil
	}
	p := playerWithAddress(g.state, r.Sender.Address)
	if ch == engine.MafiaCh && (p.Role != engine.Mafia || !p.Alive) {
		ch = engine.Private
	}
	m, err := h.mail.Misdirected(compose.Misdirected{
		State: g.state, Dir: g.dir(), Slot: p.Slot, Channel: ch,
		Lines: strings.Split(r.Own, "\n"), Cause: w.messageCause(r), Subject: r.Subject,
		Received: w.now, Now: w.now,
	})
	if err != nil {
		return false, &failure{err}
	}
	w.out = append(w.out, m)
	h.log.Info("misdirected message answered", "game", g.state.Game, "channel", string(ch))
	return true, nil
}

// misdirectedGame is the running game a misdirected message belongs to,
// and the channel, or nil.
func (h *Host) misdirectedGame(w *work, r inbound.Report) (*game, engine.Channel) {
	for _, id := range r.InReplyTo {
		gameID, ch, ok := h.mail.Conversation(id)
		if !ok {
			continue
		}
		if g := w.game(gameID); g != nil && running(g.state) && playerWithAddress(g.state, r.Sender.Address) != nil {
			return g, ch
		}
	}
	var ids []string
	for id, g := range h.games {
		if running(g.state) && playerWithAddress(g.state, r.Sender.Address) != nil {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		return nil, ""
	}
	return w.game(ids[0]), channelOfLines(r.Own)
}

// channelOfLines guesses where lines belong: the town thread when one of
// them is a thread command (a vote), else the private channel, where
// nothing is made public by mistake.
func channelOfLines(text string) engine.Channel {
	for _, l := range strings.Split(text, "\n") {
		if _, ok, err := command.ParseLine(l, command.Thread); ok && err == nil {
			return engine.Thread
		}
	}
	return engine.Private
}

func running(s *engine.State) bool {
	return s.Phase != engine.EndedPhase && s.Phase != engine.SignupPhase
}

func playerWithAddress(s *engine.State, addr string) *engine.Player {
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, addr) {
			return &s.Players[i]
		}
	}
	return nil
}
