package story

import (
	"github.com/mafiamail/mafiamail/engine"
)

// Build reads a game's log, in order, as its story. The log may end
// anywhere: a game in progress gives the story so far, told from its public
// events alone.
func Build(log []engine.Event) History {
	b := builder{names: map[int]string{}}
	for _, e := range log {
		if e.Type == engine.EvGameEnded && len(e.Roles) > 0 {
			b.h.Revealed = true
		}
	}
	started := false
	for _, e := range log {
		if e.Type == engine.EvDayStarted {
			started = true
		}
		if !b.h.Revealed && !e.To.Public && !seatNews(e) && e.Type != engine.EvGameCreated {
			continue // a secret until the end: never in a story told before it
		}
		b.read(e)
	}
	if !started && !b.h.Revealed {
		// The seats are told to all when the game starts, not before.
		b.h.Players = nil
	}
	return b.h
}

// seatNews reports whether an event names a seat's player: sent to the
// player and the referee (with their address, which the story never
// reads), but every name is public once the game starts (the tallies and
// the thread name them all).
func seatNews(e engine.Event) bool {
	return e.Type == engine.EvPlayerJoined || e.Type == engine.EvPlayerRenamed
}

// builder folds events into a History.
type builder struct {
	h     History
	names map[int]string
	// day is the day under way, night the night under way (nil by day).
	day   *Day
	night *Night
	// shots holds tonight's standing shot of each Vigilante, and protects
	// each Doctor's protection, by the actor's name.
	shots    map[string]string
	protects map[string]string
}

func (b *builder) name(slot int) string { return b.names[slot] }

// round is the round under way, or nil.
func (b *builder) round() *Round {
	if b.day == nil || len(b.day.Rounds) == 0 {
		return nil
	}
	r := &b.day.Rounds[len(b.day.Rounds)-1]
	if !r.Closed.IsZero() {
		return nil
	}
	return r
}

func (b *builder) startDay(n int) {
	if b.day != nil && b.day.Number == n {
		return
	}
	b.h.Days = append(b.h.Days, Day{Number: n})
	b.day = &b.h.Days[len(b.h.Days)-1]
}

func (b *builder) read(e engine.Event) {
	switch e.Type {
	case engine.EvGameCreated, engine.EvSetupChanged:
		// The game's name and its setup are public, though the event that
		// creates the game goes to its referee alone.
		if e.Game != "" {
			b.h.Game = e.Game
		}
		if e.Setup != nil {
			b.h.Doctors = e.Setup.Doctors
		}
	case engine.EvPlayerJoined:
		b.names[e.Slot] = e.Name
		b.h.Players = append(b.h.Players, Player{Name: e.Name})
	case engine.EvPlayerRenamed, engine.EvSubstituted:
		if e.Name != "" && e.Slot > 0 && e.Slot <= len(b.h.Players) {
			b.names[e.Slot] = e.Name
			b.h.Players[e.Slot-1].Name = e.Name
		}
	case engine.EvDayStarted:
		b.endNight()
		b.startDay(e.Day)
		b.day.Rounds = append(b.day.Rounds, Round{Kind: e.Round})
	case engine.EvExtraStarted:
		// It follows the night: told after it, as its own part.
		b.endNight()
		b.h.Days = append(b.h.Days, Day{Number: e.Day, Extra: true, Rounds: []Round{{Kind: engine.Extra}}})
		b.day = &b.h.Days[len(b.h.Days)-1]
	case engine.EvRunoffStarted:
		b.startDay(e.Day)
		b.day.Rounds = append(b.day.Rounds, Round{Kind: engine.Runoff})
	case engine.EvVoted, engine.EvUnvoted, engine.EvLocked, engine.EvUnlocked:
		b.move(e)
	case engine.EvRoundClosed:
		b.closeRound(e)
	case engine.EvPlayerDied:
		d := Death{At: e.At, Name: e.Name, Cause: engine.Cause(e.Reason)}
		b.died(e.Slot, d.Cause)
		switch {
		case b.night != nil:
			b.night.Removed = append(b.night.Removed, d)
		case b.day != nil:
			b.day.Deaths = append(b.day.Deaths, d)
		}
	case engine.EvNightStarted:
		b.startDay(e.Day)
		b.day.Night = &Night{Number: e.Day}
		b.night = b.day.Night
		b.shots = map[string]string{}
		b.protects = map[string]string{}
	case engine.EvActionTaken:
		b.action(e)
	case engine.EvDayShot:
		if b.day != nil {
			b.day.Shots = append(b.day.Shots, Shot{By: e.Name, Target: b.name(e.Target), ByDay: true})
		}
	case engine.EvInspection:
		if n := b.nightOf(e.Day); n != nil {
			n.Inspections = append(n.Inspections, Inspection{By: e.Name, Target: b.name(e.Target), Result: e.Result})
		}
	case engine.EvDawn:
		if n := b.nightOf(e.Day); n != nil {
			b.settleShots()
			n.Dawn, n.Saved = true, e.Blocked
			for _, d := range e.Deaths {
				n.Deaths = append(n.Deaths, Death{At: e.At, Name: d.Name, Cause: d.Cause})
				b.died(d.Slot, d.Cause)
			}
		}
		b.night = nil
	case engine.EvGameEnded:
		b.end(e)
	}
}

func (b *builder) move(e engine.Event) {
	r := b.round()
	if r == nil {
		return
	}
	m := Move{At: e.At, Voter: e.Name, Null: e.Null}
	switch e.Type {
	case engine.EvVoted:
		m.Kind = MoveVote
	case engine.EvUnvoted:
		m.Kind = MoveUnvote
	case engine.EvLocked:
		m.Kind = MoveLock
		m.Null = e.Target == engine.NullVote
	case engine.EvUnlocked:
		m.Kind = MoveUnlock
	}
	if e.Target > 0 {
		m.Target = b.name(e.Target)
	}
	r.Moves = append(r.Moves, m)
}

func (b *builder) closeRound(e engine.Event) {
	r := b.round()
	if r == nil {
		return
	}
	r.Closed, r.Outcome = e.At, e.Outcome
	if e.Outcome == engine.Eliminated {
		r.Target = b.name(e.Target)
	}
	if e.Tally == nil {
		return
	}
	for _, v := range e.Tally.Votes {
		target := v.Target
		if target == "" && v.Cleared != "" {
			target = v.Cleared // a vote its target's death cleared counts as cast (D14)
		}
		r.Votes = append(r.Votes, Vote{Voter: v.Name, Target: target, Null: v.Null, Locked: v.Locked})
	}
}

func (b *builder) died(slot int, c engine.Cause) {
	if slot > 0 && slot <= len(b.h.Players) {
		b.h.Players[slot-1].Died = c
	}
}

// nightOf is the night that followed day n, if it was recorded.
func (b *builder) nightOf(n int) *Night {
	for i := range b.h.Days {
		if b.h.Days[i].Number == n && !b.h.Days[i].Extra {
			return b.h.Days[i].Night
		}
	}
	return nil
}

// action records a night action; the latest of each actor's stands (N2,
// N5), as the engine resolves them.
func (b *builder) action(e engine.Event) {
	n := b.night
	if n == nil {
		return
	}
	switch e.Verb {
	case engine.CmdKill:
		n.Kill, n.NoKill = b.name(e.Target), false
	case engine.CmdNoKill:
		n.Kill, n.NoKill = "", true
	case engine.CmdProtect:
		b.protects[e.Name] = b.name(e.Target)
	case engine.CmdShoot:
		b.shots[e.Name] = b.name(e.Target)
	case engine.CmdPass:
		b.shots[e.Name] = ""
	}
}

// settleShots writes tonight's standing protections and shots, in the
// order of the seats.
func (b *builder) settleShots() {
	if b.night == nil {
		return
	}
	for _, p := range b.h.Players {
		if t, ok := b.protects[p.Name]; ok {
			b.night.Protections = append(b.night.Protections, Protection{By: p.Name, Target: t})
		}
		if t, ok := b.shots[p.Name]; ok {
			b.night.Shots = append(b.night.Shots, Shot{By: p.Name, Target: t})
		}
	}
	b.shots, b.protects = nil, nil
}

// endNight closes a night that ended without a dawn being read (a night
// cut short by the game's end).
func (b *builder) endNight() {
	if b.night != nil {
		b.settleShots()
		b.night = nil
	}
}

func (b *builder) end(e engine.Event) {
	b.endNight()
	b.h.Winner = e.Winner
	if !b.h.Revealed {
		return
	}
	for i := range b.h.Players {
		if i < len(e.Roles) {
			b.h.Players[i].Role = e.Roles[i]
			b.h.Players[i].Side = engine.SideOf(e.Roles[i])
		}
		if i < len(e.Names) {
			b.h.Players[i].Name = e.Names[i]
		}
	}
}
