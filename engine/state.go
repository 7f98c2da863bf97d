package engine

import (
	"fmt"
	"slices"
	"time"
)

// Phase is where the game stands.
type Phase string

// The phases of a game.
const (
	SignupPhase Phase = "signup"
	DayPhase    Phase = "day"
	NightPhase  Phase = "night"
	EndedPhase  Phase = "ended"
)

// NullVote is the vote target of VOTE NULL (D3).
const NullVote = -1

// Player is one seat at the table. A substitute takes over the seat (S4),
// so the slot, not the address, is a player's identity.
type Player struct {
	Slot    int    `json:"slot"`
	Name    string `json:"name"`
	Address string `json:"address"`
	Token   string `json:"token"`
	Role    Role   `json:"role,omitempty"`
	Alive   bool   `json:"alive"`
	Cause   Cause  `json:"cause,omitempty"`
	Missed  int    `json:"missed"`
	// Vote is the slot voted for, NullVote, or 0 for no vote.
	Vote   int  `json:"vote"`
	Locked bool `json:"locked"`
	// Cleared is the player whose death or removal cleared this player's
	// vote in the running round, or 0: such a vote counts as cast at the
	// close unless the player votes again (D14).
	Cleared int `json:"cleared,omitempty"`

	// Doctor: saves left (Unlimited for no limit) and last night's protection.
	Saves         int `json:"saves"`
	LastProtected int `json:"last_protected"`
	// Vigilante: shots left, the night of the last night shot, the day of
	// the last day shot.
	Shots         int `json:"shots"`
	LastShotNight int `json:"last_shot_night"`
	LastShotDay   int `json:"last_shot_day"`

	// Zone is the zone the player's own copies show times in beside the
	// game's, as they wrote it (ZONE); "" for the game's alone. It goes with
	// the player, not the seat: a substitute starts without one.
	Zone string `json:"zone,omitempty"`
	// Language is the language of the player's own mail (LANGUAGE), a tag
	// of package lang; "" for the game's. It goes with the player, not the
	// seat: a substitute starts with the game's.
	Language string `json:"language,omitempty"`
	// Mail is how the player takes the thread (MAIL): MailDigest,
	// MailEach, or "" for the setup's way (T1).
	Mail string `json:"mail,omitempty"`
	// NoCalendar: the player turned the calendar events of the deadlines
	// off (CALENDAR OFF, T5). It goes with the player, not the seat.
	NoCalendar bool `json:"no_calendar,omitempty"`

	// Sent counts the events sent to this player alone or to the mafia
	// list while they were in it (see State.PublicSent).
	Sent int `json:"sent,omitempty"`
}

// HeldPost is a thread post waiting for the referee (C1, C2).
type HeldPost struct {
	ID     int    `json:"id"`
	Slot   int    `json:"slot"`
	Text   string `json:"text"`
	Reason string `json:"reason"`
	Open   bool   `json:"open"`
}

// Night holds the secret actions of the current night.
type Night struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// AllInAt is when the last required action came in (N6).
	AllInAt time.Time `json:"all_in_at"`
	Whack   int       `json:"whack"`
	WhackBy int       `json:"whack_by"`
	NoKill  bool      `json:"no_kill"`
	// Inspects holds each Inspector's guess: pairs of (inspector, target).
	Inspects []Pair `json:"inspects"`
	// Protects holds each Doctor's protection tonight: pairs of (doctor,
	// target), the latest of each standing (N4).
	Protects []Pair `json:"protects"`
	// Shots holds each Vigilante's latest SHOOT tonight: pairs of
	// (vigilante, target); Passes the Vigilantes whose latest was PASS.
	// The latest of each stands until the night resolves, when the shot is
	// charged (N5).
	Shots    []Pair `json:"shots"`
	Passes   []int  `json:"passes"`
	Reminded bool   `json:"reminded"`
}

// Pair is an actor and the player they named.
type Pair struct {
	By     int `json:"by"`
	Target int `json:"target"`
}

// Protection is the player the Doctor in slot protects tonight, or 0.
func (n Night) Protection(doctor int) int { return targetOf(n.Protects, doctor) }

// ShotOf is the player the Vigilante in slot shoots tonight, or 0.
func (n Night) ShotOf(vigilante int) int { return targetOf(n.Shots, vigilante) }

// Passed reports whether the Vigilante in slot passes tonight.
func (n Night) Passed(vigilante int) bool { return slices.Contains(n.Passes, vigilante) }

func targetOf(pairs []Pair, by int) int {
	for _, p := range pairs {
		if p.By == by {
			return p.Target
		}
	}
	return 0
}

// setPair makes target the one that by names, in place of any before.
func setPair(pairs []Pair, by, target int) []Pair {
	for i := range pairs {
		if pairs[i].By == by {
			pairs[i].Target = target
			return pairs
		}
	}
	return append(pairs, Pair{By: by, Target: target})
}

// dropPair takes back what by named; nil when nothing is left, as a
// replayed log has it.
func dropPair(pairs []Pair, by int) []Pair {
	var out []Pair
	for _, p := range pairs {
		if p.By != by {
			out = append(out, p)
		}
	}
	return out
}

// State is a game: the fold of its events. Use Apply and Tick to change it.
type State struct {
	Game    string `json:"game"`
	Referee string `json:"referee"`
	Setup   Setup  `json:"setup"`
	Phase   Phase  `json:"phase"`
	// Clock is the time of the latest event.
	Clock    time.Time `json:"clock"`
	Paused   bool      `json:"paused"`
	PausedAt time.Time `json:"paused_at"`

	Players   []Player `json:"players"`
	Observers []string `json:"observers"`
	// PublicSent counts the events sent to the whole thread, and each
	// Player.Sent those sent to that player alone or to the mafia list:
	// together what a player has been sent. A player's mail is named
	// (Message-IDs) by these counts, so that nothing in its name changes
	// with events the player was not sent.
	PublicSent int `json:"public_sent,omitempty"`

	// Day is the current day (Day 1 opens the game); night N follows day N.
	Day   int       `json:"day"`
	Round RoundKind `json:"round"`
	// Extra: the rounds running are the extra round of N7, after which a
	// new day begins instead of a night.
	Extra      bool      `json:"extra"`
	Candidates []int     `json:"candidates"`
	RoundStart time.Time `json:"round_start"`
	Deadline   time.Time `json:"deadline"`
	// TieExtended: this runoff was already extended once for a tie (D12).
	TieExtended bool `json:"tie_extended"`
	// RunoffGranted: this runoff's first extension request was granted (D9).
	RunoffGranted bool `json:"runoff_granted"`
	WeekendClose  bool `json:"weekend_close"`
	// DeadlineMoves counts the changes to the running round's close or
	// the night's end (an extension, a new deadline, a tie's extension,
	// the weekend rule, a wait for held mail): the SEQUENCE of its
	// calendar event (T5), kept in the state so that it survives
	// restarts.
	DeadlineMoves int  `json:"deadline_moves,omitempty"`
	Reminded      bool `json:"reminded"`
	// Asked lists the players with an extension request waiting (D9).
	Asked []int `json:"asked"`
	Night Night `json:"night"`

	// DigestPending counts the thread news since the last digest, and
	// LastDigest is when it went out (T1).
	DigestPending int       `json:"digest_pending"`
	LastDigest    time.Time `json:"last_digest"`
	// MailPlan is the digest interval the host set for everyone to stay
	// within its sending limit; zero while there is room (T3).
	MailPlan time.Duration `json:"mail_plan,omitempty"`
	// MailPlanAt is when the host last set or ended its plan.
	MailPlanAt time.Time `json:"mail_plan_at,omitzero"`
	// MailWaitUntil, while set, is the latest the round's close waits for
	// mail the sending limit holds back (T4).
	MailWaitUntil time.Time `json:"mail_wait_until,omitzero"`
	// StartedAt is when the roles were drawn, and ThreadNews counts the
	// thread's posts and votes since: the group's pace, which the host's
	// plan for its sending budget reads (T3).
	StartedAt  time.Time `json:"started_at,omitzero"`
	ThreadNews int       `json:"thread_news,omitempty"`

	Held       []HeldPost `json:"held"`
	Commitment string     `json:"commitment"`
	Salt       string     `json:"salt"`
	Known      int        `json:"known"`
	Winner     Side       `json:"winner"`
	// EndedAt is when the game ended; the post-game talk runs from it.
	EndedAt time.Time `json:"ended_at,omitzero"`
}

// TalkUntil is when the post-game talk of an ended game closes: until then
// thread posts are relayed to every participant.
func (s *State) TalkUntil() time.Time {
	if s.Phase != EndedPhase {
		return time.Time{}
	}
	return s.EndedAt.Add(s.Setup.TalkAfterEnd())
}

// Player returns the player in slot (1-based), or nil.
func (s *State) Player(slot int) *Player {
	if slot < 1 || slot > len(s.Players) {
		return nil
	}
	return &s.Players[slot-1]
}

// Living returns the slots of the living players, in seat order.
func (s *State) Living() []int {
	var out []int
	for _, p := range s.Players {
		if p.Alive {
			out = append(out, p.Slot)
		}
	}
	return out
}

func (s *State) livingCount() (mafia, others int) {
	for _, p := range s.Players {
		if !p.Alive {
			continue
		}
		if p.Role == Mafia {
			mafia++
		} else {
			others++
		}
	}
	return
}

// livingWith returns the living players of a role.
func (s *State) livingWith(r Role) []int {
	var out []int
	for _, p := range s.Players {
		if p.Alive && p.Role == r {
			out = append(out, p.Slot)
		}
	}
	return out
}

// Clone returns a deep copy, so a caller can try commands and throw the
// result away if its transaction fails.
func (s *State) Clone() *State {
	c := *s
	c.Players = append([]Player(nil), s.Players...)
	c.Observers = append([]string(nil), s.Observers...)
	c.Candidates = append([]int(nil), s.Candidates...)
	c.Asked = append([]int(nil), s.Asked...)
	c.Night.Inspects = append([]Pair(nil), s.Night.Inspects...)
	c.Night.Protects = append([]Pair(nil), s.Night.Protects...)
	c.Night.Shots = append([]Pair(nil), s.Night.Shots...)
	c.Night.Passes = append([]int(nil), s.Night.Passes...)
	c.Held = append([]HeldPost(nil), s.Held...)
	return &c
}

// Replay rebuilds a game from its event log.
func Replay(events []Event) (*State, error) {
	s := &State{}
	for i, e := range events {
		if err := s.Fold(e); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", i, e.Type, err)
		}
	}
	return s, nil
}

// Fold applies one event to the state. It is the only place the state
// changes, so that a replayed log rebuilds exactly the state that was live.
func (s *State) Fold(e Event) error {
	if err := s.fold(e); err != nil {
		return err
	}
	s.countSent(e)
	return nil
}

// countSent counts an event for the players it goes to (see PublicSent):
// the whole thread, one player, or the living Mafia as the state after the
// event has them, as the mail layer delivers it.
func (s *State) countSent(e Event) {
	if e.To.Public {
		s.PublicSent++
		return
	}
	if p := s.Player(e.To.Slot); p != nil {
		p.Sent++
	}
	if e.To.Mafia {
		for i := range s.Players {
			if p := &s.Players[i]; p.Alive && p.Role == Mafia && p.Slot != e.To.Slot {
				p.Sent++
			}
		}
	}
}

func (s *State) fold(e Event) error {
	if e.V != EventVersion {
		return fmt.Errorf("event version %d is not %d", e.V, EventVersion)
	}
	if s.Game == "" && e.Type != EvGameCreated {
		return fmt.Errorf("the log does not start with %s", EvGameCreated)
	}
	if e.At.After(s.Clock) {
		s.Clock = e.At
	}
	p := s.Player(e.Slot)
	needPlayer := func() error {
		if p == nil {
			return fmt.Errorf("no player in slot %d", e.Slot)
		}
		return nil
	}
	switch e.Type {
	case EvGameCreated:
		if s.Game != "" {
			return fmt.Errorf("game already created")
		}
		if e.Setup == nil {
			return fmt.Errorf("no setup")
		}
		*s = State{Game: e.Game, Referee: e.Referee, Setup: *e.Setup, Phase: SignupPhase, Clock: e.At}
	case EvSetupChanged:
		s.Setup = *e.Setup
	case EvPlayerJoined:
		s.Players = append(s.Players, Player{Slot: len(s.Players) + 1, Name: e.Name,
			Address: e.Address, Token: e.Token, Alive: true})
	case EvPlayerRenamed:
		p := s.Player(e.Slot)
		if p == nil {
			return fmt.Errorf("rename of unknown player %d", e.Slot)
		}
		p.Name = e.Name
	case EvObserverAdmitted:
		s.Observers = append(s.Observers, e.Address)
	case EvRolesDrawn:
		s.StartedAt = e.At
		if len(e.Roles) != len(s.Players) {
			return fmt.Errorf("draw of %d roles for %d players", len(e.Roles), len(s.Players))
		}
		for i := range s.Players {
			p := &s.Players[i]
			p.Role = e.Roles[i]
			p.Saves, p.Shots = 0, 0
			if p.Role == Doctor {
				p.Saves = s.Setup.DoctorSaves
			}
			if p.Role == Vigilante {
				p.Shots = s.Setup.VigilanteShots
			}
		}
		s.Salt, s.Commitment, s.Known = e.Salt, e.Commitment, e.Known
	case EvCalendarSet:
		if err := needPlayer(); err != nil {
			return err
		}
		p.NoCalendar = e.Text == CalendarOff
	case EvZoneSet:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Zone = e.Text
	case EvLanguageSet:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Language = e.Text
	case EvMailSet:
		if err := needPlayer(); err != nil {
			return err
		}
		if s.Setup.DigestInterval == 0 && s.DigestPending == 0 && e.Text == MailDigest && s.DigestEvery() == 0 {
			// The first reader of digests in a game that sends each post:
			// the interval runs from the choice.
			s.LastDigest = e.At
		}
		p.Mail = e.Text
	case EvMailPlan:
		s.applyMailPlan(e)
	case EvMailWait, EvMailFlowed:
		if err := s.applyMailWait(e); err != nil {
			return err
		}
	case EvDrawCommitted, EvRoleAssigned, EvTallyShown, EvStatusShown, EvHelpShown, EvZoneShown, EvLanguageShown, EvMailShown, EvCalendarShown,
		EvAnnouncement, EvThreadPost, EvMafiaPost, EvInspection, EvPrivateNote, EvSubstituted, EvPostGameTalk:
	case EvExtensionDenied:
		s.Asked = removeInt(s.Asked, e.Slot)
	case EvDayStarted, EvExtraStarted:
		if s.LastDigest.IsZero() {
			s.LastDigest = e.At
		}
		s.Phase = DayPhase
		s.Day = e.Day
		s.Round = e.Round
		s.Extra = e.Type == EvExtraStarted
		s.startRound(e.At, e.Deadline)
		s.Candidates = nil
		s.Night = Night{}
		for i := range s.Players {
			s.Players[i].Vote, s.Players[i].Locked, s.Players[i].Cleared = 0, false, 0
		}
	case EvRunoffStarted:
		s.Round = Runoff
		s.startRound(e.At, e.Deadline)
		s.Candidates = append([]int(nil), e.Candidates...)
		for i := range s.Players {
			pl := &s.Players[i]
			pl.Locked, pl.Cleared = false, 0
			if !s.isCandidate(pl.Vote) {
				pl.Vote = 0
			}
		}
	case EvVoted:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Vote, p.Locked, p.Cleared = e.Target, false, 0
		if e.Null {
			p.Vote = NullVote
		}
	case EvUnvoted:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Vote, p.Locked, p.Cleared = 0, false, 0
	case EvVoteCleared:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Cleared = e.Target
	case EvLocked, EvUnlocked:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Locked = e.Type == EvLocked
	case EvExtensionAsked:
		s.Asked = append(s.Asked, e.Slot)
	case EvExtended:
		s.MailWaitUntil = time.Time{} // the extended deadline stands (T4)
		if s.Phase == NightPhase {
			s.Night.End = e.Deadline
		} else {
			s.Deadline = e.Deadline
			s.Reminded = false
		}
		s.DeadlineMoves++
		if e.Auto {
			s.RunoffGranted = true
		}
		s.Asked = nil
	case EvDeadlineSet:
		s.MailWaitUntil = time.Time{} // the referee's deadline stands (T4)
		if s.Phase == NightPhase {
			s.Night.End = e.Deadline
		} else {
			s.Deadline = e.Deadline
			s.Reminded = false
		}
		s.DeadlineMoves++
	case EvWeekendClose:
		s.WeekendClose = true
		s.DeadlineMoves++
	case EvTieExtended:
		s.TieExtended = true
		s.DeadlineMoves++
		s.Deadline = e.Deadline
		s.Reminded = false
		// D12: the extension runs its length; only locks made during it
		// can close it early, once a vote has broken the tie.
		for i := range s.Players {
			s.Players[i].Locked = false
		}
	case EvMissedVote:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Missed = e.Count
	case EvRoundClosed:
		// The deaths and the next phase come as events of their own.
		s.DeadlineMoves = 0
	case EvPlayerDied:
		if err := needPlayer(); err != nil {
			return err
		}
		s.kill(e.Slot, Cause(e.Reason))
	case EvNightStarted:
		s.Phase = NightPhase
		s.Day = e.Day
		s.Round = ""
		s.Candidates = nil
		s.Asked = nil
		s.WeekendClose = false
		s.Night = Night{Start: e.At, End: e.Deadline}
		s.MailWaitUntil = time.Time{}
		s.DeadlineMoves = 0
		for i := range s.Players {
			s.Players[i].Vote, s.Players[i].Locked, s.Players[i].Cleared = 0, false, 0
		}
	case EvActionTaken:
		s.foldAction(e)
	case EvDayShot:
		if v := s.Player(e.By); v != nil {
			v.Shots--
			v.LastShotDay = s.Day
		}
	case EvDawn:
		s.foldDawn(e)
	case EvGameEnded:
		s.Phase = EndedPhase
		s.EndedAt = e.At
		s.Winner = e.Winner
		s.Asked = nil
	case EvPaused:
		s.Paused, s.PausedAt = true, e.At
	case EvResumed:
		s.Paused = false
		s.shift(e.Duration)
		s.PausedAt = time.Time{}
	case EvPostHeld:
		s.Held = append(s.Held, HeldPost{ID: e.Held, Slot: e.Slot, Text: e.Text, Reason: e.Reason, Open: true})
	case EvPostRelayed, EvPostRejected:
		for i := range s.Held {
			if s.Held[i].ID == e.Held {
				s.Held[i].Open = false
			}
		}
	case EvPlayerReplaced:
		if err := needPlayer(); err != nil {
			return err
		}
		p.Address, p.Token = e.Address, e.Token
		p.Zone, p.Mail, p.NoCalendar, p.Language = "", "", false, ""
	case EvSuspended:
		// Recorded by the host's registry; the game itself is unchanged.
	case EvDigest:
		s.DigestPending, s.LastDigest = 0, e.At
	case EvReminder:
		if s.Phase == NightPhase {
			s.Night.Reminded = true
		} else {
			s.Reminded = true
		}
	default:
		return fmt.Errorf("unknown event type %q", e.Type)
	}
	if s.DigestEvery() > 0 && Digestible(e) {
		s.DigestPending++
	}
	if Digestible(e) && !s.StartedAt.IsZero() {
		s.ThreadNews++
	}
	if s.Phase == NightPhase && s.Night.AllInAt.IsZero() && s.nightAllIn() {
		s.Night.AllInAt = e.At
	}
	return nil
}

func (s *State) startRound(at, deadline time.Time) {
	s.RoundStart = at
	s.Deadline = deadline
	s.TieExtended = false
	s.RunoffGranted = false
	s.WeekendClose = false
	s.Reminded = false
	s.Asked = nil
	s.MailWaitUntil = time.Time{}
	s.DeadlineMoves = 0
}

func (s *State) isCandidate(slot int) bool {
	for _, c := range s.Candidates {
		if c == slot {
			return true
		}
	}
	return false
}

// kill marks a player dead and takes back every vote on them, so that a vote
// on the dead never counts (D10). By day, each vote taken back is marked
// cleared, so that it counts as cast at the close (D14) and every tally
// from this event on shows it so.
func (s *State) kill(slot int, cause Cause) {
	p := s.Player(slot)
	if p == nil || !p.Alive {
		return
	}
	p.Alive, p.Cause = false, cause
	p.Vote, p.Locked, p.Cleared = 0, false, 0
	for i := range s.Players {
		if v := &s.Players[i]; v.Vote == slot {
			v.Vote, v.Locked = 0, false
			if s.Phase == DayPhase && v.Alive {
				v.Cleared = slot
			}
		}
	}
}

func (s *State) foldAction(e Event) {
	n := &s.Night
	switch e.Verb {
	case CmdKill:
		n.Whack, n.WhackBy, n.NoKill = e.Target, e.By, false
	case CmdNoKill:
		n.Whack, n.WhackBy, n.NoKill = 0, e.By, true
	case CmdInspect:
		n.Inspects = setPair(n.Inspects, e.By, e.Target)
	case CmdProtect:
		n.Protects = setPair(n.Protects, e.By, e.Target)
	case CmdShoot:
		// The latest SHOOT or PASS of each Vigilante stands until the
		// night resolves (N5).
		n.Shots = setPair(n.Shots, e.By, e.Target)
		n.Passes = removeInt(n.Passes, e.By)
	case CmdPass:
		n.Shots = dropPair(n.Shots, e.By)
		if !slices.Contains(n.Passes, e.By) {
			n.Passes = append(n.Passes, e.By)
		}
	}
}

// foldDawn resolves the night into the state (N5, N8): each standing shot
// is charged, each Doctor's saves are spent and the dead die.
func (s *State) foldDawn(e Event) {
	n := s.Night
	// N5: a standing shot is charged as the night resolves, blocked or
	// not; a shot at a player removed before the night resolved hit no
	// one and is not charged.
	for _, sh := range n.Shots {
		if v, tgt := s.Player(sh.By), s.Player(sh.Target); v != nil && tgt != nil && tgt.Alive {
			v.Shots--
			v.LastShotNight = s.Day
		}
	}
	// The dawn says how many kills were blocked, not whose protection
	// blocked them, which would name the Doctors in public: the saves are
	// the night's own resolution, which depends on the state alone. A log
	// whose dawn counts otherwise was resolved by an older rule for one
	// Doctor, whose saves it charged with every block.
	out := s.nightOutcome()
	for i := range s.Players {
		doc := &s.Players[i]
		if doc.Role != Doctor {
			continue
		}
		doc.LastProtected = n.Protection(doc.Slot)
		if doc.Saves == Unlimited {
			continue
		}
		if out.blocked == e.Blocked {
			doc.Saves -= out.used[doc.Slot]
		} else {
			doc.Saves -= e.Blocked
		}
	}
	for _, d := range e.Deaths {
		s.kill(d.Slot, d.Cause)
	}
}

// shift moves every running deadline by d, after a pause.
func (s *State) shift(d time.Duration) {
	if !s.Deadline.IsZero() {
		s.Deadline = s.Deadline.Add(d)
	}
	if !s.RoundStart.IsZero() {
		s.RoundStart = s.RoundStart.Add(d)
	}
	n := &s.Night
	for _, t := range []*time.Time{&n.Start, &n.End, &n.AllInAt} {
		if !t.IsZero() {
			*t = t.Add(d)
		}
	}
}

func removeInt(xs []int, x int) []int {
	var out []int
	for _, v := range xs {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}
