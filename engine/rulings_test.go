package engine

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests check the rulings of docs/rules.md that settle how extensions
// meet the weekend (D9), what Inspectors start knowing (S1), how runoffs
// narrow and tie extensions last (D12), votes cleared by a death (D14), a
// Vigilante changing their mind (N5), and how deadlines are read (D8).

// heldRunoff is a game of six whose opening round closes tied on Friday
// 12:00 Chicago time, so that its runoff's 24 h deadline (Saturday 12:00)
// is held to Monday 07:00 by the weekend rule (D7).
func heldRunoff(t *testing.T) *game {
	t.Helper()
	setup := Classic()
	setup.ReminderBefore = 0
	g := riggedAt(t, chicago(2026, 12, 3, 0), setup, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	tieAliceBob(g)
	evs := g.at(chicago(2026, 12, 4, 12))
	if ro := find(evs, EvRunoffStarted); ro == nil {
		t.Fatalf("no runoff on Friday noon: %+v", evs)
	}
	if !g.s.ClosesAt().Equal(chicago(2026, 12, 7, 7)) {
		t.Fatalf("runoff closes %v, want Monday 07:00 Chicago", g.s.ClosesAt())
	}
	return g
}

// tieAliceBob gives Alice and Bob three votes each; Carol to Frank are not
// in jeopardy.
func tieAliceBob(g *game) {
	g.t.Helper()
	for voter, target := range map[string]string{"Bob": "Alice", "Carol": "Alice", "Dave": "Alice",
		"Alice": "Bob", "Erin": "Bob", "Frank": "Bob"} {
		g.vote(voter, target)
	}
}

func TestD9_WeekendHeldRunoffExtended(t *testing.T) {
	g := heldRunoff(t)
	g.at(chicago(2026, 12, 5, 9)) // Saturday
	evs := g.ok("Carol", Thread, CmdExtend, "")
	e := find(evs, EvExtended)
	want := chicago(2026, 12, 7, 19) // Monday 07:00 + 12 h, not Saturday 12:00 + 12 h
	if e == nil || !e.Auto || !e.Deadline.Equal(want) {
		t.Fatalf("the first runoff request must give 12 h after the held close: %+v", e)
	}
	if !g.s.ClosesAt().Equal(want) || !g.s.Tally(g.now).Deadline.Equal(want) {
		t.Fatalf("closes %v, tally says %v, want %v", g.s.ClosesAt(), g.s.Tally(g.now).Deadline, want)
	}
	if d, _ := NextDeadline(g.s); !d.Equal(want) {
		t.Fatalf("next deadline %v, want %v", d, want)
	}
	if evs := g.at(chicago(2026, 12, 7, 7)); hasType(evs, EvRoundClosed, EvTieExtended) {
		t.Fatal("the runoff closed on Monday 07:00 though it was extended")
	}
	if evs := g.at(want); !hasType(evs, EvTieExtended, EvRoundClosed) {
		t.Fatalf("the runoff did not close at its announced deadline: %+v", evs)
	}
}

func TestD9_RefereeExtendOverAHeldDeadline(t *testing.T) {
	g := heldRunoff(t)
	g.at(chicago(2026, 12, 5, 9))
	evs, err := g.apply(Command{Verb: CmdExtend, By: Referee, Channel: Private, Duration: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	want := chicago(2026, 12, 8, 7) // Tuesday 07:00
	if e := find(evs, EvExtended); e == nil || !e.Deadline.Equal(want) || !g.s.ClosesAt().Equal(want) {
		t.Fatalf("EXTEND 24h over a held deadline: %+v, closes %v, want %v", e, g.s.ClosesAt(), want)
	}
	// A short extension that still lands in the weekend is held again, so
	// the announced time is still the real one.
	g2 := riggedAt(t, chicago(2026, 12, 3, 0), Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
	g2.at(chicago(2026, 12, 4, 10)) // Friday: the deadline is Friday 12:00
	g2.apply(Command{Verb: CmdExtend, By: Referee, Channel: Private, Duration: 6 * time.Hour})
	if !g2.s.Deadline.Equal(chicago(2026, 12, 4, 18)) {
		t.Fatalf("deadline %v, want Friday 18:00", g2.s.Deadline)
	}
	if got := g2.s.Tally(g2.now).Deadline; !got.Equal(chicago(2026, 12, 7, 7)) {
		t.Fatalf("Friday 18:00 is in the weekend: the tally must say Monday 07:00, says %v", got)
	}
}

func TestS1_Mafia150InspectorsToldTheSameMafioso(t *testing.T) {
	setup := Mafia150()
	if !setup.InspectorKnowsMafioso {
		t.Fatal("mafia150 tells its Inspectors a Mafioso")
	}
	setup.Inspectors = 2
	g := signup(t, setup)
	evs := g.ok("ref", Private, CmdStart, "")
	drawn := find(evs, EvRolesDrawn)
	_, first, _, err := draw(g.s.Setup, len(g.s.Players), seeded(1))
	if err != nil {
		t.Fatal(err)
	}
	if drawn == nil || drawn.Known == 0 || drawn.Known != first || g.s.Player(first).Role != Mafia {
		t.Fatalf("the known Mafioso is the first one drawn (S2): drawn %+v, first %d", drawn, first)
	}
	var told []int
	for _, e := range evs {
		if e.Type == EvRoleAssigned && e.Role == Inspector {
			told = append(told, e.Known)
			if e.To.Public || e.To.Slot != e.Slot {
				t.Fatalf("a role message to someone else: %+v", e.To)
			}
		}
	}
	if len(told) != 2 || told[0] != first || told[1] != first {
		t.Fatalf("both Inspectors must be told the same Mafioso %d: %v", first, told)
	}
	for _, e := range evs {
		if e.Type == EvRoleAssigned && e.Role != Inspector && e.Known != 0 {
			t.Fatalf("a %s was told a Mafioso", e.Role)
		}
	}
}

func TestS1_CustomSetups(t *testing.T) {
	t.Run("a custom setup has only the roles it names", func(t *testing.T) {
		s, err := ParseSetup(Classic(), "players=5 mafia=1 doctors=1")
		if err != nil || s.Inspectors != 0 || s.Doctors != 1 || s.Mafia != 1 || s.Townspeople() != 3 {
			t.Fatalf("%+v %v", s, err)
		}
		g := signup(t, s)
		evs := g.ok("ref", Private, CmdStart, "")
		if d := find(evs, EvRolesDrawn); d == nil || d.Known != 0 {
			t.Fatalf("no Inspector is in play, so no one is told a Mafioso: %+v", d)
		}
		for _, e := range evs {
			if e.Type == EvRoleAssigned && (e.Role == Inspector || e.Known != 0) {
				t.Fatalf("a role that was not asked for, or knowledge: %+v", e)
			}
		}
	})
	t.Run("no Inspector, no one told a Mafioso", func(t *testing.T) {
		s, err := ParseSetup(Classic(), "classic inspectors=0")
		if err != nil || s.Inspectors != 0 || !s.InspectorKnowsMafioso {
			t.Fatalf("%+v %v", s, err)
		}
		g := signup(t, s)
		if d := find(g.ok("ref", Private, CmdStart, ""), EvRolesDrawn); d == nil || d.Known != 0 {
			t.Fatalf("the draw names a known Mafioso with no Inspector in play: %+v", d)
		}
	})
	t.Run("a built-in name keeps its roles", func(t *testing.T) {
		s, err := ParseSetup(Classic(), "classic players=12")
		if err != nil || s.Inspectors != 1 || s.Mafia != 3 || s.Townspeople() != 8 {
			t.Fatalf("%+v %v", s, err)
		}
		s, err = ParseSetup(Classic(), "players=12 day_length=24h")
		if err != nil || s.Inspectors != 1 || s.Mafia != 3 {
			t.Fatalf("pairs that name no role keep the roles: %+v %v", s, err)
		}
	})
	t.Run("refusals give true reasons", func(t *testing.T) {
		if _, err := ParseSetup(Classic(), "players=4 mafia=2"); err != nil {
			t.Fatalf("2 Mafia against 2 do not win at the start (W1): %v", err)
		}
		for args, want := range map[string]string{
			"players=5 mafia=3":                                     "outnumber the other 2",
			"players=5 mafia=1 inspectors=1":                        "would know the whole Mafia",
			"players=5 mafia=1 doctors=3 vigilantes=2":              "do not fit in 5 players",
			"players=5 mafia=2 inspectors=2 doctors=1 vigilantes=1": "do not fit in 5 players",
		} {
			_, err := ParseSetup(Classic(), args)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("SETUP %s: %v, want %q", args, err, want)
			}
		}
		if _, err := ParseSetup(Classic(), "players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false"); err != nil {
			t.Fatalf("an Inspector who knows nothing at the start is fine: %v", err)
		}
	})
}

// threeWayRunoff is a game of seven whose opening round ties Carol, Dave
// and Erin at two votes each.
func threeWayRunoff(t *testing.T) *game {
	t.Helper()
	setup := Classic()
	setup.ReminderBefore = 0
	g := rigged(t, setup, Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	for voter, target := range map[string]string{"Alice": "Carol", "Bob": "Carol", "Carol": "Dave",
		"Frank": "Dave", "Dave": "Erin", "Grace": "Erin", "Erin": "Alice"} {
		g.vote(voter, target)
	}
	g.closeNow()
	want := []int{g.slot("Carol"), g.slot("Dave"), g.slot("Erin")}
	if g.s.Round != Runoff || !slices.Equal(g.s.Candidates, want) {
		t.Fatalf("no three-way runoff: %s %v", g.s.Round, g.s.Candidates)
	}
	return g
}

func TestD12_RunoffNarrowsThenExtendsThenForfeits(t *testing.T) {
	g := threeWayRunoff(t)
	// 2-2-1: Carol (Alice, Bob), Dave (Carol, Frank), Erin (Dave).
	g.ok("Erin", Thread, CmdVote, "null")
	g.ok("Grace", Thread, CmdVote, "null")
	g.lock("Alice")
	evs := g.closeNow()
	if hasType(evs, EvTieExtended) {
		t.Fatal("a runoff tied among fewer than its candidates was extended instead of narrowed")
	}
	c := find(evs, EvRoundClosed)
	ro := find(evs, EvRunoffStarted)
	two := []int{g.slot("Carol"), g.slot("Dave")}
	if c == nil || c.Outcome != ToRunoff || ro == nil || !slices.Equal(ro.Candidates, two) {
		t.Fatalf("want a new runoff between Carol and Dave: %+v %+v", c, ro)
	}
	if !ro.Deadline.Equal(g.now.Add(24 * time.Hour)) {
		t.Fatalf("the new runoff lasts 24 h: %v", ro.Deadline)
	}
	// The narrowing is a close: those without a vote miss one (D14).
	if count(evs, EvMissedVote) != 2 {
		t.Fatalf("Erin and Grace miss a vote at the narrowing close: %d", count(evs, EvMissedVote))
	}
	// Votes for Carol and Dave carry over, the rest are reset, and every lock.
	for n, want := range map[string]string{"Alice": "Carol", "Bob": "Carol", "Carol": "Dave", "Frank": "Dave", "Dave": "", "Erin": "", "Grace": ""} {
		if got := g.s.voteName(g.p(n).Vote); got != want || g.p(n).Locked {
			t.Errorf("%s votes %q (locked %v), want %q unlocked", n, got, g.p(n).Locked, want)
		}
	}
	g.refused(BadTarget, "Erin", Thread, CmdVote, "Erin")
	// Tied 3-3 among the same two: the 12 h extension.
	g.vote("Erin", "Carol")
	g.vote("Grace", "Dave")
	g.ok("Dave", Thread, CmdVote, "null")
	evs = g.closeNow()
	te := find(evs, EvTieExtended)
	if te == nil || !te.Deadline.Equal(g.now.Add(12*time.Hour)) || !slices.Equal(te.Candidates, two) || hasType(evs, EvMissedVote) {
		t.Fatalf("a runoff tied among the same players is extended once by 12 h: %+v", evs)
	}
	// Still tied after 12 h: the day's elimination is forfeited.
	evs = g.closeNow()
	if c := find(evs, EvRoundClosed); c == nil || c.Outcome != Forfeited || hasType(evs, EvPlayerDied) || g.s.Phase != NightPhase {
		t.Fatalf("still tied: want the day forfeited, got %+v", c)
	}
	g.checkReplay()
}

// lockedTieRunoff is a runoff between Alice and Bob, tied 3:3, in which the
// four players not in jeopardy have locked their votes.
func lockedTieRunoff(t *testing.T, start time.Time) *game {
	t.Helper()
	setup := Classic()
	setup.ReminderBefore = 0
	g := riggedAt(t, start, setup, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	tieAliceBob(g)
	g.closeNow()
	if g.s.Round != Runoff {
		t.Fatal("no runoff")
	}
	return g
}

func TestD12_TieExtensionWithLocksRunsItsLength(t *testing.T) {
	g := lockedTieRunoff(t, t0)
	for _, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
		g.lock(n)
	}
	// D5: the runoff closes early, tied, and is extended.
	te := find(g.log, EvTieExtended)
	if te == nil || !te.Deadline.Equal(g.now.Add(12*time.Hour)) {
		t.Fatalf("the early close of a tied runoff must give the tie extension: %+v", te)
	}
	end := te.Deadline
	for _, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
		if g.p(n).Locked {
			t.Fatalf("%s's lock outlived the tie extension", n)
		}
	}
	// An unrelated post a minute later does not forfeit the day.
	g.now = g.now.Add(time.Minute)
	evs := g.ok("Carol", Thread, CmdPost, "Anyone want to change their vote?")
	if hasType(evs, EvRoundClosed) || g.s.Phase != DayPhase {
		t.Fatalf("a post ended the tie extension: %+v", evs)
	}
	if d, _ := NextDeadline(g.s); !d.Equal(end) {
		t.Fatalf("next deadline %v, want the extension's end %v", d, end)
	}
	// Locking again while the tie stands does not end it either.
	for _, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
		g.lock(n)
	}
	if g.s.Phase != DayPhase || hasType(g.log, EvRoundClosed) && find(g.log, EvRoundClosed).Round == Runoff {
		t.Fatal("the tie extension closed early with the tie standing")
	}
	if d, _ := NextDeadline(g.s); !d.Equal(end) {
		t.Fatalf("next deadline %v, want %v", d, end)
	}
	// A vote that breaks the tie, locked: now the round may close early.
	g.vote("Carol", "Bob")
	evs = g.ok("Carol", Thread, CmdLock, "")
	if c := find(evs, EvRoundClosed); c == nil || c.Outcome != Eliminated || c.Target != g.slot("Bob") {
		t.Fatalf("the broken tie with every lock in should close the round: %+v", c)
	}
	g.checkReplay()

	t.Run("still tied at its end: forfeited", func(t *testing.T) {
		g := lockedTieRunoff(t, t0)
		for _, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
			g.lock(n)
		}
		end := find(g.log, EvTieExtended).Deadline
		if evs := g.at(end.Add(-time.Minute)); hasType(evs, EvRoundClosed) {
			t.Fatal("closed before the extension ended")
		}
		evs := g.at(end)
		if c := find(evs, EvRoundClosed); c == nil || c.Outcome != Forfeited {
			t.Fatalf("want forfeit at the extension's end: %+v", c)
		}
	})
}

func TestD12_LockReadyRunoffHeldOverTheWeekendTiedOnMonday(t *testing.T) {
	// The opening round closes tied on Friday 12:00 Chicago time; the
	// runoff's deadline (Saturday 12:00) is held to Monday 07:00.
	g := lockedTieRunoff(t, chicago(2026, 12, 3, 0))
	if !g.s.ClosesAt().Equal(chicago(2026, 12, 7, 7)) {
		t.Fatalf("runoff closes %v", g.s.ClosesAt())
	}
	g.at(chicago(2026, 12, 4, 18)) // Friday evening: the weekend
	for _, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
		g.lock(n)
	}
	if g.s.TieExtended || hasType(g.log[len(g.log)-1:], EvTieExtended) {
		t.Fatal("the early close was not held by the weekend")
	}
	evs := g.at(chicago(2026, 12, 7, 7))
	te := find(evs, EvTieExtended)
	if te == nil || !te.Deadline.Equal(chicago(2026, 12, 7, 19)) {
		t.Fatalf("Monday 07:00 must give the 12 h tie extension: %+v", evs)
	}
	g.now = chicago(2026, 12, 7, 7).Add(time.Minute)
	if evs := g.ok("Dave", Thread, CmdPost, "Monday already."); hasType(evs, EvRoundClosed) {
		t.Fatal("a post on Monday 07:01 forfeited the day")
	}
	if d, _ := NextDeadline(g.s); !d.Equal(chicago(2026, 12, 7, 19)) {
		t.Fatalf("next deadline %v, want Monday 19:00", d)
	}
	if tl := g.s.Tally(g.now); !tl.Deadline.Equal(chicago(2026, 12, 7, 19)) {
		t.Fatalf("the tally announces %v", tl.Deadline)
	}
}

// clearedVoteGame is the village of rules_night_test.go on Day 1 with
// Carol's vote on Frank and everyone else's on Grace, except Heidi and
// Ivan, who have not voted.
func clearedVoteGame(t *testing.T) *game {
	t.Helper()
	g := village(t)
	g.vote("Carol", "Frank")
	for _, n := range []string{"Alice", "Bob", "Dave", "Erin", "Frank", "Grace"} {
		g.vote(n, "Grace")
	}
	return g
}

func missedSlots(evs []Event) []int {
	var out []int
	for _, e := range evs {
		if e.Type == EvMissedVote {
			out = append(out, e.Slot)
		}
	}
	return out
}

func TestD14_VoteClearedByADeathIsNotMissed(t *testing.T) {
	for _, how := range []string{"day shot", "modkill"} {
		t.Run(how, func(t *testing.T) {
			g := clearedVoteGame(t)
			var evs []Event
			if how == "day shot" {
				evs = g.ok("Erin", Private, CmdShoot, "Frank")
			} else {
				evs = g.ok("ref", Private, CmdModkill, "Frank")
			}
			n := find(evs, EvVoteCleared)
			if n == nil || n.Slot != g.slot("Carol") || n.Target != g.slot("Frank") || n.To != toPlayer(g.slot("Carol")) {
				t.Fatalf("Carol must be told privately at once: %+v", n)
			}
			if count(evs, EvVoteCleared) != 1 {
				t.Fatalf("only Carol voted for Frank: %d notices", count(evs, EvVoteCleared))
			}
			tl := g.s.Tally(g.now)
			if slices.Contains(tl.NotVoted, "Carol") || !slices.Contains(tl.NotVoted, "Heidi") {
				t.Fatalf("Carol voted and was cleared, Heidi did not vote: %v", tl.NotVoted)
			}
			if i := slices.IndexFunc(tl.Votes, func(v TallyVote) bool { return v.Name == "Carol" }); i < 0 || tl.Votes[i].Cleared != "Frank" || tl.Votes[i].Target != "" {
				t.Fatalf("the tally shows Carol's vote as cleared: %+v", tl.Votes)
			}
			evs = g.closeNow()
			missed := missedSlots(evs)
			if slices.Contains(missed, g.slot("Carol")) || !slices.Equal(missed, []int{g.slot("Heidi"), g.slot("Ivan")}) {
				t.Fatalf("missed votes %v: Carol is not charged, Heidi and Ivan are", missed)
			}
			g.checkReplay()
		})
	}
	t.Run("charged when the voter then leaves a NULL", func(t *testing.T) {
		g := clearedVoteGame(t)
		g.ok("Erin", Private, CmdShoot, "Frank")
		g.ok("Carol", Thread, CmdVote, "null")
		if tl := g.s.Tally(g.now); !slices.Contains(tl.NotVoted, "Carol") {
			t.Fatalf("after a NULL Carol has not voted: %v", tl.NotVoted)
		}
		if missed := missedSlots(g.closeNow()); !slices.Contains(missed, g.slot("Carol")) {
			t.Fatalf("a NULL placed after the notice is a missed vote: %v", missed)
		}
	})
	t.Run("charged when the voter leaves a NULL after a modkill", func(t *testing.T) {
		g := clearedVoteGame(t)
		g.ok("ref", Private, CmdModkill, "Frank")
		g.ok("Carol", Thread, CmdVote, "null")
		if missed := missedSlots(g.closeNow()); !slices.Contains(missed, g.slot("Carol")) {
			t.Fatalf("a NULL placed after the notice is a missed vote: %v", missed)
		}
	})
	t.Run("a new vote counts as usual", func(t *testing.T) {
		g := clearedVoteGame(t)
		g.ok("Erin", Private, CmdShoot, "Frank")
		g.vote("Carol", "Grace")
		if g.p("Carol").Cleared != 0 {
			t.Fatal("a new vote ends the cleared state")
		}
		if missed := missedSlots(g.closeNow()); slices.Contains(missed, g.slot("Carol")) {
			t.Fatalf("Carol voted again: %v", missed)
		}
	})
	t.Run("cleared counts for that round only", func(t *testing.T) {
		g := village(t)
		g.vote("Carol", "Frank")
		g.vote("Alice", "Grace")
		g.vote("Bob", "Heidi")
		g.ok("ref", Private, CmdModkill, "Frank")
		evs := g.closeNow() // Grace and Heidi tied: a runoff
		if slices.Contains(missedSlots(evs), g.slot("Carol")) || g.s.Round != Runoff {
			t.Fatalf("Carol is not charged entering the runoff: %v", missedSlots(evs))
		}
		if !slices.Contains(g.s.Tally(g.now).NotVoted, "Carol") {
			t.Fatal("in the runoff Carol has no vote")
		}
		g.closeNow() // tied again: the tie extension, which is no close
		if missed := missedSlots(g.closeNow()); !slices.Contains(missed, g.slot("Carol")) {
			t.Fatalf("a runoff is a round of its own: %v", missed)
		}
	})
}

func TestN5_PassReplacesShoot(t *testing.T) {
	g := village(t)
	g.toNight()
	g.ok("Erin", Private, CmdPass, "")
	g.ok("Erin", Private, CmdShoot, "Frank") // a SHOOT replaces a PASS
	if g.s.Night.ShotOf(g.slot("Erin")) != g.slot("Frank") {
		t.Fatal("the SHOOT after a PASS must stand")
	}
	g.ok("Erin", Private, CmdPass, "") // and a PASS replaces a SHOOT
	if g.s.Night.ShotOf(g.slot("Erin")) != 0 || !g.s.Night.Passed(g.slot("Erin")) || g.s.OwesAction(g.slot("Erin")) {
		t.Fatalf("the PASS must stand: %+v", g.s.Night)
	}
	g.ok("Alice", Private, CmdKill, "Grace")
	evs := g.closeNow()
	d := find(evs, EvDawn)
	if d == nil || len(d.Deaths) != 1 || d.Deaths[0].Slot != g.slot("Grace") || !g.p("Frank").Alive {
		t.Fatalf("the replaced shot must not be taken: %+v", d)
	}
	if v := g.p("Erin"); v.Shots != 2 || v.LastShotNight != 0 {
		t.Fatalf("no shot was used: %d left, last shot night %d", v.Shots, v.LastShotNight)
	}
	// The next night's shot is not "consecutive": last night was a pass.
	g.toNightFrom("Frank")
	g.ok("Erin", Private, CmdShoot, "Heidi")
	g.ok("Alice", Private, CmdKill, "Dave")
	g.closeNow()
	if g.p("Heidi").Alive || g.p("Erin").Shots != 1 || g.p("Erin").LastShotNight != 2 {
		t.Fatalf("the shot after a replaced one: Heidi alive %v, shots %d", g.p("Heidi").Alive, g.p("Erin").Shots)
	}
	g.checkReplay()
}

func TestD8_ParseGameTimeForms(t *testing.T) {
	ny := mustZone(DefaultZone)
	berlin := mustZone("Europe/Berlin")
	at := func(loc *time.Location, h, m int) time.Time { return time.Date(2026, 12, 7, h, m, 0, 0, loc).UTC() }
	cases := map[string]time.Time{
		"2026-12-07 18:00":               at(ny, 18, 0),
		"2026-12-07T18:00":               at(ny, 18, 0),
		"2026-12-07t18:00":               at(ny, 18, 0),
		"2026-12-07T18:00:00":            at(ny, 18, 0),
		"2026-12-07 6pm":                 at(ny, 18, 0),
		"2026-12-07 6:30PM":              at(ny, 18, 30),
		"2026-12-07 18:00.":              at(ny, 18, 0),
		"2026-12-07 18:00 UTC":           at(time.UTC, 18, 0),
		"2026-12-07 18:00 utc":           at(time.UTC, 18, 0),
		"2026-12-07 18:00 GMT":           at(time.UTC, 18, 0),
		"2026-12-07 18:00 EST":           at(ny, 18, 0),
		"2026-12-07 18:00 CT":            at(mustZone(SeedWeekendZone), 18, 0),
		"2026-12-07 18:00 Europe/Berlin": at(berlin, 18, 0),
		"2026-12-07T18:00 Europe/Berlin": at(berlin, 18, 0),
		"2026-12-07T18:00-05:00":         at(time.UTC, 23, 0),
		"2026-12-07T18:00+0100":          at(time.UTC, 17, 0),
		"2026-12-07T18:00+01":            at(time.UTC, 17, 0),
		"2026-12-07 18:00 +01:00":        at(time.UTC, 17, 0),
		"2026-12-07 18:00 UTC+1":         at(time.UTC, 17, 0),
		"2026-12-07 18:00 UTC-05:30":     at(time.UTC, 23, 30),
		"2026-12-07T18:00:00Z":           at(time.UTC, 18, 0),
		"2026-12-07T18:00Z":              at(time.UTC, 18, 0),
	}
	for in, want := range cases {
		got, err := ParseTimeIn(in, ny)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q = %v (%v), want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"friday", "2026-12-07", "2026-12-07 25:00", "07/12/2026 18:00",
		"2026-12-07 18:00 Mars/Olympus", "2026-12-07 18:00 EST5EDT", "2026-12-07T18:00+01:00 UTC",
		"2026-12-07 18:00 +25:00", "2026-12-07 18:00 in the evening"} {
		_, err := ParseTimeIn(bad, ny)
		if err == nil {
			t.Errorf("%q was read as a time", bad)
		} else if !strings.Contains(err.Error(), "2026-12-04 18:00 UTC") {
			t.Errorf("%q: the error must say how to write it: %v", bad, err)
		}
	}
	// DEADLINE is read by the engine, in the game's zone.
	setup := Classic()
	setup.Zone = "Europe/Berlin"
	g := rigged(t, setup, Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
	evs, err := g.apply(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Text: "2026-12-02T18:00"})
	if e := find(evs, EvDeadlineSet); err != nil || e == nil || !e.Deadline.Equal(time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)) {
		t.Fatalf("DEADLINE 2026-12-02T18:00 in a Berlin game: %+v %v", e, err)
	}
	_, err = g.apply(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Text: "tomorrow"})
	if r, ok := err.(*Refusal); !ok || r.Reason != BadArgument || !strings.Contains(r.Message, "Europe/Berlin") {
		t.Fatalf("an unreadable DEADLINE is refused naming the game's zone: %v", err)
	}
	// The refusal's examples are dated after the game's clock, in its
	// zone, and each is a time the engine reads as a future deadline.
	for _, text := range []string{"tomorrow", ""} {
		_, err = g.apply(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Text: text})
		r, ok := err.(*Refusal)
		if !ok || r.Reason != BadArgument || strings.Contains(r.Message, "New York") {
			t.Fatalf("DEADLINE %q: %v", text, err)
		}
		ex := regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]18:00(?: UTC| Europe/Berlin|[+-]\d\d:\d\d)?`).FindAllString(r.Message, -1)
		if len(ex) != 4 {
			t.Fatalf("DEADLINE %q: examples %q in %q", text, ex, r.Message)
		}
		for _, e := range ex {
			at, err := g.s.ParseGameTime(e)
			if err != nil || !at.After(g.now) {
				t.Errorf("DEADLINE %q suggests %q, read as %v (%v), not after the game's clock %v", text, e, at, err, g.now)
			}
		}
	}
}
