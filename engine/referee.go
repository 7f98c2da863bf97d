package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// referee handles the referee's commands (F1, F2).
func (t *step) referee(c Command, env Env) error {
	s := t.s
	if s.Paused {
		switch c.Verb {
		case CmdResume, CmdStatus, CmdHelp, CmdTally, CmdEnd, CmdAnnounce, CmdRelay, CmdReject,
			CmdSuspend, CmdAdmit, CmdReplace:
		default:
			return refuse(PausedGame, "the game is paused; RESUME it first")
		}
	}
	switch c.Verb {
	case CmdTally, CmdHelp, CmdStatus:
		return t.info(c)
	case CmdAdd:
		return t.join(c)
	case CmdSetup:
		if s.Phase != SignupPhase {
			return refuse(WrongPhase, "the setup cannot change once the game has started")
		}
		setup, err := ParseSetup(s.Setup, c.Text)
		if err != nil {
			return refuseErr(BadSetup, err)
		}
		if setup.Language == "" {
			// The language is the group's, not part of the rules a
			// named setup sets: SETUP classic keeps it.
			setup.Language = s.Setup.Language
		}
		if len(s.Players) > setup.Players {
			return refuse(BadSetup, "%d players have signed up, more than the %d of that setup", len(s.Players), setup.Players)
		}
		t.emit(Event{Type: EvSetupChanged, To: toAll, Setup: &setup, Text: setup.Summary()})
	case CmdStart:
		return t.start(env)
	case CmdPost:
		if c.Channel != Thread {
			return nil // the referee's own notes in their channel go nowhere
		}
		t.emit(Event{Type: EvThreadPost, To: toAll, Name: "Referee", Text: strings.TrimSpace(c.Text)})
	case CmdAnnounce:
		text := strings.TrimSpace(c.Text)
		if text == "" {
			return refuse(BadArgument, "ANNOUNCE needs the announcement below it")
		}
		t.emit(Event{Type: EvAnnouncement, To: toAll, Text: text})
	case CmdAdmit:
		addr := strings.TrimSpace(c.Address)
		if addr == "" {
			return refuse(BadArgument, "ADMIT needs an address")
		}
		for _, p := range s.Players {
			if strings.EqualFold(p.Address, addr) {
				return refuse(Duplicate, "%s is a player (%s)", addr, p.Name)
			}
		}
		for _, o := range s.Observers {
			if strings.EqualFold(o, addr) {
				return refuse(Duplicate, "%s is already an observer", addr)
			}
		}
		t.emit(Event{Type: EvObserverAdmitted, To: Audience{Referee: true, Address: addr}, Address: addr})
	case CmdSuspend:
		addr := strings.TrimSpace(c.Address)
		if addr == "" {
			return refuse(BadArgument, "SUSPEND needs an address")
		}
		t.emit(Event{Type: EvSuspended, To: toReferee, Address: addr, Reason: fmt.Sprintf(lang.Key("suspended by the referee of game %s"), s.Game)})
	case CmdRelay, CmdReject:
		return t.judgePost(c)
	case CmdEnd:
		if s.Phase == SignupPhase && s.Commitment == "" {
			t.emit(Event{Type: EvGameEnded, To: toAll, Winner: NoWinner, Reason: lang.Key("ended by the referee before it started")})
			return nil
		}
		t.endGame(NoWinner, lang.Key("ended by the referee"))
	default:
		if s.Phase == SignupPhase {
			return refuse(WrongPhase, "%s works once the game has started", c.Verb)
		}
		return t.refereePlay(c)
	}
	return nil
}

// start draws the roles (S2), sends the role messages (S3) and opens Day 1 (D6).
func (t *step) start(env Env) error {
	s := t.s
	if s.Phase != SignupPhase {
		return refuse(WrongPhase, "the game has already started")
	}
	if len(s.Players) != s.Setup.Players {
		return s.notAllSignedUp()
	}
	if env.Rand == nil {
		return refuse(NotAllowed, "no random source to draw the roles from")
	}
	roles, first, salt, err := draw(s.Setup, len(s.Players), env.Rand)
	if err != nil {
		return refuse(NotAllowed, "cannot draw the roles: %v", err)
	}
	names := make([]string, len(s.Players))
	for i, p := range s.Players {
		names[i] = p.Name
	}
	commitment := Commit(s.Game, names, roles, salt)
	// S1: every Inspector is told the same Mafioso, the first drawn (S2);
	// with no Inspector in play no one is told anything.
	known := 0
	if s.Setup.InspectorKnowsMafioso && s.Setup.Inspectors > 0 {
		known = first
	}
	t.emit(Event{Type: EvRolesDrawn, To: toReferee, Roles: roles, Names: names, Salt: salt,
		Commitment: commitment, Known: known})
	t.emit(Event{Type: EvDrawCommitted, To: toAll, Commitment: commitment, Text: s.Setup.Summary()})
	for _, p := range s.Players {
		t.emitRole(p.Slot)
	}
	t.startDay(1)
	return nil
}

// notAllSignedUp refuses a START before every seat is taken, and says the
// ways on: wait for the rest, or change the count with SETUP (S1) to one
// the setup allows. The count of those who signed up is offered only
// where the setup's roles fit in it; otherwise the refusal names the
// fewest players those roles allow and a setup with fewer roles that
// fits, each of which SETUP would accept.
func (s *State) notAllSignedUp() *Refusal {
	n, want := len(s.Players), s.Setup.Players
	least := want
	for k := want - 1; k >= 1; k-- {
		c := s.Setup
		c.Players = k
		if c.Validate() == nil {
			least = k
		}
	}
	switch {
	case n >= least:
		return refuse(WrongPhase, "%d of %d players have signed up: wait for %d more, or change the count with SETUP players=%d",
			n, want, want-n, n)
	case n >= 3:
		// A custom setup has only the roles it names (S1): this one has
		// Mafia alone, at most a third of the players, and fits.
		mafia := max(1, min(s.Setup.Mafia, n/3))
		return refuse(WrongPhase, "%d of %d players have signed up: wait for %d more, or change the count with SETUP players=N, "+
			"N at least %d with this setup's roles; for %d players name fewer roles too, as in SETUP players=%d mafia=%d",
			n, want, want-n, least, n, n, mafia)
	default:
		return refuse(WrongPhase, "%d of %d players have signed up: wait for %d more, or change the count with SETUP players=N, "+
			"N at least %d with this setup's roles", n, want, want-n, least)
	}
}

// emitRole sends one player their role message (S3).
func (t *step) emitRole(slot int) {
	s := t.s
	p := s.Player(slot)
	e := Event{Type: EvRoleAssigned, To: toPlayer(slot), Slot: slot, Name: p.Name, Role: p.Role}
	switch p.Role {
	case Mafia:
		for _, m := range s.Players {
			if m.Role == Mafia && m.Slot != slot {
				e.Mafiosi = append(e.Mafiosi, m.Slot)
			}
		}
	case Inspector:
		e.Known = s.Known
	}
	t.emit(e)
}

// refereePlay handles the referee's commands that steer a running game.
func (t *step) refereePlay(c Command) error {
	s := t.s
	switch c.Verb {
	case CmdClose:
		switch s.Phase {
		case DayPhase:
			t.closeRound()
		case NightPhase:
			t.resolveNight()
		}
	case CmdExtend, CmdGrant:
		d := c.Duration
		if d == 0 {
			d = 12 * time.Hour
		}
		if d < 0 {
			return refuse(BadArgument, "an extension must be positive")
		}
		if c.Verb == CmdGrant && len(s.Asked) == 0 {
			return refuse(NotAllowed, "no extension request is waiting; use EXTEND to extend anyway")
		}
		// D9: the length is added to the time the round would really
		// close, after any weekend hold, not to a deadline that is held.
		t.emit(Event{Type: EvExtended, To: toAll, Duration: d, Verb: c.Verb, Deadline: s.extendedDeadline(d)})
	case CmdDeny:
		if len(s.Asked) == 0 {
			return refuse(NotAllowed, "no extension request is waiting")
		}
		for _, slot := range append([]int(nil), s.Asked...) {
			t.emit(Event{Type: EvExtensionDenied, To: toPlayerRef(slot), Slot: slot, Name: s.name(slot)})
		}
	case CmdDeadline:
		at := c.Time
		switch {
		case strings.TrimSpace(c.Text) != "":
			var err error
			if at, err = s.parseDeadline(c.Text, t.now); err != nil {
				return refuse(BadArgument, "%v", err)
			}
		case at.IsZero():
			return refuse(BadArgument, "DEADLINE needs a date and a time of day: %s", s.timeAdvice(t.now))
		}
		if !at.After(t.now) {
			return refuse(BadArgument, "the new deadline must be in the future")
		}
		t.emit(Event{Type: EvDeadlineSet, To: toAll, Deadline: at.UTC()})
	case CmdWeekendClose:
		if s.Phase != DayPhase {
			return refuse(WrongPhase, "nights ignore the weekend")
		}
		if _, on := s.WeekendZone(); !on {
			return refuse(NotAllowed, "this game plays through weekends (weekend=off): its rounds close on a weekend anyway")
		}
		if s.InWeekend(t.now) {
			return refuse(NotAllowed, "a weekend close must be announced before the weekend begins")
		}
		t.emit(Event{Type: EvWeekendClose, To: toAll})
	case CmdModkill:
		slot, r := s.resolve(c.Target, s.Living())
		if r != nil {
			return r
		}
		t.dayDeath(slot, ByModkill)
	case CmdReplace:
		return t.replace(c)
	case CmdPause:
		if s.Paused {
			return refuse(NotAllowed, "the game is already paused")
		}
		t.emit(Event{Type: EvPaused, To: toAll})
	case CmdResume:
		if !s.Paused {
			return refuse(NotAllowed, "the game is not paused")
		}
		t.emit(Event{Type: EvResumed, To: toAll, Duration: t.now.Sub(s.PausedAt)})
	default:
		return refuse(NotAllowed, "%s is not a referee command", c.Verb)
	}
	return nil
}

// replace puts a substitute in a seat (S4): name, role, votes and missed
// votes stay with the seat; the old address and token stop working.
func (t *step) replace(c Command) error {
	s := t.s
	slot, r := s.resolve(c.Target, s.Living())
	if r != nil {
		return r
	}
	addr := strings.TrimSpace(c.Address)
	if addr == "" {
		return refuse(BadArgument, "REPLACE needs the substitute's address")
	}
	if r := s.canSeat(addr, c.Suspension); r != nil {
		return r
	}
	p := s.Player(slot)
	old := p.Address
	t.emit(Event{Type: EvPlayerReplaced, To: Audience{Referee: true, Address: old}, Slot: slot,
		Name: p.Name, Address: addr, Token: c.Token, Text: old})
	t.emit(Event{Type: EvSubstituted, To: toAll, Slot: slot, Name: p.Name})
	if s.Phase != SignupPhase {
		t.emitRole(slot)
	}
	return nil
}

// judgePost relays or rejects a held post (C1, F1).
func (t *step) judgePost(c Command) error {
	s := t.s
	var h *HeldPost
	for i := range s.Held {
		if s.Held[i].ID == c.Held {
			h = &s.Held[i]
		}
	}
	if h == nil || !h.Open {
		return refuse(NoSuchPost, "no post #%d is waiting", c.Held)
	}
	p := s.Player(h.Slot)
	if c.Verb == CmdRelay {
		t.emit(Event{Type: EvPostRelayed, To: toAll, Held: h.ID, Slot: h.Slot, Name: p.Name, Text: h.Text})
		return nil
	}
	t.emit(Event{Type: EvPostRejected, To: toPlayerRef(h.Slot), Held: h.ID, Slot: h.Slot, Name: p.Name, Reason: h.Reason})
	if c.Suspend {
		t.emit(Event{Type: EvSuspended, To: toReferee, Slot: h.Slot, Name: p.Name, Address: p.Address,
			Reason: "a post in game " + s.Game + " broke the rules"})
	}
	return nil
}
