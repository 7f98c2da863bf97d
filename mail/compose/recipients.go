package compose

import (
	"strconv"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// recipient is one reader of a game's mail.
type recipient struct {
	// key names the reader in Message-IDs and roots: "s3", "ref", "a-…".
	key      string
	name     string
	addr     string
	token    string
	slot     int
	referee  bool
	observer bool
	// tag, when set, is the language the reader's mail is written in,
	// whatever the game's: an outsider's (see publiclines.go) is the reader's
	// whose copy it stands beside.
	tag string
}

func (r recipient) reader() templates.Reader {
	return templates.Reader{Name: r.name, Slot: r.slot, Referee: r.referee, Observer: r.observer}
}

// delivery is one copy of an event: to whom, in which conversation.
type delivery struct {
	r  recipient
	ch templates.Channel
}

func playerRecipient(p *engine.Player) recipient {
	return recipient{key: "s" + strconv.Itoa(p.Slot), name: p.Name, addr: p.Address, token: p.Token, slot: p.Slot}
}

func refereeRecipient(s *engine.State, dir Directory) recipient {
	return recipient{key: "ref", name: "Referee", addr: s.Referee, token: dir.RefereeToken, referee: true}
}

// addressRecipient is an observer, or an address that holds no seat (a
// refused sign-up, a replaced player).
func addressRecipient(s *engine.State, dir Directory, addr string) recipient {
	r := recipient{key: "a-" + hashKey(addr), addr: addr}
	if s != nil {
		for _, o := range s.Observers {
			if strings.EqualFold(o, addr) {
				r.observer = true
				r.token = dir.observerToken(addr)
			}
		}
	}
	return r
}

// playerByAddress finds the seat an address holds now.
func playerByAddress(s *engine.State, addr string) *engine.Player {
	if s == nil {
		return nil
	}
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, addr) {
			return &s.Players[i]
		}
	}
	return nil
}

// deliveries resolves an event's audience against the state after it: the
// readers, each with the conversation their copy belongs to. An empty
// audience gives none.
func deliveries(e engine.Event, s *engine.State, dir Directory) []delivery {
	to := e.To
	var out []delivery
	seen := map[string]bool{}
	add := func(r recipient, ch templates.Channel) {
		if r.addr == "" || seen[r.key+"/"+string(ch)] {
			return
		}
		seen[r.key+"/"+string(ch)] = true
		out = append(out, delivery{r, ch})
	}
	if to.Public {
		for i := range s.Players {
			add(playerRecipient(&s.Players[i]), templates.Thread)
		}
		for _, o := range s.Observers {
			add(addressRecipient(s, dir, o), templates.Thread)
		}
		add(refereeRecipient(s, dir), templates.Thread)
		return out
	}
	if to.Mafia {
		for i := range s.Players {
			p := &s.Players[i]
			if !p.Alive || p.Role != engine.Mafia {
				continue
			}
			// T2: a mafia post goes to the other living Mafiosi, and to
			// its author too, as a mailing list does: their copy shows
			// that it went out, and how the others read it.
			add(playerRecipient(p), templates.Mafia)
		}
	}
	if to.Slot > 0 {
		if p := s.Player(to.Slot); p != nil {
			add(playerRecipient(p), templates.Private)
			if e.Type == engine.EvRoleAssigned && len(otherMafiosi(s, p.Slot)) > 0 {
				// A Mafioso's role message comes with the mafia list's
				// first mail, so that writing to the others is a Reply
				// away from the start (S3, T2).
				add(playerRecipient(p), templates.Mafia)
			}
		}
	}
	if to.Address != "" {
		add(addressRecipient(s, dir, to.Address), templates.Private)
	}
	if to.Referee {
		add(refereeRecipient(s, dir), templates.Private)
	}
	return out
}

// otherMafiosi are the living Mafiosi but the one in slot, when that one
// is a living Mafioso.
func otherMafiosi(s *engine.State, slot int) []string {
	if p := s.Player(slot); p == nil || !p.Alive || p.Role != engine.Mafia {
		return nil
	}
	var names []string
	for i := range s.Players {
		p := &s.Players[i]
		if p.Alive && p.Role == engine.Mafia && p.Slot != slot {
			names = append(names, p.Name)
		}
	}
	return names
}

// isSender reports whether r is the participant a.
func isSender(r recipient, a engine.Actor) bool {
	switch a.Kind {
	case engine.ByPlayer:
		return r.slot == a.Slot
	case engine.ByReferee:
		return r.referee
	default:
		return a.Address != "" && strings.EqualFold(r.addr, a.Address)
	}
}

// conversation is one of a reader's conversations in a game: its root
// Message-ID, its subject, and how its mail is answered.
type conversation struct {
	root    string
	subject string
	replyTo string // the reader's reply address in it
	// replyName is the display name of the Reply-To, as the composer
	// window will show where a plain Reply goes.
	replyName string
	// list: the conversation is a list (RFC 2369/2919 fields).
	list   bool
	listID string
	post   string // List-Post: the reader's posting address, or "" for NO
	help   string // List-Help: where HELP gets an answer
}

// roundOf names the part of the game a message of the town thread or the
// mafia list belongs to, from the game's state when it is sent: a key for
// the conversation's root ("d2", "n1") and the words for its subject
// ("Day 2", "Night 1"). A round's first message is the one that opens it,
// so the news that ends a day (the close, the eliminated player) heads the
// night's conversation, and the dawn heads the next day's.
func roundOf(s *engine.State, l *lang.Language) (key, words string) {
	switch {
	case s == nil || s.Phase == engine.SignupPhase:
		return "signup", l.Phrase("Sign-up")
	case s.Phase == engine.DayPhase:
		return "d" + strconv.Itoa(s.Day), l.Sprintf("Day %d", s.Day)
	case s.Phase == engine.NightPhase:
		return "n" + strconv.Itoa(s.Day), l.Sprintf("Night %d", s.Day)
	}
	return "end", l.Phrase("Game over")
}

// conversation is the conversation a reader's copy belongs to, for the
// game in state s. The town thread and the mafia list are one
// conversation per round (docs/mail.md "Subjects and threads"): a subject
// and a root of their own for every day and night, so that the subject
// says where the game is, and no conversation grows past what Gmail keeps
// in one (100 messages) in a way that splits it at random. A private
// channel is one conversation for the whole game: it is the reader's own
// record, and its subject tells nothing a Townsperson's should not.
func (c *Composer) conversation(game string, s *engine.State, d delivery, l *lang.Language) conversation {
	r := d.r
	key, words := roundOf(s, l)
	var cv conversation
	help := c.SignupAddress(game)
	if r.token != "" {
		help = c.PrivateAddress(game, r.token)
	}
	switch d.ch {
	case templates.Thread:
		cv.root = c.msgID(game, "thread", key)
		cv.subject = "[" + game + "] " + words
		cv.list = true
		cv.listID = "\"" + l.Sprintf("%s town thread", game) + "\" <thread." + game + "." + c.domain + ">"
		if r.token != "" {
			cv.replyTo = c.ThreadAddress(game, r.token)
			if !r.observer {
				cv.post = cv.replyTo
			}
		} else {
			cv.replyTo = c.SignupAddress(game)
		}
	case templates.Mafia:
		if key == "signup" {
			// The list's first mail comes with the roles, before Day 1
			// opens: it heads Day 1's conversation, where the Mafia's
			// first replies go.
			key, words = "d1", l.Sprintf("Day %d", 1)
		}
		cv.root = c.msgID(game, "mafia", key)
		cv.subject = "[" + game + "] " + l.Sprintf("Mafia list, %s", words)
		cv.list = true
		cv.listID = "\"" + l.Sprintf("%s mafia list", game) + "\" <mafia." + game + "." + c.domain + ">"
		cv.replyTo = c.MafiaAddress(game, r.token)
		cv.post = cv.replyTo
	default:
		switch {
		case r.referee:
			cv.root = c.msgID(game, "p", "ref")
			cv.subject = "[" + game + "] " + l.Phrase("Referee channel")
		case r.slot > 0:
			cv.root = c.msgID(game, "p", r.key)
			cv.subject = "[" + game + "] " + l.Sprintf("Private: %s", r.name)
		default:
			cv.root = c.msgID(game, "p", r.key)
			cv.subject = "[" + game + "] " + l.Phrase("From the host")
		}
		if r.token != "" {
			cv.replyTo = c.PrivateAddress(game, r.token)
		} else {
			cv.replyTo = c.SignupAddress(game)
		}
	}
	cv.help = help
	switch {
	case d.ch == templates.Thread:
		cv.replyName = l.Sprintf("%s town thread", game)
	case d.ch == templates.Mafia:
		cv.replyName = l.Sprintf("%s mafia list", game)
	case r.referee:
		cv.replyName = l.Sprintf("%s referee channel", game)
	case r.token != "" && (r.slot > 0 || r.observer):
		cv.replyName = l.Sprintf("%s private channel", game)
	default:
		cv.replyName = l.Sprintf("%s sign-up", game)
	}
	return cv
}

// suggestion is what a player can do now in a conversation, for the one or
// two commands their footer names: a vote while they owe one, a lock once
// they voted, their night action while it is missing. It reads only the
// reader's own role, in their own copy.
func suggestion(s *engine.State, p *engine.Player, ch templates.Channel) templates.Situation {
	m := templates.Situation{Channel: ch, Phase: string(s.Phase), Alive: p.Alive, Role: string(p.Role),
		Voted: p.Vote != 0, Locked: p.Locked, Paused: s.Paused}
	if s.Phase == engine.NightPhase && p.Alive {
		m.OwesAction = s.OwesAction(p.Slot)
	}
	if p.Role == engine.Vigilante {
		m.Shots = p.Shots != 0
	}
	return m
}

// footer is what the reader needs to answer in a conversation.
func (c *Composer) footer(s *engine.State, d delivery, now time.Time) templates.Footer {
	r := d.r
	f := templates.Footer{Channel: d.ch, Signup: c.SignupAddress(s.Game), Over: s.Phase == engine.EndedPhase}
	if r.token != "" {
		f.Thread = c.ThreadAddress(s.Game, r.token)
		f.Private = c.PrivateAddress(s.Game, r.token)
		f.Token = r.token
	}
	var p *engine.Player
	if r.slot > 0 {
		p = s.Player(r.slot)
	}
	if p != nil && p.Alive && p.Role == engine.Mafia && r.token != "" {
		f.Mafia = c.MafiaAddress(s.Game, r.token)
	}
	if f.Over {
		f.TalkUntil = moment(s, s.TalkUntil(), now)
		f.Talk = now.Before(s.TalkUntil())
	}
	switch {
	case r.observer:
		f.Private = ""
		f.Commands = templates.ObserverCommands
	case r.referee:
	case p != nil:
		f.Commands = templates.Suggest(suggestion(s, p, d.ch))
		f.Dead = !p.Alive && d.ch == templates.Thread
	default:
		// An address with no seat: nothing to answer with but a sign-up.
		f.Thread, f.Private = "", ""
	}
	return f
}
