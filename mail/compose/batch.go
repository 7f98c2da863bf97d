package compose

import (
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/templates"
)

// Batch is a run of consecutive events of one game's log, typically the
// events of one engine step (an Apply or a Tick). Compose writes each reader
// one message per conversation for the whole batch, so that a round that
// closes with missed votes, an elimination and nightfall is one message,
// not five.
type Batch struct {
	// Before is the game's state before the first event (nil or empty when
	// the batch starts with the game's creation). It is not changed: each
	// event is folded into a copy, so that every copy shows the game as it
	// stood just after its own news.
	Before *engine.State
	Events []Logged
	Dir    Directory
	// Sender, when set, is the participant whose message's commands caused
	// the events. Their own private copies are left out: the one Reply to
	// their message (docs/design.md "Commands") carries them.
	Sender *engine.Actor
	// HoldForDigest leaves out the thread copies of the events Digestible
	// accepts: the caller gathers them for the next Digest (T1). A host
	// sets it for games whose digest_interval is not zero; it is the
	// caller's to set because a post held here and never digested is lost.
	HoldForDigest bool
}

// Event composes one event: the messages it causes, one per reader. after
// is the game's state just after the event.
func (c *Composer) Event(l Logged, after *engine.State, dir Directory) ([]Outgoing, error) {
	if after == nil {
		return nil, fmt.Errorf("compose: event %d (%s): no state", l.Seq, l.Event.Type)
	}
	return c.compose([]Logged{l}, []*engine.State{after}, dir, nil, false)
}

// Batch composes a run of events.
func (c *Composer) Batch(b Batch) ([]Outgoing, error) {
	states, err := foldEach(b.Before, b.Events)
	if err != nil {
		return nil, err
	}
	return c.compose(b.Events, states, b.Dir, b.Sender, b.HoldForDigest)
}

// foldEach returns the state just after each event.
func foldEach(before *engine.State, events []Logged) ([]*engine.State, error) {
	cur := &engine.State{}
	if before != nil {
		cur = before.Clone()
	}
	states := make([]*engine.State, len(events))
	for i, l := range events {
		if err := cur.Fold(l.Event); err != nil {
			return nil, fmt.Errorf("compose: fold event %d (%s): %w", l.Seq, l.Event.Type, err)
		}
		states[i] = cur.Clone()
	}
	return states, nil
}

// Digestible reports whether an event's thread copies may wait for a
// digest (T1): posts and votes. Everything else the thread hears (days,
// closes, dawns, deadlines, announcements) goes out at once.
func Digestible(e engine.Event) bool { return engine.Digestible(e) }

// item is one section of a message in the making, with the event and state
// it came from.
type item struct {
	l   Logged
	s   *engine.State
	sec *templates.Section
}

// group is one reader's message in one conversation.
type group struct {
	d     delivery
	items []item
}

func (c *Composer) compose(events []Logged, states []*engine.State, dir Directory, sender *engine.Actor, hold bool) ([]Outgoing, error) {
	var order []*group
	groups := map[string]*group{}
	for i, l := range events {
		s := states[i]
		e := l.Event
		for _, d := range deliveries(e, s, dir) {
			if sender != nil && d.ch != templates.Thread && isSender(d.r, *sender) {
				continue
			}
			if hold && d.ch == templates.Thread && Digestible(e) {
				continue
			}
			sec, err := c.section(e, s, d)
			if err != nil {
				return nil, fmt.Errorf("compose: event %d: %w", l.Seq, err)
			}
			key := d.r.key + "/" + string(d.ch)
			g := groups[key]
			if g == nil {
				g = &group{d: d}
				groups[key] = g
				order = append(order, g)
			}
			g.items = append(g.items, item{l, s, sec})
		}
	}
	var out []Outgoing
	for _, g := range order {
		m, err := c.groupMessage(g, dir)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// groupMessage writes one reader's message for a group of sections.
func (c *Composer) groupMessage(g *group, dir Directory) (Outgoing, error) {
	items := dropRedundant(g.items)
	last := items[len(items)-1]
	s := last.s
	now := last.l.Event.At
	var secs []*templates.Section
	for _, it := range items {
		secs = append(secs, it.sec)
	}
	main := mainSection(secs)
	dr := draft{
		game:     s.Game,
		d:        g.d,
		state:    s,
		now:      now,
		sections: secs,
		main:     main,
		id: c.opaqueID(idKey(dir, s.Game), s.Game, namePart(s, g.d.r, items[0].l.Seq, last.l.Seq), g.d.r.key,
			channelLetter(g.d.ch), main.Kind),
		fromName: relayAuthor(secs, main),
	}
	if g.d.ch == templates.Thread {
		dr.self = selfView(s, g.d.r, now)
		dr.tally = runningTally(s, now)
	}
	if main.Kind == "reminder" && main.Variant != "night" && g.d.r.token != "" {
		// A reminder to vote is answered with a vote: its Reply goes to
		// the thread. A night action's reminder stays private.
		dr.replyTo, dr.replyName = c.ThreadAddress(s.Game, g.d.r.token), s.Game+" town thread"
	}
	return c.finish(dr)
}

// dropRedundant folds a close's missed votes into one section, and leaves
// out a death that the round's close in the same message already tells:
// "Bob is eliminated" needs no second line.
func dropRedundant(items []item) []item {
	var merged []item
	for _, it := range items {
		if n := len(merged); n > 0 && it.sec.Kind == "missed" && merged[n-1].sec.Kind == "missed" {
			prev := *merged[n-1].sec
			prev.Missed = append(append([]templates.Missed(nil), prev.Missed...), it.sec.Missed...)
			merged[n-1].sec = &prev
			continue
		}
		merged = append(merged, it)
	}
	items = merged
	closes := false
	for _, it := range items {
		if it.sec.Kind == "close" {
			closes = true
		}
	}
	if !closes {
		return items
	}
	var out []item
	for _, it := range items {
		if it.sec.Kind == "death" && (it.sec.Variant == string(engine.ByVote) || it.sec.Variant == string(engine.ByMissedVotes)) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// rank orders section kinds by how much their news matters: the main
// section of a message is its headline.
var rank = map[string]int{
	"end": 100, "dawn": 90, "close": 85, "runoff": 80, "day": 75, "night": 70,
	"death": 65, "start": 60, "role": 58, "inspection": 55, "draw": 54, "cleared": 52,
	"deadline": 50, "pause": 48, "announce": 47, "missed": 46, "substitute": 45,
	"post": 40, "mafia": 40, "action": 35, "held": 34, "extension": 33,
	"tally": 30, "status": 30, "help": 30, "joined": 28, "renamed": 28, "observer": 28,
	"created": 28, "setup": 27, "replaced": 26, "suspended": 25, "note": 24,
	"reminder": 22, "vote": 20,
}

func mainSection(secs []*templates.Section) *templates.Section {
	main := secs[0]
	for _, s := range secs[1:] {
		if rank[s.Kind] > rank[main.Kind] {
			main = s
		}
	}
	return main
}

// relayAuthor is the display name of a relay: a message that carries only
// one player's own posts (and votes) comes under their name; anything else
// comes from the host.
func relayAuthor(secs []*templates.Section, main *templates.Section) string {
	if main.Kind != "post" && main.Kind != "mafia" {
		return ""
	}
	for _, s := range secs {
		switch s.Kind {
		case "post", "mafia", "vote":
			if s.Name != main.Name {
				return ""
			}
		default:
			return ""
		}
	}
	if main.Variant == "referee" {
		return "Referee"
	}
	return main.Name
}

func channelLetter(ch templates.Channel) string {
	switch ch {
	case templates.Thread:
		return "t"
	case templates.Mafia:
		return "m"
	}
	return "p"
}

// runningTally is the tally that ends thread mail while a vote runs (D15).
func runningTally(s *engine.State, now time.Time) *templates.Tally {
	if s.Phase != engine.DayPhase {
		return nil
	}
	return tallyView(s.Tally(now), s, false, now)
}

// selfView is the reader's own position, for their copy of thread mail.
func selfView(s *engine.State, r recipient, now time.Time) *templates.Self {
	if r.referee {
		v := &templates.Self{Phase: string(s.Phase)}
		for _, slot := range s.Asked {
			if p := s.Player(slot); p != nil {
				v.Asked = append(v.Asked, p.Name)
			}
		}
		for _, h := range s.Held {
			if h.Open {
				v.Held++
			}
		}
		if len(v.Asked) == 0 && v.Held == 0 {
			return nil
		}
		return v
	}
	p := s.Player(r.slot)
	if p == nil {
		return nil
	}
	v := &templates.Self{
		Phase: string(s.Phase), Day: s.Day, Round: string(s.Round), Paused: s.Paused,
		Alive: p.Alive, Missed: p.Missed, Locked: p.Locked,
	}
	if !p.Alive {
		v.Cause = CauseWords(p.Cause)
	}
	switch {
	case p.Vote == engine.NullVote:
		v.Null = true
	case p.Vote > 0:
		if t := s.Player(p.Vote); t != nil {
			v.Vote = t.Name
		}
	}
	switch s.Phase {
	case engine.DayPhase:
		v.Closes = closesMoment(s, now)
		v.OwesVote = p.Alive && p.Vote <= 0
		if s.Round == engine.Runoff {
			for _, cand := range s.Candidates {
				if t := s.Player(cand); t != nil {
					v.Runoff = append(v.Runoff, t.Name)
				}
			}
		}
	case engine.NightPhase:
		v.Closes = moment(s, s.NightEndsAt(), now)
	}
	return v
}
