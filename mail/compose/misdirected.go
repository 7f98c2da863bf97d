package compose

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// Misdirected is a message a registered player sent to the host's bare
// address (a Reply that lost its tokened Reply-To) although it belongs to a
// channel of their game. It is never applied: the bare address proves
// nothing about who wrote it. The answer goes to the player's registered
// address, shows every line the host saw, names the exact address the
// message belongs to, and sets Reply-To to it, so that a plain Reply and
// sending again puts it right. Its shape is the same whatever the
// player's role.
type Misdirected struct {
	State *engine.State
	Dir   Directory
	// Slot is the player's seat.
	Slot int
	// Channel is where the message belongs: engine.Thread, engine.Private
	// or engine.MafiaCh.
	Channel engine.Channel
	// Lines are the lines of the author's own text, as the host saw them.
	Lines    []string
	Cause    string
	Subject  string
	Received time.Time
	Now      time.Time
}

// Misdirected composes the answer to a misdirected message.
func (c *Composer) Misdirected(md Misdirected) (Outgoing, error) {
	s := md.State
	if s == nil {
		return Outgoing{}, errors.New("compose: a misdirected message needs its game")
	}
	p := s.Player(md.Slot)
	if p == nil || p.Token == "" {
		return Outgoing{}, fmt.Errorf("compose: misdirected message: no player in seat %d", md.Slot)
	}
	l := lang.Get(s.LanguageOf(p))
	var addr, where, name string
	switch md.Channel {
	case engine.Thread:
		addr, where, name = c.ThreadAddress(s.Game, p.Token), l.Phrase("the town thread"), l.Sprintf("%s town thread", s.Game)
	case engine.MafiaCh:
		addr, where, name = c.MafiaAddress(s.Game, p.Token), l.Phrase("the mafia list"), l.Sprintf("%s mafia list", s.Game)
	default:
		addr, where, name = c.PrivateAddress(s.Game, p.Token), l.Phrase("your private channel"), l.Sprintf("%s private channel", s.Game)
	}
	var lines []string
	for _, ln := range md.Lines {
		if ln = strings.TrimRight(ln, " \t"); strings.TrimSpace(ln) != "" {
			lines = append(lines, ln)
		}
	}
	to := playerRecipient(p)
	sec := &templates.Section{Kind: "misdirected", Name: p.Name, Address: addr, Reason: where, Lines: lines,
		HostAddress: c.host, Subject: strings.TrimSpace(md.Subject), At: moment(s, md.Received, md.Now)}
	return c.finish(draft{
		game: s.Game, d: delivery{r: to, ch: templates.Private}, state: s, now: md.Now,
		sections: []*templates.Section{sec}, main: sec, kind: KindError,
		id:      c.msgID(s.Game, "misdirected", hashKey(md.Cause), to.key),
		replyTo: addr, replyName: name, replyWhere: where,
	})
}

// Conversation reads one of the host's own Message-IDs (the one a reply
// answers): the game it belongs to and the channel it went out in. The
// roots of conversations name both (<GAME.thread.d2@domain>); the opaque
// Message-ID of a message (<GAME.HASH@domain>) names neither, by design,
// and is reported as unknown: the root in References is the one to read.
func (c *Composer) Conversation(msgID string) (game string, ch engine.Channel, ok bool) {
	id := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(msgID), "<"), ">")
	local, domain, found := strings.Cut(id, "@")
	if !found || !strings.EqualFold(domain, c.domain) {
		return "", "", false
	}
	parts := strings.Split(local, ".")
	if len(parts) < 2 || !engine.ValidGameID(parts[0]) {
		return "", "", false
	}
	switch {
	case len(parts) == 2 && len(parts[1]) == opaqueDigits && isHex(parts[1]):
		return "", "", false
	case parts[1] == "thread":
		return parts[0], engine.Thread, true
	case parts[1] == "mafia":
		return parts[0], engine.MafiaCh, true
	case len(parts) == 5 && parts[3] == "t":
		return parts[0], engine.Thread, true
	case len(parts) == 5 && parts[3] == "m":
		return parts[0], engine.MafiaCh, true
	}
	return parts[0], engine.Private, true
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
