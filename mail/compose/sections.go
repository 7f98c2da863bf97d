package compose

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// section turns one event into the news one reader sees of it, or nil when
// the event carries no news for them. s is the state just after the event.
func (c *Composer) section(e engine.Event, s *engine.State, d delivery) (*templates.Section, error) {
	r := d.r
	now := e.At
	mo := func(t time.Time) templates.Moment { return moment(s, t, now) }
	closes := func() templates.Moment { return closesMoment(s, now) }
	name := func(slot int) string {
		if p := s.Player(slot); p != nil {
			return p.Name
		}
		return ""
	}
	names := func(slots []int) []string {
		var out []string
		for _, sl := range slots {
			out = append(out, name(sl))
		}
		return out
	}
	forRef := r.referee && d.ch != templates.Thread
	l := c.langFor(s, r)
	summary := func(st engine.Setup) string { return st.SummaryIn(l.Count, l.Phrase) }
	sec := &templates.Section{Name: e.Name, Day: e.Day, Round: string(e.Round), At: mo(e.At), Self: r.slot > 0 && r.slot == e.Slot}
	variant := func(player, referee string) string {
		if forRef {
			return referee
		}
		return player
	}
	switch e.Type {
	case engine.EvGameCreated:
		sec.Kind = "created"
		if e.Setup != nil {
			sec.Setup = summary(*e.Setup)
		}
		sec.Address = c.SignupAddress(s.Game)
	case engine.EvSetupChanged:
		sec.Kind = "setup"
		sec.Setup = summary(s.Setup)
		sec.Count, sec.Total = len(s.Players), s.Setup.Players
		sec.Lines = setupLines(s.Setup, l)
	case engine.EvPlayerJoined:
		sec.Kind = "joined"
		sec.Variant = variant("", "referee")
		sec.Count, sec.Total = e.Slot, e.Count
		if forRef {
			sec.Address = e.Address
		}
	case engine.EvPlayerRenamed:
		sec.Kind = "renamed"
		sec.Variant = variant("", "referee")
		sec.Text = e.Text // the name they had
		if forRef {
			if p := s.Player(e.Slot); p != nil {
				sec.Address = p.Address
			}
		}
	case engine.EvObserverAdmitted:
		sec.Kind = "observer"
		sec.Variant = variant("", "referee")
		sec.Address = e.Address
	case engine.EvDrawCommitted:
		sec.Kind = "start"
		sec.Setup = summary(s.Setup)
		sec.Text = e.Commitment
	case engine.EvRolesDrawn:
		sec.Kind = "draw"
		for i, role := range e.Roles {
			n := ""
			if i < len(e.Names) {
				n = e.Names[i]
			}
			sec.Lines = append(sec.Lines, fmt.Sprintf("%s: %s", n, l.Phrase(string(role))))
		}
		sec.Target = name(e.Known)
		sec.Count = s.Setup.Inspectors
		sec.Reason = e.Salt
		sec.Text = e.Commitment
	case engine.EvRoleAssigned:
		if d.ch == templates.Mafia {
			sec.Kind = "mafialist"
			sec.Names = otherMafiosi(s, e.Slot)
			break
		}
		sec.Kind = "role"
		sec.Role = c.roleInfo(e, s, l)
	case engine.EvDayStarted, engine.EvExtraStarted:
		sec.Kind = "day"
		if e.Type == engine.EvExtraStarted {
			sec.Variant = "extra"
		}
		sec.When = closes()
	case engine.EvRunoffStarted:
		sec.Kind = "runoff"
		sec.Names = names(e.Candidates)
		sec.Day = s.Day
		sec.When = closes()
	case engine.EvVoted, engine.EvUnvoted, engine.EvLocked, engine.EvUnlocked:
		sec.Kind = "vote"
		switch {
		case e.Type == engine.EvUnvoted:
			sec.Variant = "unvote"
		case e.Type == engine.EvLocked:
			sec.Variant = "lock"
		case e.Type == engine.EvUnlocked:
			sec.Variant = "unlock"
		case e.Null:
			sec.Variant = "null"
		}
		sec.Target = name(e.Target)
	case engine.EvExtensionAsked:
		sec.Kind = "extension"
		sec.Variant = variant("asked", "referee-asked")
		sec.Day = s.Day
		sec.When = closes()
	case engine.EvExtensionDenied:
		sec.Kind = "extension"
		sec.Variant = variant("denied", "referee-denied")
		sec.When = closes()
	case engine.EvExtended, engine.EvDeadlineSet, engine.EvTieExtended, engine.EvWeekendClose:
		sec.Kind = "deadline"
		sec.Span = templates.SpanOf(e.Duration)
		night := s.Phase == engine.NightPhase
		if night {
			sec.When = mo(s.Night.End)
		} else {
			sec.When = closes()
		}
		switch {
		case e.Type == engine.EvWeekendClose:
			sec.Variant = "weekend"
		case e.Type == engine.EvTieExtended:
			sec.Variant = "tie"
			sec.Names = names(e.Candidates)
		case e.Type == engine.EvDeadlineSet && night:
			sec.Variant = "set-night"
		case e.Type == engine.EvDeadlineSet:
			sec.Variant = "set"
		case night:
			sec.Variant = "night"
		case e.Auto:
			sec.Variant = "auto"
		case e.Verb == engine.CmdGrant:
			sec.Variant = "grant"
		default:
			sec.Variant = "extend"
		}
	case engine.EvMailWait, engine.EvMailFlowed:
		// T4: the close waits for mail the sending limit holds back.
		sec.Kind = "deadline"
		sec.Variant = "wait"
		if e.Type == engine.EvMailFlowed {
			sec.Variant = "flowed"
		}
		if s.Phase == engine.NightPhase {
			sec.Variant += "-night"
		}
		sec.When = mo(e.Deadline)
	case engine.EvMailPlan:
		// T3: the thread is gathered to fit the sending budget.
		sec.Kind = "mailplan"
		sec.Variant = "off"
		switch {
		case e.Duration > 0:
			sec.Variant = "on"
			sec.Span = templates.SpanOf(s.DigestEvery())
		case s.Setup.DigestInterval > 0:
			sec.Span = templates.SpanOf(s.Setup.DigestInterval)
		}
	case engine.EvVoteCleared:
		// D14: to the voter alone, at once.
		sec.Kind = "cleared"
		sec.Target = name(e.Target)
		sec.Variant = e.Reason
	case engine.EvMissedVote:
		sec.Kind = "missed"
		sec.Missed = []templates.Missed{{Name: e.Name, Count: e.Count}}
	case engine.EvRoundClosed:
		sec.Kind = "close"
		sec.Variant = string(e.Outcome)
		sec.Target = name(e.Target)
		sec.Count = e.Count
		if e.Outcome == engine.Void {
			sec.Names = names(e.Slots)
		} else {
			sec.Names = names(e.Candidates)
		}
		if e.Tally != nil {
			sec.Tally = tallyView(e.Tally, s, true, now, l)
		}
	case engine.EvPlayerDied:
		sec.Kind = "death"
		sec.Variant = e.Reason
	case engine.EvNightStarted:
		sec.Kind = "night"
		sec.When = mo(e.Deadline)
		sec.Span = templates.SpanOf(s.Setup.NightStep)
	case engine.EvActionTaken, engine.EvDayShot:
		c.actionSection(sec, e, s, d)
	case engine.EvInspection:
		sec.Kind = "inspection"
		sec.Variant = variant("", "referee")
		sec.By = e.Name
		sec.Target = name(e.Target)
		sec.Text = resultWords(l, e.Result, sec.Target)
		// The night is the event's own: a reply that shows it (the
		// referee's CLOSE) is composed with the state after the next day
		// began. Events logged before the night was recorded in them
		// have none, and were composed with the night's own state.
		if sec.Day == 0 {
			sec.Day = s.Day
		}
	case engine.EvDawn:
		sec.Kind = "dawn"
		for _, dth := range e.Deaths {
			sec.Deaths = append(sec.Deaths, templates.Death{Name: dth.Name, Cause: l.Phrase(causeAtDawn(dth.Cause, s.Setup.Vigilantes > 1))})
			if r.slot > 0 && dth.Slot == r.slot {
				sec.Self = true
			}
		}
		sec.Blocked = e.Blocked
	case engine.EvGameEnded:
		sec.Kind = "end"
		sec.End = endView(e, s, l)
	case engine.EvPaused:
		sec.Kind = "pause"
	case engine.EvResumed:
		// Every deadline moved by the pause (the engine's shift): the mail
		// says by how much and when the round or night now ends, as the
		// engine decides it (a moved close can fall in the weekend).
		sec.Kind = "pause"
		sec.Variant = "resumed"
		sec.Span = templates.SpanOf(e.Duration)
		switch s.Phase {
		case engine.DayPhase:
			sec.When = closes()
		case engine.NightPhase:
			sec.Variant = "resumed-night"
			sec.When = mo(s.Night.End)
		}
	case engine.EvAnnouncement:
		sec.Kind = "announce"
		sec.Text = e.Text
	case engine.EvThreadPost, engine.EvPostGameTalk:
		sec.Kind = "post"
		sec.Text = e.Text
		if e.Slot == 0 {
			sec.Variant = "referee"
		}
	case engine.EvPostRelayed:
		sec.Kind = "post"
		sec.Variant = "relayed"
		sec.Text = e.Text
		sec.Held = e.Held
	case engine.EvMafiaPost:
		sec.Kind = "mafia"
		sec.Text = e.Text
	case engine.EvPrivateNote:
		sec.Kind = "note"
		sec.Text = e.Text
	case engine.EvSubstituted:
		sec.Kind = "substitute"
		sec.Self = false // the substitute learns of it in their role message
	case engine.EvPostHeld:
		sec.Kind = "held"
		sec.Variant = variant("", "referee")
		sec.Held, sec.Reason = e.Held, l.Phrase(e.Reason)
		sec.Text = e.Text
	case engine.EvPostRejected:
		sec.Kind = "held"
		sec.Variant = variant("rejected", "referee-rejected")
		sec.Held, sec.Reason = e.Held, l.Phrase(e.Reason)
	case engine.EvPlayerReplaced:
		sec.Kind = "replaced"
		sec.Variant = variant("", "referee")
		sec.Address = e.Address
		sec.Text = e.Text
		sec.Self = false
	case engine.EvSuspended:
		sec.Kind = "suspended"
		sec.Address = e.Address
		sec.Reason = e.Reason
		if e.Reason == fmt.Sprintf("suspended by the referee of game %s", s.Game) {
			sec.Reason = l.Sprintf("suspended by the referee of game %s", s.Game)
		}
	case engine.EvReminder:
		sec.Kind = "reminder"
		sec.Day = s.Day
		if s.Phase == engine.NightPhase {
			sec.Variant = "night"
			sec.When = mo(s.Night.End)
			if p := s.Player(r.slot); p != nil {
				for _, cmd := range templates.RoleCommands(string(p.Role)) {
					sec.Lines = append(sec.Lines, cmd.Syntax)
				}
			}
		} else {
			sec.When = closes()
		}
	case engine.EvTallyShown:
		if e.Tally == nil {
			return nil, fmt.Errorf("compose: %s event without a tally", e.Type)
		}
		sec.Kind = "tally"
		sec.Tally = tallyView(e.Tally, s, false, now, l)
	case engine.EvStatusShown:
		if e.Status == nil {
			return nil, fmt.Errorf("compose: %s event without a status", e.Type)
		}
		sec.Kind = "status"
		sec.Status = statusView(e.Status, s, now, forRef, l)
		if forRef && c.sending != nil {
			if ss, ok := c.sending(s.Game); ok {
				sec.Status.Sending = sendingView(ss, s, now, l)
			}
		}
	case engine.EvCalendarSet, engine.EvCalendarShown:
		sec.Kind = "calendar"
		sec.Variant = "set"
		if e.Type == engine.EvCalendarShown {
			sec.Variant = "shown"
		}
		sec.Text = e.Text
	case engine.EvMailSet, engine.EvMailShown:
		sec.Kind = "mailmode"
		sec.Variant = "set"
		if e.Type == engine.EvMailShown {
			sec.Variant = "shown"
		}
		sec.Text = e.Text
		every := s.DigestEvery()
		if every == 0 {
			every = engine.DefaultDigestInterval
		}
		sec.Span = templates.SpanOf(every)
		if s.MailPlan > 0 {
			// The choice is kept, and counts once the plan ends (T3).
			sec.Reason = "plan"
		}
	case engine.EvLanguageSet, engine.EvLanguageShown:
		sec.Kind = "language"
		sec.Variant = "set"
		if e.Type == engine.EvLanguageShown {
			sec.Variant = "shown"
		}
		// The answer is in the language now in force: the copy's own.
		sec.Name = l.Phrase(l.EnglishName())
		sec.Reason = l.Phrase(lang.Get(s.GameLanguage()).EnglishName())
		for _, o := range lang.All() {
			sec.Lines = append(sec.Lines, o.Tag+" ("+o.Name+")")
		}
	case engine.EvZoneSet, engine.EvZoneShown:
		sec.Kind = "zone"
		sec.Variant = "set"
		if e.Type == engine.EvZoneShown {
			sec.Variant = "shown"
		}
		sec.Text = e.Text
		sec.Reason = gameZone(s).String()
	case engine.EvHelpShown:
		if e.Text == engine.HelpRules {
			sec.Kind = "rules"
			sec.Text = playersRules(l)
			sec.Setup = summary(s.Setup)
			break
		}
		sec.Kind = "help"
		sec.Help = helpView(e, s, r)
		sec.Help.Verbs = localVerbs(l, sec.Help.Thread, sec.Help.Commands)
	default:
		return nil, fmt.Errorf("compose: no message for event type %q", e.Type)
	}
	return sec, nil
}

// actionSection is a night action or a day shot, as its actor, a fellow
// Mafioso or the referee sees it.
func (c *Composer) actionSection(sec *templates.Section, e engine.Event, s *engine.State, d delivery) {
	sec.Kind = "action"
	sec.By = e.Name
	if p := s.Player(e.Target); p != nil {
		sec.Target = p.Name
	}
	sec.Reason = string(e.Verb)
	sec.Day = e.Day
	actor := d.r.slot > 0 && d.r.slot == e.By
	sec.Self = actor
	if v := s.Player(e.By); v != nil {
		sec.Count = v.Shots
	}
	if e.Type == engine.EvDayShot {
		sec.Reason = string(engine.CmdShoot)
		switch {
		case d.r.referee:
			sec.Variant = "referee-dayshot"
		default:
			sec.Variant = "dayshot"
		}
		return
	}
	if s.Phase == engine.NightPhase {
		sec.When = moment(s, s.Night.End, e.At)
	}
	switch {
	case d.r.referee:
		sec.Variant = "referee"
	case actor:
	default:
		sec.Variant = "echo"
	}
}

// closesMoment is when the running round will really close, with the
// deadline the weekend rule held, if it did (D7), so that the mail can say
// why.
func closesMoment(s *engine.State, now time.Time) templates.Moment {
	m := moment(s, roundCloses(s), now)
	if s.Phase == engine.DayPhase && !s.Deadline.IsZero() && !s.Deadline.Equal(m.T) && m.T.After(s.Deadline) && !s.Paused {
		m.Held = s.Deadline
		if zone, on := s.Setup.WeekendWindow(); on {
			m.Weekend = engine.ZonePlace(zone)
		}
	}
	return m
}

// roundCloses is when the running round will really close (D7, D9): the
// engine's ClosesAt decides it, for every announcement alike.
func roundCloses(s *engine.State) time.Time {
	if s.Phase != engine.DayPhase {
		return s.Deadline
	}
	return s.ClosesAt()
}

// causeAtDawn says how a player died in the night, without a role (N9).
// In a game with several Vigilantes a shot is "a Vigilante's": the dawn
// does not say whose, and two deaths "by the Vigilante" would read as two
// shots of one.
func causeAtDawn(c engine.Cause, severalVigilantes bool) string {
	switch {
	case c == engine.ByMafia:
		return lang.Key("was killed by the Mafia")
	case c == engine.ByVigilante && severalVigilantes:
		return lang.Key("was shot by a Vigilante")
	case c == engine.ByVigilante:
		return lang.Key("was shot by the Vigilante")
	case c == engine.ByMafiaAndVig && severalVigilantes:
		return lang.Key("was killed by the Mafia and shot by a Vigilante")
	case c == engine.ByMafiaAndVig:
		return lang.Key("was killed by the Mafia and shot by the Vigilante")
	}
	return lang.Key("died")
}

// CauseWords says how a player left the game, for lists of players.
func CauseWords(c engine.Cause) string {
	switch c {
	case engine.ByVote:
		return lang.Key("eliminated by vote")
	case engine.ByMissedVotes:
		return lang.Key("removed for two missed votes")
	case engine.ByMafia:
		return lang.Key("killed by the Mafia")
	case engine.ByVigilante, engine.ByVigilanteDay:
		return lang.Key("shot by the Vigilante")
	case engine.ByMafiaAndVig:
		return lang.Key("killed by the Mafia and the Vigilante")
	case engine.ByModkill:
		return lang.Key("removed by the referee")
	case "":
		return lang.Key("dead")
	}
	return lang.Key("dead (") + string(c) + ")"
}

// roleInfo is the content of a role message (S3).
func (c *Composer) roleInfo(e engine.Event, s *engine.State, l *lang.Language) *templates.RoleInfo {
	st := s.Setup
	ri := &templates.RoleInfo{
		Marker:     engine.SecretMarkerIn(l.Tag, s.Game),
		Role:       string(e.Role),
		Side:       string(engine.SideOf(e.Role)),
		ExactRole:  st.InspectorResult == engine.ExactRole,
		Saves:      st.DoctorSaves,
		Shots:      st.VigilanteShots,
		Doctors:    st.Doctors,
		Vigilantes: st.Vigilantes,
		Setup:      st.SummaryIn(l.Count, l.Phrase),
		DayLength:  templates.SpanOf(st.DayLength),
		Runoff:     templates.SpanOf(st.RunoffLength),
		Night:      templates.SpanOf(st.NightLength),
		NightStep:  templates.SpanOf(st.NightStep),
		Commands:   templates.RoleCommands(string(e.Role)),
	}
	if p := s.Player(e.Slot); p != nil {
		if p.Role == engine.Doctor {
			ri.Saves = p.Saves
		}
		if p.Role == engine.Vigilante {
			ri.Shots = p.Shots
		}
	}
	for _, m := range e.Mafiosi {
		if p := s.Player(m); p != nil {
			ri.Fellows = append(ri.Fellows, p.Name)
		}
	}
	if p := s.Player(e.Known); p != nil {
		ri.Known = p.Name
	}
	// The role messages of the start come before Day 1 opens; one in a
	// running game is a substitute's (S4).
	ri.Substitute = s.Phase != engine.SignupPhase
	return ri
}

// tallyView turns the engine's tally into the view the templates show.
func tallyView(t *engine.Tally, s *engine.State, final bool, now time.Time, l *lang.Language) *templates.Tally {
	v := &templates.Tally{
		Day: t.Day, Round: string(t.Round), Final: final,
		At:         moment(s, t.At, now),
		Closes:     moment(s, t.Deadline, now),
		Candidates: t.Candidates,
		Notes:      t.Notes,
		Living:     len(t.Votes),
		Paused:     s.Paused && !final,
	}
	if len(t.NotePhrases) == len(t.Notes) {
		v.Notes = nil
		for _, p := range t.NotePhrases {
			v.Notes = append(v.Notes, p.Sprint(l.Phrase))
		}
	}
	if !final {
		v.ToLock, v.LastThree = t.ToLock, t.LastThree
	}
	locked := map[string]bool{}
	for _, tv := range t.Votes {
		vote := templates.Vote{Name: tv.Name, Target: tv.Target, Null: tv.Null, Locked: tv.Locked, Cleared: tv.Cleared}
		v.Votes = append(v.Votes, vote)
		if tv.Target == "" && tv.Cleared == "" && !tv.Null {
			v.NotVoted = append(v.NotVoted, vote)
		}
		locked[tv.Name] = tv.Locked
	}
	for _, tc := range t.Counts {
		cnt := templates.Count{Name: tc.Name, Votes: tc.Votes}
		for _, voter := range tc.Voters {
			cnt.Voters = append(cnt.Voters, templates.Vote{Name: voter, Target: tc.Name, Locked: locked[voter]})
		}
		v.Counts = append(v.Counts, cnt)
	}
	return v
}

func statusView(st *engine.Status, s *engine.State, now time.Time, referee bool, l *lang.Language) *templates.Status {
	v := &templates.Status{
		Referee: referee, Phase: string(st.Phase), Day: st.Day, Round: string(st.Round),
		Closes: moment(s, st.Deadline, now), Paused: st.Paused, Setup: s.Setup.SummaryIn(l.Count, l.Phrase),
		Fellows: st.Mafiosi, Actions: st.Actions, Held: st.HeldPosts,
	}
	for _, pl := range st.Players {
		sp := templates.StatusPlayer{
			Name: pl.Name, Role: string(pl.Role), Alive: pl.Alive, Cause: CauseWords(pl.Cause),
			Missed: pl.Missed, Vote: pl.Vote, Locked: pl.Locked, Shots: pl.Shots, Last: pl.LastProtected,
			Doctor: pl.Role == engine.Doctor, Vig: pl.Role == engine.Vigilante,
		}
		if sp.Doctor {
			sp.Saves = fmt.Sprint(pl.Saves)
			if pl.Saves == engine.Unlimited {
				sp.Saves = l.Phrase("unlimited")
			}
		}
		v.Players = append(v.Players, sp)
	}
	return v
}

func helpView(e engine.Event, s *engine.State, r recipient) *templates.Help {
	h := &templates.Help{Role: string(e.Role), Talk: templates.SpanOf(s.Setup.TalkAfterEnd())}
	switch {
	case r.referee:
		h.Referee = true
		h.Commands = templates.RefereeCommands
	case r.observer:
		h.Observer = true
		h.Commands = templates.ObserverCommands
	case r.slot > 0 && s.Player(r.slot) != nil && !s.Player(r.slot).Alive:
		// The dead neither vote nor act: only what they can still ask for.
		h.Dead = true
		h.Commands = templates.DeadCommands
	case r.slot > 0:
		h.Thread = templates.ThreadCommands
		h.Commands = templates.PrivateCommands(string(e.Role))
		if s.Phase == engine.SignupPhase {
			h.Commands = append([]templates.Command{templates.RenameCommand}, h.Commands...)
		}
	default:
		h.Outsider = true
		h.Commands = templates.SignupCommands
	}
	return h
}

// endView is the game's end (W2): every seat with its role, and the draw's
// proof, checked here before it is published.
func endView(e engine.Event, s *engine.State, l *lang.Language) *templates.End {
	v := &templates.End{Winner: string(e.Winner), Reason: l.Phrase(e.Reason), Commitment: e.Commitment, Salt: e.Salt}
	for i, n := range e.Names {
		seat := templates.Seat{Name: n}
		if i < len(e.Roles) {
			seat.Role = string(e.Roles[i])
		}
		if p := s.Player(i + 1); p != nil {
			seat.Alive = p.Alive
			seat.Cause = CauseWords(p.Cause)
		}
		v.Seats = append(v.Seats, seat)
	}
	if len(e.Roles) == 0 {
		v.Seats = nil
	}
	if e.Salt != "" && len(e.Roles) > 0 {
		v.DrawText = strings.TrimRight(engine.DrawText(s.Game, e.Names, e.Roles, e.Salt), "\n")
		v.Verified = engine.VerifyDraw(e.Commitment, s.Game, e.Names, e.Roles, e.Salt)
	}
	return v
}

// setupLines are the settings that shape a game, in words: what a player
// needs to know before the start.
func setupLines(st engine.Setup, l *lang.Language) []string {
	span := func(d time.Duration) string { return templates.Span{D: d, Lang: l.Tag}.String() }
	lines := []string{
		l.Sprintf("A day's vote lasts %s; a runoff %s, an extra round %s; a tied close is extended by %s.",
			span(st.DayLength), span(st.RunoffLength), span(st.ExtraLength), span(st.TieExtension)),
		l.Sprintf("A night ends at the first %s mark once every action is in, after %s at the latest.",
			span(st.NightStep), span(st.NightLength)),
	}
	if st.Inspectors > 0 {
		switch {
		case st.InspectorResult == engine.ExactRole && st.InspectorKnowsMafioso:
			lines = append(lines, l.Phrase("An inspection tells a player's exact role. The Inspector starts knowing one Mafioso."))
		case st.InspectorResult == engine.ExactRole:
			lines = append(lines, l.Phrase("An inspection tells a player's exact role."))
		case st.InspectorKnowsMafioso:
			lines = append(lines, l.Phrase("An inspection tells whether a player is Mafia. The Inspector starts knowing one Mafioso."))
		default:
			lines = append(lines, l.Phrase("An inspection tells whether a player is Mafia."))
		}
	}
	if st.Vigilantes > 0 {
		lines = append(lines, l.Count(st.VigilanteShots, "A Vigilante has %d shot.", "A Vigilante has %d shots."))
	}
	if st.Doctors > 0 {
		if st.DoctorSaves == engine.Unlimited {
			lines = append(lines, l.Phrase("A Doctor's saves are unlimited."))
		} else {
			lines = append(lines, l.Count(st.DoctorSaves, "A Doctor has %d save.", "A Doctor has %d saves."))
		}
	}
	if st.ReminderBefore > 0 {
		lines = append(lines, l.Sprintf("Reminders go out %s before a round closes or a night's last mark.", span(st.ReminderBefore)))
	} else {
		lines = append(lines, l.Phrase("No reminders go out before a deadline."))
	}
	if st.DigestInterval > 0 {
		lines = append(lines, l.Sprintf("The town thread comes as a digest every %s.", span(st.DigestInterval)))
	} else {
		lines = append(lines, l.Phrase("The town thread relays every post as it comes."))
	}
	if st.Zone != "" {
		lines = append(lines, l.Sprintf("Times are shown in %s time.", st.Zone))
	}
	// D7: the weekend window in force.
	if zone, on := st.WeekendWindow(); on {
		lines = append(lines, l.Sprintf("No day round closes from Friday 17:00 to Monday 07:00 %s.", engine.PlaceTime(zone, l.Phrase)))
	} else {
		lines = append(lines, l.Phrase("Day rounds close on weekends too."))
	}
	return lines
}

// playersRules is the rules as players read them, in the language: its
// rules.md (lang/en/rules.md in English), or English's where it has none.
func playersRules(l *lang.Language) string {
	if r := l.Rules(); r != "" {
		return r
	}
	return lang.Get(lang.Default).Rules()
}

func sendingView(ss SendingStatus, s *engine.State, now time.Time, l *lang.Language) *templates.Sending {
	v := &templates.Sending{Used: ss.Used, Limit: ss.Limit, Held: !ss.HeldSince.IsZero(), HeldSince: moment(s, ss.HeldSince, now)}
	kinds := make([]string, 0, len(ss.Waiting))
	for k, n := range ss.Waiting {
		kinds = append(kinds, k)
		v.Waiting += n
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		word := kindWords[k]
		if word == "" {
			word = k
		}
		parts[i] = fmt.Sprintf("%d %s", ss.Waiting[k], l.Phrase(word))
	}
	v.ByKind = strings.Join(parts, ", ")
	if !ss.Forecast.IsZero() {
		m := moment(s, ss.Forecast, now)
		v.Forecast = &m
	}
	if f := ss.Round; f != nil {
		v.Plan = planView(*f, ss, s, now, l)
	}
	return v
}

// planView shows a round's forecast against the sending budget.
func planView(f RoundForecast, ss SendingStatus, s *engine.State, now time.Time, l *lang.Language) *templates.SendingPlan {
	return &templates.SendingPlan{Round: roundWords(l, f.Round), Closes: moment(s, f.Closes, now), Every: templates.SpanOf(f.Every),
		AsChosen: f.AsChosen, Planned: f.Planned, Room: f.Room, Limit: ss.Limit, Used: ss.Used}
}

// kindWords name the kinds of mail in the referee's STATUS.
var kindWords = map[string]string{KindRole: lang.Key("role mails"), KindThread: lang.Key("thread mails"), KindTally: lang.Key("tallies"),
	KindDawn: lang.Key("dawn reports"), KindConfirm: lang.Key("receipts"), KindError: lang.Key("answers to refused commands"), KindMafia: lang.Key("mafia mails"),
	KindReferee: lang.Key("mails to referees"), KindEnd: lang.Key("end mails"), KindPrivate: lang.Key("private mails")}

// resultWords is an inspection's answer in the language. The engine words
// it in English, from one of three formats that begin with the player's
// name; the answer is read back from them.
func resultWords(l *lang.Language, result, target string) string {
	rest, ok := strings.CutPrefix(result, target+" is ")
	if !ok || target == "" {
		return result
	}
	switch rest {
	case "Mafia":
		return l.Sprintf("%s is Mafia", target)
	case "not Mafia":
		return l.Sprintf("%s is not Mafia", target)
	}
	return l.Sprintf("%s is %s", target, l.Phrase(rest))
}

// roundWords is a round's name as the host keeps it with a sending plan
// ("Day 2", "Night 2"), in the language.
func roundWords(l *lang.Language, round string) string {
	var n int
	if _, err := fmt.Sscanf(round, "Day %d", &n); err == nil {
		return l.Sprintf("Day %d", n)
	}
	if _, err := fmt.Sscanf(round, "Night %d", &n); err == nil {
		return l.Sprintf("Night %d", n)
	}
	return round
}

// localVerbs lists the language's own words for the verbs of cmds, as
// "STIMME FÜR = VOTE", in the order of the commands: the shortest of a
// verb's phrases, the one a player types.
func localVerbs(l *lang.Language, cmds ...[]templates.Command) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range cmds {
		for _, c := range list {
			fields := strings.Fields(c.Syntax)
			for n := min(2, len(fields)); n >= 1; n-- {
				verb := strings.Join(fields[:n], " ")
				if verb != strings.ToUpper(verb) || seen[verb] {
					continue
				}
				best := ""
				for _, v := range l.Verbs() {
					if v[1] == verb && (best == "" || len([]rune(v[0])) < len([]rune(best))) {
						best = v[0]
					}
				}
				if best != "" {
					seen[verb] = true
					out = append(out, best+" = "+verb)
					break
				}
			}
		}
	}
	return out
}
