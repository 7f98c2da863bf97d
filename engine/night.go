package engine

import (
	"fmt"
	"slices"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// nightAction handles KILL, NO KILL, INSPECT, PROTECT, SHOOT and PASS (N1–N5).
func (t *step) nightAction(c Command) error {
	s := t.s
	p := s.Player(c.By.Slot)
	if s.Phase == SignupPhase {
		return refuse(WrongPhase, "the game has not started")
	}
	if !p.Alive {
		return refuse(Dead, "the dead take no actions")
	}
	if c.Channel == Thread {
		return refuse(NotAllowed, "%s is secret: send it to your private address, never the thread", c.Verb)
	}
	need := map[Verb]Role{CmdKill: Mafia, CmdNoKill: Mafia, CmdInspect: Inspector,
		CmdProtect: Doctor, CmdShoot: Vigilante, CmdPass: Vigilante}[c.Verb]
	if p.Role != need {
		return refuse(NotYourRole, "%s is not a command for your role", c.Verb)
	}
	if c.Channel == MafiaCh && need != Mafia {
		return refuse(NotAllowed, "send %s to your private address", c.Verb)
	}
	if c.Verb == CmdShoot && s.Phase == DayPhase {
		return t.dayShot(c, p)
	}
	if s.Phase != NightPhase {
		return refuse(WrongPhase, "%s is a night action; it is day now", c.Verb)
	}
	e := Event{Type: EvActionTaken, To: toPlayerRef(p.Slot), By: p.Slot, Name: p.Name, Verb: c.Verb, Day: s.Day}
	target := func(allowSelf bool) *Refusal {
		slot, r := s.resolve(c.Target, s.Living())
		if r != nil {
			return r
		}
		if slot == p.Slot && !allowSelf {
			return refuse(BadTarget, "you cannot %s yourself", c.Verb)
		}
		e.Target = slot
		return nil
	}
	switch c.Verb {
	case CmdKill, CmdNoKill:
		// N2: any living Mafioso; the latest submission stands, echoed to all.
		e.To = toMafiaAndRef()
		if c.Verb == CmdKill {
			if r := target(true); r != nil {
				return r
			}
		}
	case CmdInspect:
		if r := target(false); r != nil {
			return r
		}
	case CmdProtect:
		if p.Saves == 0 {
			return refuse(NotAllowed, "you have no saves left")
		}
		if r := target(true); r != nil {
			return r
		}
		if e.Target == p.LastProtected {
			return refuse(SameProtect, "you protected %s last night; pick someone else tonight", s.name(e.Target))
		}
	case CmdShoot:
		if r := s.canShoot(p); r != nil {
			return r
		}
		if r := target(false); r != nil {
			return r
		}
		// N8: two Vigilantes may not shoot the same player in one night.
		for _, sh := range s.Night.Shots {
			if sh.By != p.Slot && sh.Target == e.Target {
				return refuse(SameShot, "another Vigilante already shoots %s tonight, and two Vigilantes may not shoot the same player in one night; shoot someone else or PASS", s.name(e.Target))
			}
		}
	case CmdPass:
		// N5: a PASS replaces tonight's SHOOT, as a SHOOT replaces a PASS.
	}
	t.emit(e)
	return nil
}

// canShoot checks the Vigilante's limits (N5).
func (s *State) canShoot(p *Player) *Refusal {
	switch {
	case p.Shots <= 0:
		return refuse(NoShotsLeft, "you have no shots left")
	case s.Phase == NightPhase && p.LastShotNight > 0 && p.LastShotNight == s.Day-1:
		return refuse(ConsecutiveVig, "you shot last night; shots may not come on consecutive nights")
	case s.Phase == DayPhase && p.LastShotDay == s.Day:
		return refuse(AlreadyShot, "you have already shot today")
	}
	return nil
}

// dayShot is the Vigilante's SHOOT by day: it resolves at once and is
// announced as the Vigilante's (N5).
func (t *step) dayShot(c Command, p *Player) error {
	s := t.s
	if r := s.canShoot(p); r != nil {
		return r
	}
	slot, r := s.resolve(c.Target, s.Living())
	if r != nil {
		return r
	}
	if slot == p.Slot {
		return refuse(BadTarget, "you cannot shoot yourself")
	}
	t.emit(Event{Type: EvDayShot, To: toPlayerRef(p.Slot), By: p.Slot, Name: p.Name, Target: slot, Day: s.Day})
	t.dayDeath(slot, ByVigilanteDay)
	return nil
}

// dayDeath is a death in the middle of a voting round (a day shot, a
// modkill): the player dies, W1 is checked, and if the game goes on each
// voter whose vote the death cleared is told at once, privately, and may vote
// again; until then their vote counts as cast (D14).
func (t *step) dayDeath(slot int, cause Cause) {
	s := t.s
	var voters []int
	if s.Phase == DayPhase {
		for _, p := range s.Players {
			if p.Alive && p.Slot != slot && p.Vote == slot {
				voters = append(voters, p.Slot)
			}
		}
	}
	t.emit(Event{Type: EvPlayerDied, To: toAll, Slot: slot, Name: s.name(slot), Reason: string(cause)})
	if t.checkWin() {
		return
	}
	for _, v := range voters {
		t.emit(Event{Type: EvVoteCleared, To: toPlayer(v), Slot: v, Name: s.name(v), Target: slot, Reason: string(cause)})
	}
}

// required lists who still owes a night action, by slot (N6).
func (s *State) owingAction() []int {
	n := s.Night
	var out []int
	if n.Whack == 0 && !n.NoKill {
		out = append(out, s.livingWith(Mafia)...)
	}
	for _, slot := range s.livingWith(Inspector) {
		if !n.inspected(slot) {
			out = append(out, slot)
		}
	}
	for _, slot := range s.livingWith(Doctor) {
		if n.Protection(slot) == 0 && s.Player(slot).Saves != 0 {
			out = append(out, slot)
		}
	}
	for _, slot := range s.livingWith(Vigilante) {
		v := s.Player(slot)
		mayShoot := v.Shots > 0 && !(v.LastShotNight > 0 && v.LastShotNight == s.Day-1)
		if mayShoot && n.ShotOf(slot) == 0 && !n.Passed(slot) {
			out = append(out, slot)
		}
	}
	return out
}

// OwesAction reports whether the player in slot still owes tonight's
// action (N6): a night ends early only once no one does.
func (s *State) OwesAction(slot int) bool {
	if s.Phase != NightPhase {
		return false
	}
	for _, o := range s.owingAction() {
		if o == slot {
			return true
		}
	}
	return false
}

// NightEndsAt is when the running night resolves: the first mark after the
// last required action came in, or its latest end while one is missing.
// It tells when the last action came, a secret until the night resolves:
// only the clock and the referee may read it. What a player is shown is
// the night's latest end, ClosesAt.
func (s *State) NightEndsAt() time.Time { return s.nightEndsAt() }

func (n Night) inspected(slot int) bool {
	for _, i := range n.Inspects {
		if i.By == slot {
			return true
		}
	}
	return false
}

func (s *State) nightAllIn() bool { return len(s.owingAction()) == 0 }

// resolveNight ends the night in the order of N8, posts the dawn (N9),
// answers the inspections (N3) and starts the next day, or the extra round
// when no whack was named (N7).
func (t *step) resolveNight() {
	s := t.s
	t.digest()
	n := s.Night
	out := s.nightOutcome()
	t.emit(Event{Type: EvDawn, To: toAll, Day: s.Day, Deaths: out.deaths, Blocked: out.blocked})
	for _, i := range n.Inspects {
		insp := s.Player(i.By)
		if !insp.Alive {
			continue // N3: a dead Inspector is owed no answer
		}
		t.emit(Event{Type: EvInspection, To: toPlayerRef(i.By), By: i.By, Name: insp.Name,
			Target: i.Target, Result: s.inspectionResult(i.Target), Day: s.Day})
	}
	if t.checkWin() {
		return
	}
	if n.Whack == 0 {
		t.emit(Event{Type: EvExtraStarted, To: toAll, Day: s.Day, Round: Extra,
			Deadline: dayDeadline(t.now, s.Setup.ExtraLength)})
		return
	}
	t.startDay(s.Day + 1)
}

// nightOutcome is how the night resolves (N8): who dies, of what, how many
// kills were blocked, and the saves each Doctor spent on them. It depends on
// the state alone, so that the fold of the dawn charges the same saves the
// dawn announced.
type nightOutcome struct {
	deaths  []Death
	blocked int
	used    map[int]int // saves spent, by the Doctor's slot
}

func (s *State) nightOutcome() nightOutcome {
	n := s.Night
	alive := func(slot int) bool {
		p := s.Player(slot)
		return p != nil && p.Alive
	}
	// The kills in the order of N8: the whack, then each Vigilante's shot
	// in the order the Vigilantes signed up. A kill aimed at a player who
	// was removed before the night resolved (a modkill) hits no one.
	var kills []int
	whack := n.Whack
	if !alive(whack) {
		whack = 0
	}
	if whack != 0 {
		kills = append(kills, whack)
	}
	shots := slices.Clone(n.Shots)
	slices.SortFunc(shots, func(a, b Pair) int { return a.By - b.By })
	shot := map[int]bool{}
	for _, sh := range shots {
		if alive(sh.Target) {
			kills = append(kills, sh.Target)
			shot[sh.Target] = true
		}
	}
	// The protections that count: those of Doctors alive as the night
	// resolves (N4), in the order the Doctors signed up, each with the
	// saves its Doctor has left.
	var protects []Pair
	saves := map[int]int{}
	for _, pr := range n.Protects {
		if d := s.Player(pr.By); d != nil && d.Alive && d.Role == Doctor && pr.Target != 0 {
			protects = append(protects, pr)
			saves[pr.By] = d.Saves
		}
	}
	slices.SortFunc(protects, func(a, b Pair) int { return a.By - b.By })

	dead := map[int]bool{}
	var order []int
	blockers := map[int][]int{} // target -> the Doctors whose saves blocked a kill on it
	blocks := map[int]int{}     // kills each Doctor blocked tonight
	for _, target := range kills {
		if dead[target] {
			continue
		}
		// One protection of the target blocks the kill: one whose Doctor
		// the kills before did not kill and who has a save left; of those,
		// a Doctor who has blocked no kill tonight before one who has (two
		// Doctors on one player block a kill each), then the first to
		// sign up.
		by := 0
		for _, pr := range protects {
			if pr.Target != target || dead[pr.By] || saves[pr.By] == 0 {
				continue
			}
			if by == 0 || blocks[pr.By] < blocks[by] {
				by = pr.By
			}
		}
		if by != 0 {
			if saves[by] != Unlimited {
				saves[by]--
			}
			blocks[by]++
			blockers[target] = append(blockers[target], by)
		} else {
			dead[target] = true
			order = append(order, target)
		}
	}
	out := nightOutcome{used: map[int]int{}}
	for _, target := range order {
		cause := ByVigilante
		switch {
		case target == whack && shot[target]:
			cause = ByMafiaAndVig
		case target == whack:
			cause = ByMafia
		}
		out.deaths = append(out.deaths, Death{Slot: target, Name: s.name(target), Cause: cause})
	}
	// A save that blocked a kill on a player who died that night anyway
	// (the Mafia and a Vigilante named them, and there was one save for
	// two kills) blocked nothing: it is not spent, and no block is told.
	for target, docs := range blockers {
		if dead[target] {
			continue
		}
		out.blocked += len(docs)
		for _, d := range docs {
			out.used[d]++
		}
	}
	return out
}

// inspectionResult is the answer the setup gives for a player (S1).
func (s *State) inspectionResult(slot int) string {
	p := s.Player(slot)
	if s.Setup.InspectorResult == ExactRole {
		return fmt.Sprintf(lang.Key("%s is %s"), p.Name, p.Role)
	}
	if p.Role == Mafia {
		return fmt.Sprintf(lang.Key("%s is Mafia"), p.Name)
	}
	return fmt.Sprintf(lang.Key("%s is not Mafia"), p.Name)
}

// nightActionLines lists tonight's actions for the referee (F2).
func (s *State) nightActionLines() []string {
	n := s.Night
	var out []string
	switch {
	case n.Whack != 0:
		out = append(out, fmt.Sprintf("Mafia: KILL %s (by %s)", s.name(n.Whack), s.name(n.WhackBy)))
	case n.NoKill:
		out = append(out, fmt.Sprintf("Mafia: NO KILL (by %s)", s.name(n.WhackBy)))
	}
	for _, i := range n.Inspects {
		out = append(out, fmt.Sprintf("%s: INSPECT %s", s.name(i.By), s.name(i.Target)))
	}
	// With one Doctor and one Vigilante, their lines name the role alone,
	// as the seat is in the status above; with several, each its actor.
	for _, pr := range sortedPairs(n.Protects) {
		if s.Setup.Doctors > 1 {
			out = append(out, fmt.Sprintf("%s (Doctor): PROTECT %s", s.name(pr.By), s.name(pr.Target)))
		} else {
			out = append(out, fmt.Sprintf("Doctor: PROTECT %s", s.name(pr.Target)))
		}
	}
	for _, sh := range sortedPairs(n.Shots) {
		if s.Setup.Vigilantes > 1 {
			out = append(out, fmt.Sprintf("%s (Vigilante): SHOOT %s", s.name(sh.By), s.name(sh.Target)))
		} else {
			out = append(out, fmt.Sprintf("Vigilante: SHOOT %s", s.name(sh.Target)))
		}
	}
	for _, v := range slices.Sorted(slices.Values(n.Passes)) {
		if s.Setup.Vigilantes > 1 {
			out = append(out, fmt.Sprintf("%s (Vigilante): PASS", s.name(v)))
		} else {
			out = append(out, "Vigilante: PASS")
		}
	}
	for _, slot := range s.owingAction() {
		out = append(out, fmt.Sprintf("%s (%s) has not acted yet", s.name(slot), s.Player(slot).Role))
	}
	return out
}

// sortedPairs is pairs in the order their actors signed up.
func sortedPairs(pairs []Pair) []Pair {
	out := slices.Clone(pairs)
	slices.SortFunc(out, func(a, b Pair) int { return a.By - b.By })
	return out
}

// ownActionLines lists what a player has done tonight, for their STATUS.
func (s *State) ownActionLines(slot int) []string {
	n := s.Night
	p := s.Player(slot)
	var out []string
	switch p.Role {
	case Mafia:
		switch {
		case n.Whack != 0:
			out = append(out, fmt.Sprintf("The Mafia's whack: %s (named by %s)", s.name(n.Whack), s.name(n.WhackBy)))
		case n.NoKill:
			out = append(out, "The Mafia chose no kill tonight")
		default:
			out = append(out, "The Mafia have not named a victim yet")
		}
	case Inspector:
		for _, i := range n.Inspects {
			if i.By == slot {
				out = append(out, "You inspect "+s.name(i.Target))
			}
		}
	case Doctor:
		if t := n.Protection(slot); t != 0 {
			out = append(out, "You protect "+s.name(t))
		}
	case Vigilante:
		if t := n.ShotOf(slot); t != 0 {
			out = append(out, "You shoot "+s.name(t))
		} else if n.Passed(slot) {
			out = append(out, "You pass tonight")
		}
	}
	for _, o := range s.owingAction() {
		if o == slot {
			out = append(out, "You have not acted yet tonight")
		}
	}
	return out
}
