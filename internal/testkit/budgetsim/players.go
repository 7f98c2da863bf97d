package budgetsim

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/mailserver"
)

// A player knows only what their mail told them: their role, their fellow
// Mafiosi and the addresses to write to. To choose whom to vote for or act
// on they look at the table (the game's public state), as a person reads
// the tally.
type player struct {
	name, addr string
	rng        *rand.Rand
	// chatty weighs how much of the thread this player writes.
	chatty float64

	role                   engine.Role
	fellows                []string
	thread, private, mafia string
	lastProtect            string
}

// learn takes what a delivery to this player tells.
func (p *player) learn(d mailserver.Delivery) {
	if p.role != "" && p.thread != "" && p.private != "" && (p.role != engine.Mafia || p.mafia != "") {
		return
	}
	l, err := readLetter(d.Data)
	if err != nil {
		return
	}
	if m := roleLine.FindStringSubmatch(l.text); m != nil && l.kind == "role" {
		p.role = engine.Role(m[1])
		if f := fellowsLine.FindStringSubmatch(l.text); f != nil {
			p.fellows = splitNames(f[1])
		}
		if a := mafiaAddr.FindString(l.text); a != "" {
			p.mafia = a
		}
	}
	switch {
	case strings.Contains(l.replyTo, "-t-"):
		p.thread = l.replyTo
	case strings.Contains(l.replyTo, "-p-"):
		p.private = l.replyTo
	case strings.Contains(l.replyTo, "-m-"):
		p.mafia = l.replyTo
	}
}

func (p *player) seat(s *engine.State) *engine.Player {
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, p.addr) {
			return &s.Players[i]
		}
	}
	return nil
}

func (p *player) alive(s *engine.State) bool {
	me := p.seat(s)
	return me != nil && me.Alive
}

func (p *player) isFellow(name string) bool {
	for _, f := range p.fellows {
		if f == name {
			return true
		}
	}
	return false
}

// voteFor picks a target: Mafiosi vote for townspeople; the town follows
// the leader of the tally more often than not, so days end.
func (p *player) voteFor(s *engine.State) string {
	var options []string
	if s.Round == engine.Runoff {
		options = append(options, s.Tally(s.Clock).Candidates...)
	} else {
		for _, slot := range s.Living() {
			options = append(options, s.Player(slot).Name)
		}
	}
	var pool []string
	for _, o := range options {
		if o == p.name || (p.role == engine.Mafia && p.isFellow(o)) {
			continue
		}
		pool = append(pool, o)
	}
	if len(pool) == 0 {
		return ""
	}
	if t := s.Tally(s.Clock); len(t.Counts) > 0 && p.rng.IntN(3) > 0 {
		for _, c := range t.Counts {
			for _, o := range pool {
				if o == c.Name {
					return o
				}
			}
		}
	}
	return pool[p.rng.IntN(len(pool))]
}

// others are the living players but p, who are not p's fellows when skip
// says so.
func (p *player) others(s *engine.State, skipFellows bool) []string {
	var out []string
	for _, slot := range s.Living() {
		n := s.Player(slot).Name
		if n != p.name && !(skipFellows && p.isFellow(n)) {
			out = append(out, n)
		}
	}
	return out
}

// nightAction is the role's command for the night, "" for none.
func (p *player) nightAction(s *engine.State) string {
	pick := func(pool []string) string {
		if len(pool) == 0 {
			return ""
		}
		return pool[p.rng.IntN(len(pool))]
	}
	switch p.role {
	case engine.Mafia:
		if t := pick(p.others(s, true)); t != "" {
			return "KILL " + t
		}
	case engine.Inspector:
		if t := pick(p.others(s, false)); t != "" {
			return "INSPECT " + t
		}
	case engine.Doctor:
		all := append(p.others(s, false), p.name)
		var t string
		for t = pick(all); t == p.lastProtect && len(all) > 1; t = pick(all) {
		}
		p.lastProtect = t
		return "PROTECT " + t
	case engine.Vigilante:
		if p.rng.IntN(4) == 0 {
			if t := pick(p.others(s, false)); t != "" {
				return "SHOOT " + t
			}
		}
		return "PASS"
	}
	return ""
}

var chatter = []string{
	"%s has been far too quiet.", "Something about %s's last post doesn't add up.",
	"I'm going with my gut on %s.", "%s, explain yourself!", "Following the tally: %s.",
	"%s's vote yesterday looked like bussing to me.", "I'd like to hear from %s before the deadline.",
}

var thoughts = []string{
	"I went back over yesterday's votes and the pattern is odd.",
	"Whoever voted last yesterday knew exactly what they were doing.",
	"Can we not tunnel on one person again? We did that on day one and it cost us.",
	"I'm town, for what it's worth. I know everyone says that.",
	"The night kill tells us something: they went for someone who was talking a lot.",
	"Nobody has claimed anything yet, and I think that's right for now.",
	"Let's get a consensus before the deadline instead of a last-minute pile-on.",
	"I'm at work until six, I'll catch up tonight.",
	"Reading back, the quiet ones worry me more than the loud ones.",
	"If you're an inspector, don't reveal yourself yet.",
	"That was a lot of mail to catch up on this morning.",
	"I'll vote later today once I've thought about it.",
	"Honestly I have no strong read on anyone yet.",
	"The tally is moving too fast; slow down and look at who's hopping on.",
	"Two people defended each other all day yesterday. Just saying.",
	"Good morning, all. Coffee first, then accusations.",
}

// post is a thread post as people write: a few lines, now and then
// quoting part of an earlier one.
func (p *player) post(s *engine.State, earlier []quoted) string {
	var b strings.Builder
	if len(earlier) > 0 && p.rng.IntN(10) < 3 {
		q := earlier[p.rng.IntN(len(earlier))]
		fmt.Fprintf(&b, "On %s, %s wrote:\n", q.at, q.name)
		for _, l := range strings.Split(q.text, "\n") {
			b.WriteString("> " + l + "\n")
		}
		b.WriteString("\n")
	}
	lines := 1 + p.rng.IntN(5)
	targets := p.others(s, p.role == engine.Mafia)
	for range lines {
		if len(targets) > 0 && p.rng.IntN(3) == 0 {
			fmt.Fprintf(&b, chatter[p.rng.IntN(len(chatter))]+"\n", targets[p.rng.IntN(len(targets))])
			continue
		}
		b.WriteString(thoughts[p.rng.IntN(len(thoughts))] + "\n")
	}
	if p.rng.IntN(3) == 0 {
		b.WriteString("\n-- \n" + p.name + "\n")
	}
	return b.String()
}

// quoted is an earlier post a player may quote.
type quoted struct {
	name, at, text string
}
