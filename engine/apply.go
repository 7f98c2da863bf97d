package engine

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// Env is what the world lends the engine for one step: the current time
// and, for the role draw, a random source (crypto/rand.Reader in the host).
type Env struct {
	Now  time.Time
	Rand io.Reader
}

// step collects the events of one Apply or Tick, folding each into the
// state as it is emitted so that later rules see its effect.
type step struct {
	s      *State
	now    time.Time
	events []Event
}

func (t *step) emit(e Event) {
	e.V = EventVersion
	e.At = t.now
	if err := t.s.Fold(e); err != nil {
		// Every event is checked before it is emitted; a fold error is a
		// bug in the engine, and going on would corrupt the game.
		panic(fmt.Sprintf("engine: emitted an event the state refuses: %v", err))
	}
	t.events = append(t.events, e)
}

// GameIDPattern is what a game's name is: 2 to 20 lowercase letters and
// digits, so that it fits in a plus-address tag. It is the one place that
// says so; the mail layer builds its address patterns from it.
const GameIDPattern = `[a-z0-9]{2,20}`

var gameID = regexp.MustCompile(`^` + GameIDPattern + `$`)

// ValidGameID reports whether id can name a game in an address (docs/design.md).
func ValidGameID(id string) bool { return gameID.MatchString(id) }

// NewGame creates a game in sign-up, run by the referee at the given address.
func NewGame(id, referee string, setup Setup, now time.Time) (*State, []Event, error) {
	if !ValidGameID(id) {
		return nil, nil, refuse(BadArgument, "a game name is 2 to 20 lowercase letters and digits, not %q", id)
	}
	if strings.TrimSpace(referee) == "" {
		return nil, nil, refuse(BadArgument, "a game needs a referee address")
	}
	if err := setup.Validate(); err != nil {
		return nil, nil, refuseErr(BadSetup, err)
	}
	s := &State{}
	t := &step{s: s, now: now.UTC()}
	t.emit(Event{Type: EvGameCreated, To: toReferee, Game: id, Referee: referee, Setup: &setup})
	return s, t.events, nil
}

// Apply checks one command against the game and applies it. Whatever the
// clock made due before the command (a deadline that passed) is applied
// first, so a vote that comes after the close never counts; the events
// returned include those, and must be kept even when the command itself is
// refused (err is then a *Refusal).
func Apply(s *State, cmd Command, env Env) ([]Event, error) {
	t := &step{s: s, now: env.Now.UTC()}
	if cmd.By.Kind != ByHost || cmd.Verb != CmdMailWait {
		// The host's MAIL WAIT comes as the close falls due, to hold it
		// (T4): it goes before the clock's work, not after.
		t.tick()
	}
	err := t.command(cmd, env)
	if err == nil {
		t.tick()
	}
	return t.events, err
}

// Tick applies whatever the clock has made due by now: a round that closes,
// a night that ends, reminders. Call it at NextDeadline.
func Tick(s *State, now time.Time) []Event {
	t := &step{s: s, now: now.UTC()}
	t.tick()
	return t.events
}

func (t *step) command(c Command, env Env) error {
	s := t.s
	if s.Phase == EndedPhase && c.Verb != CmdHelp {
		if c.Verb == CmdPost && c.Channel == Thread {
			return t.postGameTalk(c)
		}
		return refuse(GameOver, "game %s is over", s.Game)
	}
	switch c.By.Kind {
	case ByHost:
		return t.hostCommand(c)
	case ByReferee:
		return t.referee(c, env)
	case ByPlayer:
		if s.Player(c.By.Slot) == nil {
			return refuse(NotInGame, "you are not a player in game %s", s.Game)
		}
	case ByObserver:
		switch c.Verb {
		case CmdTally, CmdHelp:
			return t.info(c)
		}
		return refuse(NotAllowed, "observers receive the thread but may not post or vote")
	case ByOutsider:
		if c.Verb == CmdJoin {
			return t.join(c)
		}
		if c.Verb == CmdHelp {
			return t.info(c)
		}
		return refuse(NotInGame, "you are not a player in game %s", s.Game)
	default:
		return refuse(NotInGame, "unknown sender")
	}
	if c.Verb == CmdJoin {
		// A JOIN in one's own private channel, which only the player can
		// write to, changes the name they signed up with, until the start.
		switch {
		case c.Channel == Private && s.Phase == SignupPhase:
			return t.rename(c)
		case c.Channel == Private:
			return refuse(WrongPhase, "your name is fixed now that game %s has started", s.Game)
		}
		return refuse(Duplicate, "you have already joined game %s", s.Game)
	}
	if s.Paused {
		switch c.Verb {
		case CmdTally, CmdHelp, CmdStatus, CmdZone, CmdLanguage, CmdMail, CmdCalendar:
		default:
			return refuse(PausedGame, "the referee has paused the game; wait for it to resume")
		}
	}
	switch c.Verb {
	case CmdTally, CmdHelp, CmdStatus:
		return t.info(c)
	case CmdZone:
		return t.zone(c)
	case CmdLanguage:
		return t.language(c)
	case CmdCalendar:
		return t.calendar(c)
	case CmdMail:
		return t.mail(c)
	case CmdPost:
		return t.post(c)
	case CmdVote, CmdUnvote, CmdLock, CmdUnlock:
		return t.vote(c)
	case CmdExtend:
		return t.askExtension(c)
	case CmdKill, CmdNoKill, CmdInspect, CmdProtect, CmdShoot, CmdPass:
		return t.nightAction(c)
	}
	return refuse(NotAllowed, "%s is a command for the referee", c.Verb)
}

// join signs a player up (JOIN from anyone, ADD from the referee).
func (t *step) join(c Command) error {
	s := t.s
	if s.Phase != SignupPhase {
		return refuse(WrongPhase, "sign-ups for game %s are closed", s.Game)
	}
	addr := strings.TrimSpace(c.Address)
	if addr == "" {
		addr = c.By.Address
	}
	if addr == "" {
		return refuse(BadArgument, "a player needs an address")
	}
	if p := s.playerAt(addr); p != nil && c.By.Kind == ByOutsider {
		// Their own sign-up again, perhaps to change the name: that is
		// done where only they can write.
		return refuse(Duplicate, "%s already plays as %s; to play under another name, reply to the mail that confirmed "+
			"the sign-up with JOIN and that name, before the game starts", addr, p.Name)
	}
	if r := s.canSeat(addr, c.Suspension); r != nil {
		return r
	}
	if len(s.Players) >= s.Setup.Players {
		return refuse(GameFull, "game %s is full (%d players)", s.Game, s.Setup.Players)
	}
	name := strings.TrimSpace(c.Name)
	if r := s.validName(name, 0); r != nil {
		return r
	}
	t.emit(Event{Type: EvPlayerJoined, To: Audience{Slot: len(s.Players) + 1, Referee: true},
		Slot: len(s.Players) + 1, Name: name, Address: addr, Token: c.Token, Count: s.Setup.Players})
	return nil
}

// rename gives a player who has signed up another name before the start
// (S4): the same checks as a sign-up's, against everyone but themselves.
func (t *step) rename(c Command) error {
	s := t.s
	p := s.Player(c.By.Slot)
	name := strings.TrimSpace(c.Name)
	if name == p.Name {
		return refuse(Duplicate, "you are signed up as %q already", name)
	}
	if r := s.validName(name, p.Slot); r != nil {
		return r
	}
	t.emit(Event{Type: EvPlayerRenamed, To: toPlayerRef(p.Slot), Slot: p.Slot, Name: name, Text: p.Name})
	return nil
}

// playerAt is the player who signed up with addr, or nil.
func (s *State) playerAt(addr string) *Player {
	for i := range s.Players {
		if strings.EqualFold(s.Players[i].Address, addr) {
			return &s.Players[i]
		}
	}
	return nil
}

// canSeat checks that an address may take a seat (JOIN, ADD, REPLACE): not
// suspended (C3), not the referee, not seated already.
func (s *State) canSeat(addr, suspension string) *Refusal {
	if suspension != "" {
		return refuse(Suspended, "%s cannot play: %s", addr, suspension)
	}
	if strings.EqualFold(addr, s.Referee) {
		return refuse(NotAllowed, "the referee cannot also play")
	}
	for _, p := range s.Players {
		if strings.EqualFold(p.Address, addr) {
			return refuse(Duplicate, "%s already plays as %s", addr, p.Name)
		}
	}
	return nil
}

// info answers TALLY, HELP and STATUS privately.
func (t *step) info(c Command) error {
	s := t.s
	to := Audience{Slot: c.By.Slot}
	switch c.By.Kind {
	case ByReferee:
		to = toReferee
	case ByObserver, ByOutsider:
		to = toAddress(c.By.Address)
	}
	switch c.Verb {
	case CmdTally:
		if s.Phase != DayPhase {
			return refuse(WrongPhase, "no vote is running now; the tally comes with each day")
		}
		t.emit(Event{Type: EvTallyShown, To: to, Tally: s.Tally(t.now)})
	case CmdHelp:
		e := Event{Type: EvHelpShown, To: to}
		if strings.EqualFold(c.Text, HelpRules) {
			e.Text = HelpRules
		}
		if p := s.Player(c.By.Slot); p != nil && c.By.Kind == ByPlayer {
			e.Slot, e.Role = p.Slot, p.Role
		}
		t.emit(e)
	case CmdStatus:
		if c.By.Kind == ByReferee {
			t.emit(Event{Type: EvStatusShown, To: to, Status: s.refereeStatus()})
		} else {
			t.emit(Event{Type: EvStatusShown, To: to, Slot: c.By.Slot, Status: s.playerStatus(c.By.Slot)})
		}
	}
	return nil
}

// SecretMarker is the line every role message of a game carries verbatim;
// a thread post that quotes it is sharing a role message (C2).
func SecretMarker(game string) string { return SecretMarkerIn(lang.Default, game) }

// SecretMarkerIn is the marker in a language: a player's role message is
// in their language, and a quote of it must be caught in any.
func SecretMarkerIn(tag, game string) string {
	return lang.Get(tag).Sprintf("Secret role message of game %s: do not share it", game)
}

// leaks reports why a thread post shares a secret (C2), or "".
func (s *State) leaks(text string) string {
	low := strings.ToLower(text)
	for _, l := range lang.All() {
		if strings.Contains(low, strings.ToLower(SecretMarkerIn(l.Tag, s.Game))) {
			return lang.Key("it quotes a role message")
		}
	}
	for _, p := range s.Players {
		if p.Token != "" && strings.Contains(low, strings.ToLower(p.Token)) {
			return lang.Key("it contains a private reply address")
		}
	}
	return ""
}

// post handles discussion: in the thread (T1, C1, C2), in the mafia list
// (T2), or in a private channel (to the referee).
func (t *step) post(c Command) error {
	s := t.s
	p := s.Player(c.By.Slot)
	text := strings.TrimSpace(c.Text)
	if text == "" {
		return refuse(BadArgument, "an empty post")
	}
	switch c.Channel {
	case MafiaCh:
		if p.Role != Mafia || s.Phase == SignupPhase {
			return refuse(NotYourRole, "only the Mafia may write to the mafia list")
		}
		if !p.Alive {
			return refuse(Dead, "the dead do not write to the mafia list")
		}
		t.emit(Event{Type: EvMafiaPost, To: Audience{Mafia: true}, Slot: p.Slot, Name: p.Name, Text: text})
	case Private:
		t.emit(Event{Type: EvPrivateNote, To: toReferee, Slot: p.Slot, Name: p.Name, Text: text})
	default:
		reason := ""
		if !p.Alive {
			reason = lang.Key("its author is dead")
		} else if r := s.leaks(text); r != "" {
			reason = r
		}
		if reason != "" {
			t.emit(Event{Type: EvPostHeld, To: toPlayerRef(p.Slot), Slot: p.Slot, Name: p.Name,
				Held: len(s.Held) + 1, Text: text, Reason: reason})
			return nil
		}
		t.emit(Event{Type: EvThreadPost, To: toAll, Slot: p.Slot, Name: p.Name, Text: text})
	}
	return nil
}

// postGameTalk relays a thread post after the end to every participant,
// living or dead, while the post-game talk lasts. Nothing is secret any
// more, so nothing is held.
func (t *step) postGameTalk(c Command) error {
	s := t.s
	text := strings.TrimSpace(c.Text)
	if text == "" {
		return refuse(BadArgument, "an empty post")
	}
	name := ""
	slot := 0
	switch c.By.Kind {
	case ByReferee:
		name = "Referee"
	case ByPlayer:
		p := s.Player(c.By.Slot)
		if p == nil {
			return refuse(NotInGame, "you are not a player in game %s", s.Game)
		}
		name, slot = p.Name, p.Slot
	default:
		return refuse(GameOver, "game %s is over, and observers do not post", s.Game)
	}
	if !t.now.Before(s.TalkUntil()) {
		return refuse(GameOver, "game %s is over and its post-game talk has closed, so your post went to no one", s.Game)
	}
	t.emit(Event{Type: EvPostGameTalk, To: toAll, Slot: slot, Name: name, Text: text})
	return nil
}

// refereeStatus is the referee's secret view (F2): a night ends by the
// mark the actions so far make, which only the referee may know.
func (s *State) refereeStatus() *Status {
	st := s.baseStatus()
	if s.Phase == NightPhase {
		st.Deadline = s.nightEndsAt()
	}
	for _, p := range s.Players {
		st.Players = append(st.Players, s.playerLine(p))
	}
	if s.Phase == NightPhase {
		st.Actions = s.nightActionLines()
	}
	for _, h := range s.Held {
		if h.Open {
			st.HeldPosts++
		}
	}
	return st
}

// playerStatus is what one player may know of their own position.
func (s *State) playerStatus(slot int) *Status {
	st := s.baseStatus()
	p := s.Player(slot)
	st.Players = []PlayerLine{s.playerLine(*p)}
	if p.Role == Mafia && s.Phase != SignupPhase {
		for _, m := range s.Players {
			if m.Role == Mafia && m.Slot != slot {
				st.Mafiosi = append(st.Mafiosi, m.Name)
			}
		}
	}
	if s.Phase == NightPhase && p.Alive {
		st.Actions = s.ownActionLines(slot)
	}
	return st
}

// baseStatus is what anyone may know of the game: a night's latest end,
// not the mark the actions so far make it end at, which tells when the
// last of them came in (N6): that is public when the night resolves.
func (s *State) baseStatus() *Status {
	st := &Status{Game: s.Game, Phase: s.Phase, Day: s.Day, Round: s.Round, Paused: s.Paused, Setup: s.Setup.Summary()}
	switch s.Phase {
	case DayPhase:
		st.Deadline = s.closeAt()
	case NightPhase:
		st.Deadline = s.Night.End
	}
	return st
}

func (s *State) playerLine(p Player) PlayerLine {
	l := PlayerLine{Slot: p.Slot, Name: p.Name, Role: p.Role, Alive: p.Alive, Cause: p.Cause,
		Missed: p.Missed, Vote: s.voteName(p.Vote), Locked: p.Locked}
	if p.Role == Doctor {
		l.Saves = p.Saves
		if p.LastProtected != 0 {
			l.LastProtected = s.Player(p.LastProtected).Name
		}
	}
	if p.Role == Vigilante {
		l.Shots = p.Shots
	}
	return l
}

func (s *State) voteName(v int) string {
	switch {
	case v == NullVote:
		return "null"
	case v > 0:
		return s.Player(v).Name
	}
	return ""
}

func (s *State) name(slot int) string {
	if p := s.Player(slot); p != nil {
		return p.Name
	}
	return ""
}

// zone sets or shows the zone a player's own copies show times in beside
// the game's. Times stay the game's: the zone only adds the player's own
// reading of them, so a player's choice changes no one else's mail.
func (t *step) zone(c Command) error {
	s := t.s
	if c.Channel != Private {
		return refuse(NotAllowed, "ZONE works in your private channel: reply to your role mail")
	}
	p := s.Player(c.By.Slot)
	text := strings.TrimSpace(c.Text)
	if text == "" {
		t.emit(Event{Type: EvZoneShown, To: toPlayer(p.Slot), Slot: p.Slot, Text: p.Zone})
		return nil
	}
	loc, err := ReadZone(text)
	if err != nil {
		return refuse(BadArgument, "%v; write ZONE and a place of the zone database, such as ZONE Europe/Berlin or ZONE America/Los_Angeles, or ZONE UTC", err)
	}
	if loc.String() == s.GameZone().String() {
		text = "" // the game's own: nothing to show beside it
	}
	t.emit(Event{Type: EvZoneSet, To: toPlayer(p.Slot), Slot: p.Slot, Text: text})
	return nil
}
