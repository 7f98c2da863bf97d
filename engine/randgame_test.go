package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// randomGames is how many whole games of each built-in setup the invariant
// test plays with the build tag integration (.ci/run's full count, run
// without the race detector). Under the race detector, which finds nothing
// to race in these single-goroutine games but makes them ten times slower,
// it plays racedGames; an everyday run without the tag plays quickGames
// (see randgame_quick_test.go), -short fewer still. Game n is played from
// seed n, which a failure names.
const (
	randomGames = 10000
	racedGames  = 2000
	quickGames  = 300
)

// TestRandomGames plays whole games with random legal and illegal commands
// at random times and checks, after every step, that the dead never act, no
// public event reveals a role before the end, and no game outlives its win
// (W1); at the end, that the winner is the one W1 demands and that the event
// log, also through JSON, rebuilds the live state exactly.
func TestRandomGames(t *testing.T) {
	// The rules that chain rounds are the same in every setup, and some
	// are rare in some (a 25-seat runoff seldom narrows): the mix is
	// required of all the games together, which the subtests add to.
	var (
		mu  sync.Mutex
		all mixCounts
	)
	t.Cleanup(func() {
		if !t.Failed() && (all.Narrowed == 0 || all.TieExtended == 0 || all.Forfeited == 0) {
			t.Errorf("random play should narrow runoffs (D12), extend ties and forfeit days: %+v", all)
		}
	})
	for _, setup := range randomSetups(t) {
		t.Run(setup.Name, func(t *testing.T) {
			t.Parallel()
			n := randomGames
			if raceEnabled {
				n = racedGames
			}
			if !allRandomGames {
				n = min(n, quickGames)
			}
			if testing.Short() {
				n = 500
			}
			wins := map[Side]int{}
			var seen mixCounts
			for seed := range uint64(n) {
				rp := playRandomGame(t, setup, seed)
				wins[rp.s.Winner]++
				seen.add(rp.seen)
				if t.Failed() {
					return
				}
			}
			t.Logf("%d games: %v; %+v", n, wins, seen)
			if wins[Town] == 0 || wins[MafiaWin] == 0 {
				t.Errorf("random play should let both sides win sometimes: %v", wins)
			}
			mu.Lock()
			all.add(seen)
			mu.Unlock()
			// The mix must reach the rules that clear votes.
			if setup.Vigilantes > 0 && (seen.DayShots == 0 || seen.Cleared == 0) {
				t.Errorf("random play should have day shots that clear votes (N5, D14): %+v", seen)
			}
			// With several Doctors and Vigilantes, the mix must reach the
			// paths of N8 that one of each never takes.
			if setup.Doctors > 1 && seen.DoubleBlocks == 0 {
				t.Errorf("random play should block two kills in one night (N8): %+v", seen)
			}
			if setup.Vigilantes > 1 && seen.SameShots == 0 {
				t.Errorf("random play should have two Vigilantes aim at one player (N8): %+v", seen)
			}
		})
	}
}

// randomSetups are the setups random games are played in: the built-in
// ones, and custom ones with several Doctors and Vigilantes (S1, N8), one
// in a zone of its own that keeps its weekend there and one that plays
// through weekends (D7).
func randomSetups(t testing.TB) []Setup {
	out := []Setup{Classic(), Mafia150()}
	for name, args := range map[string]string{
		"ward":  "players=14 mafia=4 inspectors=1 doctors=2 vigilantes=2 inspector_result=role doctor_saves=2 zone=Europe/Berlin",
		"crowd": "players=18 mafia=5 inspectors=2 doctors=3 vigilantes=3 vigilante_shots=3 weekend=off",
	} {
		s, err := ParseSetup(Classic(), args)
		if err != nil {
			t.Fatalf("setup %s: %v", name, err)
		}
		s.Name = name
		out = append(out, s)
	}
	slices.SortStableFunc(out[2:], func(a, b Setup) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// randomPlayer drives one random game.
type randomPlayer struct {
	t     testing.TB
	rng   *rand.Rand
	s     *State
	log   []Event
	now   time.Time
	names []string
	seed  uint64

	// What the game's event stream has shown so far, for the checks that
	// follow rounds across steps.
	cleared    map[int]bool // voters whose vote a death cleared this round (D14)
	candidates int          // how many players the running runoff is between
	round      RoundKind
	seen       mixCounts
}

// mixCounts counts the rare paths random games took, so that the test can
// show it reached them.
type mixCounts struct {
	Narrowed, TieExtended, Forfeited, DayShots, Cleared int
	// DoubleBlocks counts dawns with two kills blocked, SameShots the
	// SHOOTs refused because another Vigilante shoots that player.
	DoubleBlocks, SameShots int
}

func (m *mixCounts) add(o mixCounts) {
	m.DoubleBlocks += o.DoubleBlocks
	m.SameShots += o.SameShots
	m.Narrowed += o.Narrowed
	m.TieExtended += o.TieExtended
	m.Forfeited += o.Forfeited
	m.DayShots += o.DayShots
	m.Cleared += o.Cleared
}

func playRandomGame(t testing.TB, setup Setup, seed uint64) *randomPlayer {
	rp := &randomPlayer{t: t, rng: rand.New(rand.NewPCG(seed, 0x6d61666961)), seed: seed, cleared: map[int]bool{}}
	rp.now = t0.Add(time.Duration(rp.rng.IntN(7*24)) * time.Hour) // any weekday or weekend
	if seed%3 == 0 {
		setup.DigestInterval = time.Duration(1+rp.rng.IntN(4)) * time.Hour // T1
	}
	s, evs, err := NewGame("rand", "ref@example.org", setup, rp.now)
	if err != nil {
		t.Fatal(err)
	}
	rp.s, rp.log = s, evs
	// Names that share prefixes, so unique-prefix matching is exercised.
	pool := append([]string{"Al", "Alan", "Bo", "Bobby"}, testNames...)
	for i := 0; i < setup.Players; i++ {
		rp.names = append(rp.names, pool[i])
		rp.step(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: fmt.Sprintf("p%d@example.org", i)},
			Channel: Signup, Name: pool[i], Token: fmt.Sprintf("tok%dx", i)}, true)
	}
	rp.step(Command{Verb: CmdStart, By: Referee, Channel: Private}, true)
	if rp.s.Phase != DayPhase {
		t.Fatalf("seed %d: game did not start", seed)
	}
	for steps := 0; rp.s.Phase != EndedPhase; steps++ {
		if steps > 20000 {
			t.Fatalf("seed %d: game did not end after %d steps (phase %s day %d)", seed, steps, rp.s.Phase, rp.s.Day)
		}
		if rp.rng.IntN(6) == 0 {
			rp.advance()
		} else {
			rp.step(rp.randomCommand(), false)
		}
		if t.Failed() {
			return rp
		}
	}
	rp.checkEnd()
	return rp
}

func (rp *randomPlayer) fail(format string, args ...any) {
	rp.t.Helper()
	rp.t.Fatalf("seed %d: %s", rp.seed, fmt.Sprintf(format, args...))
}

// advance moves the clock, sometimes to the next deadline, sometimes by a
// random amount that may cross several.
func (rp *randomPlayer) advance() {
	if d, ok := NextDeadline(rp.s); ok && rp.rng.IntN(2) == 0 {
		if d.After(rp.now) {
			rp.now = d
		}
	} else {
		rp.now = rp.now.Add(time.Duration(1+rp.rng.IntN(20*60)) * time.Minute)
	}
	if rp.s.ClockCloseDue(rp.now) && !rp.s.MailWaiting() && rp.rng.IntN(4) == 0 {
		// The host holds the close for mail its sending limit holds back
		// (T4); the wait's end is the round's announced close.
		rp.step(Command{Verb: CmdMailWait, By: Actor{Kind: ByHost}, Time: rp.now.Add(time.Duration(1+rp.rng.IntN(120)) * time.Minute)}, true)
	}
	due, hasDue := NextDeadline(rp.s)
	// D9: the announced deadline (ClosesAt) is when a round really closes
	// by the clock: not before, unless it was ready to close early, and
	// never later.
	day := rp.s.Phase == DayPhase && !rp.s.Paused
	closes, early := rp.s.ClosesAt(), rp.s.earlyCloseDue()
	evs := Tick(rp.s, rp.now)
	if day {
		closed := hasType(evs, EvRoundClosed, EvTieExtended)
		switch {
		case closed && rp.now.Before(closes) && !early:
			rp.fail("a round closed at %v, before its announced deadline %v", rp.now, closes)
		case !closed && !rp.now.Before(closes):
			rp.fail("the announced deadline %v passed at %v and the round did not close", closes, rp.now)
		}
	}
	if hasDue && !rp.now.Before(due) && len(evs) == 0 {
		// The host sleeps until NextDeadline and then ticks: a due
		// deadline that changes nothing would wake it in a loop.
		rp.fail("Tick at %v did nothing though NextDeadline said %v", rp.now, due)
	}
	rp.check(evs, 0)
	rp.log = append(rp.log, evs...)
}

func (rp *randomPlayer) step(c Command, mustOK bool) {
	rp.t.Helper()
	actor := 0
	if c.By.Kind == ByPlayer {
		actor = c.By.Slot
	}
	wasAlive := actor > 0 && rp.s.Player(actor).Alive
	before := len(rp.log)
	evs, err := Apply(rp.s, c, Env{Now: rp.now, Rand: seeded(rp.seed)})
	rp.log = append(rp.log, evs...)
	if mustOK && err != nil {
		rp.fail("%s: %v", c.Verb, err)
	}
	if r := (*Refusal)(nil); errors.As(err, &r) && r.Reason == SameShot {
		rp.seen.SameShots++
	}
	if err == nil && actor > 0 && !wasAlive {
		// Only thread posts (held for the referee, C1) and private notes
		// and info requests are taken from the dead.
		for _, e := range rp.log[before:] {
			switch e.Type {
			case EvVoted, EvLocked, EvUnlocked, EvUnvoted, EvActionTaken, EvDayShot, EvMafiaPost,
				EvThreadPost, EvExtensionAsked, EvExtended:
				if e.Slot == actor || e.By == actor {
					rp.fail("dead player %d acted: %s %+v", actor, c.Verb, e)
				}
			}
		}
	}
	rp.check(evs, actor)
}

// check is run after every step.
func (rp *randomPlayer) check(evs []Event, actor int) {
	rp.t.Helper()
	ended := false
	for _, e := range evs {
		if e.Type == EvGameEnded {
			ended = true
		}
		if e.To.Public && !ended && e.RevealsRole() {
			rp.fail("public event %s reveals a role before the end (C5): %+v", e.Type, e)
		}
		if e.Type == EvVoted && !e.Null {
			if !rp.s.Player(e.Slot).Alive && rp.s.Phase == DayPhase && e.At.Equal(rp.now) && rp.s.Player(e.Target) == nil {
				rp.fail("vote for no one: %+v", e)
			}
		}
		rp.follow(e)
	}
	for _, p := range rp.s.Players {
		if p.Shots < 0 || p.Saves < Unlimited {
			rp.fail("%s has %d shots and %d saves left", p.Name, p.Shots, p.Saves)
		}
	}
	if rp.s.Phase == NightPhase {
		// N8: two Vigilantes never stand on one player.
		aimed := map[int]bool{}
		for _, sh := range rp.s.Night.Shots {
			if aimed[sh.Target] {
				rp.fail("two Vigilantes shoot %s tonight", rp.s.name(sh.Target))
			}
			aimed[sh.Target] = true
		}
	}
	if rp.s.Phase == DayPhase || rp.s.Phase == NightPhase {
		if w, ok := rp.s.winner(); ok {
			rp.fail("game goes on though %s has won (W1)", w)
		}
		for _, p := range rp.s.Players {
			if p.Vote > 0 && (!p.Alive || !rp.s.Player(p.Vote).Alive) {
				rp.fail("a vote by or on the dead stands: %s -> %d", p.Name, p.Vote)
			}
			if p.Locked && p.Vote <= 0 {
				rp.fail("%s has a lock without a vote", p.Name)
			}
		}
	}
}

// follow checks one event against the rounds seen so far: a vote cleared by
// a death is never charged as missed at that round's close unless its
// voter voted again (D14), a runoff tied among fewer than its candidates
// narrows rather than being extended, and a tie extension is for a tie
// among all of them (D12).
func (rp *randomPlayer) follow(e Event) {
	rp.t.Helper()
	switch e.Type {
	case EvDayStarted, EvExtraStarted, EvNightStarted:
		clear(rp.cleared)
		rp.round, rp.candidates = e.Round, 0
	case EvRunoffStarted:
		if rp.round == Runoff {
			rp.seen.Narrowed++
			if len(e.Candidates) >= rp.candidates {
				rp.fail("a runoff of %d was followed by one of %d: runoffs must narrow", rp.candidates, len(e.Candidates))
			}
		}
		clear(rp.cleared)
		rp.round, rp.candidates = Runoff, len(e.Candidates)
	case EvTieExtended:
		rp.seen.TieExtended++
		if len(e.Candidates) != rp.candidates {
			rp.fail("a tie among %d of a runoff of %d was extended (D12)", len(e.Candidates), rp.candidates)
		}
	case EvRoundClosed:
		if e.Outcome == Forfeited {
			rp.seen.Forfeited++
		}
	case EvDayShot:
		rp.seen.DayShots++
	case EvDawn:
		if e.Blocked >= 2 {
			rp.seen.DoubleBlocks++
		}
	case EvVoted, EvUnvoted:
		delete(rp.cleared, e.Slot)
	case EvVoteCleared:
		rp.seen.Cleared++
		if e.To.Public || e.To.Referee || e.To.Slot != e.Slot || e.Slot == 0 {
			rp.fail("a cleared vote's notice goes to its voter alone: %+v", e.To)
		}
		rp.cleared[e.Slot] = true
	case EvMissedVote:
		if rp.cleared[e.Slot] {
			rp.fail("%s was charged a missed vote for a vote a death cleared (D14)", e.Name)
		}
	}
}

// checkEnd checks the winner against W1 and the log against the state.
func (rp *randomPlayer) checkEnd() {
	rp.t.Helper()
	s := rp.s
	mafia, others := s.livingCount()
	switch s.Winner {
	case Town:
		if mafia != 0 {
			rp.fail("town won with %d Mafia alive", mafia)
		}
	case MafiaWin:
		if !(mafia > others || mafia == 1 && others == 1) {
			rp.fail("Mafia won with %d Mafia and %d others alive", mafia, others)
		}
	case NoWinner:
		// Ended by the referee.
	default:
		rp.fail("no winner: %q", s.Winner)
	}
	end := rp.log[len(rp.log)-1]
	for i := len(rp.log) - 1; i >= 0 && end.Type != EvGameEnded; i-- {
		end = rp.log[i]
	}
	if !VerifyDraw(end.Commitment, s.Game, end.Names, end.Roles, end.Salt) {
		rp.fail("the revealed draw does not match its commitment (S2, W2)")
	}
	r, err := Replay(rp.log)
	if err != nil {
		rp.fail("replay: %v", err)
	}
	if !reflect.DeepEqual(r, s) {
		rp.fail("replayed state differs from the live state")
	}
	// Through JSON, as the store keeps the log; every 10th game, as
	// encoding costs more than playing.
	if rp.seed%10 != 0 {
		return
	}
	var decoded []Event
	for _, e := range rp.log {
		b, err := MarshalEvent(e)
		if err != nil {
			rp.fail("marshal: %v", err)
		}
		d, err := UnmarshalEvent(b)
		if err != nil {
			rp.fail("unmarshal: %v", err)
		}
		decoded = append(decoded, d)
	}
	r2, err := Replay(decoded)
	if err != nil {
		rp.fail("replay decoded: %v", err)
	}
	a, _ := json.Marshal(r2)
	b, _ := json.Marshal(s)
	if string(a) != string(b) {
		rp.fail("state replayed from JSON differs:\n%s\n%s", a, b)
	}
}

// randomCommand makes a command: mostly sensible ones so games move on,
// with a share of nonsense (wrong role, dead sender, bad names, wrong
// channel, outsiders).
func (rp *randomPlayer) randomCommand() Command {
	s, r := rp.s, rp.rng
	living := s.Living()
	pick := func(xs []int) int { return xs[r.IntN(len(xs))] }
	anyone := 1 + r.IntN(len(s.Players))
	name := func() string {
		switch r.IntN(12) {
		case 0:
			return "nobody"
		case 1:
			return "A" // ambiguous prefix
		case 2:
			return s.name(anyone) // maybe dead
		}
		n := s.name(pick(living))
		if r.IntN(4) == 0 && len(n) > 2 {
			n = n[:len(n)-1] // a prefix
		}
		return n
	}
	by := PlayerActor(pick(living))
	// In a quarter of the games voters are diligent: few miss votes, so
	// rounds chain into runoffs rather than ending void.
	owing := s.owingVote()
	diligent := rp.seed%4 == 1 && s.Phase == DayPhase && len(owing) > 0 && r.IntN(2) == 0
	if diligent {
		by = PlayerActor(pick(owing))
	}
	if r.IntN(10) == 0 {
		by = PlayerActor(anyone)
	}
	switch r.IntN(40) {
	case 0:
		if diligent {
			break
		}
		return Command{Verb: CmdVote, By: Actor{Kind: ByOutsider, Address: "x@example.org"}, Channel: Thread, Target: name()}
	case 1:
		return Command{Verb: CmdPost, By: Actor{Kind: ByObserver, Address: "o@example.org"}, Channel: Thread, Text: "hi"}
	case 2:
		verbs := []Verb{CmdExtend, CmdTally, CmdStatus, CmdPause, CmdResume, CmdWeekendClose, CmdGrant, CmdDeny}
		return Command{Verb: verbs[r.IntN(len(verbs))], By: Referee, Channel: Private, Duration: time.Duration(r.IntN(24)) * time.Hour}
	case 3:
		if r.IntN(8) == 0 {
			return Command{Verb: CmdModkill, By: Referee, Channel: Private, Target: name()}
		}
		return Command{Verb: CmdClose, By: Referee, Channel: Private}
	case 4:
		if r.IntN(50) == 0 {
			return Command{Verb: CmdEnd, By: Referee, Channel: Private}
		}
		return Command{Verb: CmdResume, By: Referee, Channel: Private}
	case 5:
		return Command{Verb: CmdPost, By: by, Channel: Thread, Text: "I think " + name() + " is suspicious"}
	case 6:
		return Command{Verb: CmdPost, By: by, Channel: MafiaCh, Text: "let's get " + name()}
	case 7:
		return Command{Verb: CmdExtend, By: by, Channel: Thread}
	case 8:
		return Command{Verb: CmdVote, By: by, Channel: Private, Target: name()}
	case 9:
		return Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: name(),
			Address: fmt.Sprintf("sub%d@example.org", r.IntN(1000)), Token: fmt.Sprintf("sub%d", r.IntN(1000))}
	case 10:
		// A reader takes the thread in digests, or post by post again.
		modes := []string{MailDigest, MailEach, ""}
		return Command{Verb: CmdMail, By: by, Channel: Private, Text: modes[r.IntN(len(modes))]}
	case 11:
		// The host gathers the thread to fit its budget, or ends it (T3);
		// or the mail a close waits for has gone out (T4).
		if r.IntN(3) == 0 {
			return Command{Verb: CmdMailFlowed, By: Actor{Kind: ByHost}}
		}
		plans := append([]time.Duration{0}, PlanIntervals...)
		return Command{Verb: CmdMailPlan, By: Actor{Kind: ByHost}, Duration: plans[r.IntN(len(plans))]}
	}
	if s.Phase == NightPhase {
		// Someone with a role acts, now and then out of turn.
		roles := []Role{Mafia, Inspector, Doctor, Vigilante}
		role := roles[r.IntN(len(roles))]
		holders := s.livingWith(role)
		if len(holders) > 0 && r.IntN(8) != 0 {
			by = PlayerActor(pick(holders))
		}
		ch := Private
		if r.IntN(10) == 0 {
			ch = Thread
		}
		switch role {
		case Mafia:
			if r.IntN(10) == 0 {
				return Command{Verb: CmdNoKill, By: by, Channel: MafiaCh}
			}
			return Command{Verb: CmdKill, By: by, Channel: ch, Target: name()}
		case Inspector:
			return Command{Verb: CmdInspect, By: by, Channel: ch, Target: name()}
		case Doctor:
			// Now and then on the Mafia's target, so that protections
			// meet kills, two of them at once (N8).
			if w := s.Night.Whack; w != 0 && r.IntN(3) == 0 {
				return Command{Verb: CmdProtect, By: by, Channel: ch, Target: s.name(w)}
			}
			return Command{Verb: CmdProtect, By: by, Channel: ch, Target: name()}
		default:
			if r.IntN(2) == 0 {
				return Command{Verb: CmdPass, By: by, Channel: ch}
			}
			// Now and then on a player the Mafia or another Vigilante
			// named: the same target twice, or refused (N8).
			if r.IntN(4) == 0 {
				aimed := []int{}
				if s.Night.Whack != 0 {
					aimed = append(aimed, s.Night.Whack)
				}
				for _, sh := range s.Night.Shots {
					aimed = append(aimed, sh.Target)
				}
				if len(aimed) > 0 {
					return Command{Verb: CmdShoot, By: by, Channel: ch, Target: s.name(pick(aimed))}
				}
			}
			return Command{Verb: CmdShoot, By: by, Channel: ch, Target: name()}
		}
	}
	day := r.IntN(12)
	if diligent {
		day = 11
	}
	switch day {
	case 0:
		return Command{Verb: CmdVote, By: by, Channel: Thread, Target: "null"}
	case 1:
		return Command{Verb: CmdUnvote, By: by, Channel: Thread}
	case 2, 3, 4:
		return Command{Verb: CmdLock, By: by, Channel: Thread}
	case 5:
		return Command{Verb: CmdUnlock, By: by, Channel: Thread}
	case 6:
		if v := s.livingWith(Vigilante); len(v) > 0 && r.IntN(4) == 0 {
			return Command{Verb: CmdShoot, By: PlayerActor(pick(v)), Channel: Private, Target: name()}
		}
		return Command{Verb: CmdVote, By: by, Channel: Thread, Voter: s.name(by.Slot), Target: name()}
	}
	// Votes gather on a few players, so rounds have winners and ties, and
	// now and then spread over three of them, so that three-way ties lead
	// to runoffs that narrow (D12).
	target := name()
	if r.IntN(2) == 0 && len(living) > 1 {
		spread := 0
		if rp.seed%4 == 1 {
			spread = r.IntN(3)
		}
		target = s.name(living[(int(rp.seed+uint64(s.Day))+spread)%len(living)])
	}
	if s.Round == Runoff && len(s.Candidates) > 0 && r.IntN(3) != 0 {
		target = s.name(pick(s.Candidates)) // most runoff votes are for the tied
	}
	return Command{Verb: CmdVote, By: by, Channel: Thread, Target: target}
}
