package engine

import (
	"sort"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// vote handles VOTE, UNVOTE, LOCK and UNLOCK (D1–D4).
func (t *step) vote(c Command) error {
	s := t.s
	p := s.Player(c.By.Slot)
	if s.Phase != DayPhase {
		return refuse(WrongPhase, "there is no vote running; voting opens with the day")
	}
	if !p.Alive {
		return refuse(Dead, "only living players vote")
	}
	if c.Channel != Thread {
		return refuse(NotAllowed, "votes are public: send %s to the thread address", c.Verb)
	}
	switch c.Verb {
	case CmdVote:
		if c.Voter != "" {
			if NormalizeName(c.Voter) != NormalizeName(p.Name) {
				return refuse(NotYourName, "you can only vote as yourself (%s), not as %q", p.Name, c.Voter)
			}
		}
		if NormalizeName(c.Target) == "null" {
			if p.Vote == NullVote {
				return nil
			}
			t.emit(Event{Type: EvVoted, To: toAll, Slot: p.Slot, Name: p.Name, Null: true})
			return nil
		}
		target, r := s.resolve(c.Target, s.Living())
		if r != nil && r.Reason == Dead && s.Round == Runoff {
			// In a runoff only the tied players can be voted for (D11).
			r = s.deadTarget(NormalizeName(c.Target), s.Living(), s.Candidates, phrase.Errorf("in the runoff you can vote only for"))
		}
		if r != nil {
			return r
		}
		if s.Round == Runoff && !s.isCandidate(target) {
			r := refuse(BadTarget, "in the runoff you can vote only for the tied players")
			for _, c := range s.Candidates {
				r.Candidates = append(r.Candidates, s.name(c))
			}
			return r
		}
		if p.Vote == target {
			return nil // the same vote again: it stands as it was, lock and all
		}
		t.emit(Event{Type: EvVoted, To: toAll, Slot: p.Slot, Name: p.Name, Target: target})
	case CmdUnvote:
		if p.Vote == 0 {
			return refuse(NotAllowed, "you have no vote to withdraw")
		}
		t.emit(Event{Type: EvUnvoted, To: toAll, Slot: p.Slot, Name: p.Name})
	case CmdLock:
		if p.Vote <= 0 {
			return refuse(NotAllowed, "vote for a player before you lock: a null vote cannot be locked")
		}
		if p.Locked {
			return nil
		}
		t.emit(Event{Type: EvLocked, To: toAll, Slot: p.Slot, Name: p.Name, Target: p.Vote})
	case CmdUnlock:
		if !p.Locked {
			return refuse(NotAllowed, "your vote is not locked")
		}
		t.emit(Event{Type: EvUnlocked, To: toAll, Slot: p.Slot, Name: p.Name})
	}
	return nil
}

// askExtension is a player's EXTEND (D9): to the referee, except the first
// request of a runoff, which is granted at once by 12 hours.
func (t *step) askExtension(c Command) error {
	s := t.s
	p := s.Player(c.By.Slot)
	if s.Phase != DayPhase {
		return refuse(WrongPhase, "extensions are for voting rounds; ask the referee privately about the night")
	}
	if !p.Alive {
		return refuse(Dead, "only living players ask for extensions")
	}
	if s.Round == Runoff && !s.RunoffGranted {
		d := 12 * time.Hour
		t.emit(Event{Type: EvExtended, To: toAll, Slot: p.Slot, Name: p.Name, Auto: true,
			Duration: d, Deadline: s.extendedDeadline(d)})
		return nil
	}
	for _, a := range s.Asked {
		if a == p.Slot {
			return refuse(Duplicate, "your extension request is already with the referee")
		}
	}
	t.emit(Event{Type: EvExtensionAsked, To: toPlayerRef(p.Slot), Slot: p.Slot, Name: p.Name})
	return nil
}

// extendedDeadline is the deadline after an extension by d (D9): d added to
// the time the round would really close (ClosesAt), so that an extension of
// a round held over the weekend gives its full length after Monday 07:00.
func (s *State) extendedDeadline(d time.Duration) time.Time {
	return s.ClosesAt().Add(d).UTC()
}

// tick applies what the clock has made due.
func (t *step) tick() {
	s := t.s
	if s.Paused {
		return
	}
	if s.digestDue(t.now) {
		t.digest()
	}
	switch s.Phase {
	case DayPhase:
		switch {
		case !t.now.Before(s.closeAt()):
			t.closeRound()
		case s.earlyCloseDue() && s.weekendAllows(t.now):
			t.closeRound() // D5, held through a weekend unless D7 allows it
		case s.Setup.ReminderBefore > 0 && !s.Reminded && !t.now.Before(s.closeAt().Add(-s.Setup.ReminderBefore)):
			t.remind(s.owingVote())
		}
	case NightPhase:
		switch {
		case !t.now.Before(s.nightEndsAt()):
			t.resolveNight()
		case s.Setup.ReminderBefore > 0 && !s.Night.Reminded && !t.now.Before(s.Night.End.Add(-s.Setup.ReminderBefore)):
			t.remind(s.owingAction())
		}
	}
}

// remind sends each player who owes a vote or an action a private reminder.
// A round with no one to remind records a reminder to no one, so that the
// clock moves on.
func (t *step) remind(slots []int) {
	if len(slots) == 0 {
		t.emit(Event{Type: EvReminder})
		return
	}
	for _, slot := range slots {
		t.emit(Event{Type: EvReminder, To: toPlayer(slot), Slot: slot, Name: t.s.name(slot)})
	}
}

// missingVote lists the players charged a missed vote if the round closed
// now (D14): those without a non-null vote, except those whose vote was
// cleared by its target's death in this round and who have not voted since.
func (s *State) missingVote() []int {
	var out []int
	for _, slot := range s.owingVote() {
		if s.Player(slot).Cleared == 0 {
			out = append(out, slot)
		}
	}
	return out
}

// owingVote lists the living players without a non-null vote: those a
// reminder goes to.
func (s *State) owingVote() []int {
	var out []int
	for _, p := range s.Players {
		if p.Alive && p.Vote <= 0 {
			out = append(out, p.Slot)
		}
	}
	return out
}

// votesOn counts the non-null votes of living players on each living player.
func (s *State) votesOn() map[int][]int {
	on := map[int][]int{}
	for _, p := range s.Players {
		if p.Alive && p.Vote > 0 && s.Player(p.Vote).Alive {
			on[p.Vote] = append(on[p.Vote], p.Slot)
		}
	}
	return on
}

// earlyCloseReady is D5: every living player with no votes on them has a
// locked vote (and at least one vote is locked); with three players left,
// two must have locked on the same player.
func (s *State) earlyCloseReady() bool {
	living := s.Living()
	if len(living) == 3 {
		locked := map[int]int{}
		for _, slot := range living {
			if p := s.Player(slot); p.Locked && p.Vote > 0 {
				locked[p.Vote]++
				if locked[p.Vote] >= 2 {
					return true
				}
			}
		}
		return false
	}
	on := s.votesOn()
	anyLocked := false
	for _, slot := range living {
		p := s.Player(slot)
		if p.Locked {
			anyLocked = true
		}
		if len(on[slot]) == 0 && !p.Locked {
			return false
		}
	}
	return anyLocked
}

// earlyCloseDue is D5 as it applies now: the round is ready to close early,
// and it is not a tie extension whose tie still stands (D12). The locks that
// made a tied runoff ready were reset when it was extended, so the
// extension runs its length unless a vote breaks the tie and the round is
// ready again.
func (s *State) earlyCloseDue() bool {
	if !s.earlyCloseReady() {
		return false
	}
	return !(s.TieExtended && s.tiedAmongCandidates())
}

// tiedAmongCandidates reports whether the runoff is tied among all the
// players it is held between: the tie of D12 that "cannot be broken".
func (s *State) tiedAmongCandidates() bool {
	top, best := s.leaders()
	return s.Round == Runoff && best > 0 && len(top) > 1 && len(top) == len(s.Candidates)
}

// leaders returns the players with the most votes and that count.
func (s *State) leaders() ([]int, int) {
	on := s.votesOn()
	best := 0
	var top []int
	for slot, voters := range on {
		switch n := len(voters); {
		case n > best:
			best, top = n, []int{slot}
		case n == best:
			top = append(top, slot)
		}
	}
	sort.Ints(top)
	return top, best
}

// closeRound closes the running round (D10–D14).
func (t *step) closeRound() {
	s := t.s
	t.digest() // the thread's news goes out before the close
	top, best := s.leaders()
	tied := best > 0 && len(top) > 1
	// D12: a runoff that closes tied among all its candidates goes on once,
	// for the tie extension; the round has not closed yet, so no vote is
	// missed. A runoff tied among fewer narrows into a new runoff below.
	narrows := tied && s.Round == Runoff && len(top) < len(s.Candidates)
	if tied && s.Round == Runoff && !narrows && !s.TieExtended {
		t.emit(Event{Type: EvTieExtended, To: toAll, Candidates: top, Duration: s.Setup.TieExtension,
			Deadline: dayDeadline(t.now, s.Setup.TieExtension)})
		return
	}
	tally := s.Tally(t.now)
	// D14: everyone without a non-null vote misses one; two and they are out.
	var removed []int
	for _, slot := range s.missingVote() {
		p := s.Player(slot)
		t.emit(Event{Type: EvMissedVote, To: toAll, Slot: slot, Name: p.Name, Count: p.Missed + 1})
		if p.Missed >= 2 {
			removed = append(removed, slot)
		}
	}
	closed := Event{Type: EvRoundClosed, To: toAll, Day: s.Day, Round: s.Round, Tally: tally, Candidates: top, Count: best}
	switch {
	case len(removed) > 0:
		closed.Outcome, closed.Slots = Void, removed
		t.emit(closed)
		for _, slot := range removed {
			p := s.Player(slot)
			t.emit(Event{Type: EvPlayerDied, To: toAll, Slot: slot, Name: p.Name, Reason: string(ByMissedVotes)})
			t.emit(Event{Type: EvSuspended, To: toReferee, Slot: slot, Name: p.Name, Address: p.Address,
				Reason: "removed from game " + s.Game + " for two missed votes"})
		}
	case best == 0:
		closed.Outcome = NoVotes
		t.emit(closed)
	case !tied:
		closed.Outcome, closed.Target = Eliminated, top[0]
		t.emit(closed)
		t.emit(Event{Type: EvPlayerDied, To: toAll, Slot: top[0], Name: s.name(top[0]), Reason: string(ByVote)})
	case s.Round != Runoff || narrows:
		// D11, and D12's narrowing: a new runoff among the tied players.
		closed.Outcome = ToRunoff
		t.emit(closed)
		t.emit(Event{Type: EvRunoffStarted, To: toAll, Day: s.Day, Round: Runoff, Candidates: top,
			Deadline: dayDeadline(t.now, s.Setup.RunoffLength)})
		return
	default:
		closed.Outcome = Forfeited
		t.emit(closed)
	}
	if t.checkWin() {
		return
	}
	if s.Extra {
		t.startDay(s.Day + 1)
		return
	}
	t.emit(Event{Type: EvNightStarted, To: toAll, Day: s.Day, Deadline: t.now.Add(s.Setup.NightLength)})
}

func (t *step) startDay(day int) {
	t.emit(Event{Type: EvDayStarted, To: toAll, Day: day, Round: Opening,
		Deadline: dayDeadline(t.now, t.s.Setup.DayLength)})
}

// winner is W1: the town wins when no Mafioso is alive; the Mafia when they
// outnumber everyone else alive, or when one Mafioso faces one other player.
func (s *State) winner() (Side, bool) {
	mafia, others := s.livingCount()
	switch {
	case mafia == 0:
		return Town, true
	case mafia > others, mafia == 1 && others == 1:
		return MafiaWin, true
	}
	return "", false
}

// checkWin ends the game if W1 says it is over.
func (t *step) checkWin() bool {
	if w, ok := t.s.winner(); ok {
		t.endGame(w, "")
		return true
	}
	return false
}

// endGame announces the winner, every role and the draw's proof (W2).
func (t *step) endGame(w Side, reason string) {
	s := t.s
	t.digest()
	e := Event{Type: EvGameEnded, To: toAll, Winner: w, Reason: reason,
		Salt: s.Salt, Commitment: s.Commitment}
	for _, p := range s.Players {
		e.Names = append(e.Names, p.Name)
		e.Roles = append(e.Roles, p.Role)
	}
	if s.Commitment == "" {
		e.Roles = nil // never drawn: there is nothing to reveal
	}
	t.emit(e)
}

// digestDue reports whether a digest of the thread's news is due (T1).
func (s *State) digestDue(now time.Time) bool {
	every := s.DigestEvery()
	return every > 0 && s.DigestPending > 0 && !now.Before(s.LastDigest.Add(every))
}

// digest sends the thread's gathered posts and votes, if any (T1). The
// event has no audience of its own: the mail layer turns it into the
// digest of the news since the previous one, ending with the tally.
func (t *step) digest() {
	if t.s.DigestPending > 0 {
		t.emit(Event{Type: EvDigest, Count: t.s.DigestPending})
	}
}
