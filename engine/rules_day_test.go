package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// town7 is a small game for day rules: Alice and Bob are Mafia.
func town7(t *testing.T) *game {
	return rigged(t, Classic(), Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
}

func TestD1_VoteSyntaxAndNames(t *testing.T) {
	g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	g.s.Players[0].Name = "Mary-Jo O'Neil"
	g.s.Players[1].Name = "Marcus"
	g.s.Players[2].Name = "Martin"
	cases := []struct {
		voter, target string
		want          string
		reason        Reason
	}{
		{"", "mary jo oneil", "Mary-Jo O'Neil", ""},
		{"", "MARYJO", "Mary-Jo O'Neil", ""}, // unique prefix, any case
		{"", "marc", "Marcus", ""},
		{"", "mar", "", AmbiguousName},
		{"", "Zed", "", UnknownName},
		{"Dave", "Martin", "Martin", ""}, // Voter >> Target as oneself
		{"dave", "Martin", "Martin", ""},
		{"Erin", "Martin", "", NotYourName}, // nobody votes as someone else
	}
	for _, c := range cases {
		evs, err := g.apply(Command{Verb: CmdVote, By: PlayerActor(4), Channel: Thread, Voter: c.voter, Target: c.target})
		if c.reason != "" {
			r, ok := err.(*Refusal)
			if !ok || r.Reason != c.reason {
				t.Errorf("%s >> %s: want %s, got %v", c.voter, c.target, c.reason, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s >> %s: %v", c.voter, c.target, err)
			continue
		}
		if got := g.s.name(g.s.Player(4).Vote); got != c.want {
			t.Errorf("%s >> %s: vote for %q, want %q", c.voter, c.target, got, c.want)
		}
		_ = evs
	}
	// Accents need not be typed, and the same name always has one key.
	g.s.Players[5].Name = "José Ñúñez"
	g.vote("Dave", "jose nunez")
	if g.p("José Ñúñez").Slot != g.s.Player(4).Vote {
		t.Errorf("accented name not matched")
	}
	for _, n := range []string{"José Ñúñez", "Mary-Jo O'Neil", "ǅemal", "Ωmega", "\xf1û"} {
		if k := NormalizeName(n); NormalizeName(k) != k {
			t.Errorf("NormalizeName(%q) = %q is not stable", n, k)
		}
	}
	// An unknown or ambiguous name lists candidates and leaves the vote as it was.
	before := g.s.Player(4).Vote
	r := g.refused(AmbiguousName, "Dave", Thread, CmdVote, "ma")
	if len(r.Candidates) != 3 {
		t.Errorf("candidates for 'ma': %v", r.Candidates)
	}
	r = g.refused(UnknownName, "Dave", Thread, CmdVote, "Martn")
	if !slices.Contains(r.Candidates, "Martin") {
		t.Errorf("candidates for 'Martn': %v", r.Candidates)
	}
	if g.s.Player(4).Vote != before {
		t.Errorf("a refused vote changed the vote")
	}
}

func TestD2_OnlyLivingVoteForLiving(t *testing.T) {
	g := town7(t)
	g.vote("Carol", "Dave")
	g.vote("Carol", "Erin") // a new vote replaces the old
	if g.p("Carol").Vote != g.slot("Erin") {
		t.Fatalf("vote not replaced")
	}
	g.ok("ref", Private, CmdModkill, "Frank")
	g.refused(Dead, "Frank", Thread, CmdVote, "Carol")
	// A vote for the dead says who is dead, how they died, and who can be
	// voted for instead.
	r := g.refused(Dead, "Carol", Thread, CmdVote, "Frank")
	want := "Frank is dead (removed by the referee); the living players are Alice, Bob, Carol, Dave, Erin and Grace"
	if r.Message != want {
		t.Errorf("vote for the dead: %q, want %q", r.Message, want)
	}
	g.refused(UnknownName, "Carol", Thread, CmdVote, "Zed")
	g.ok("Carol", Thread, CmdUnvote, "")
	if g.p("Carol").Vote != 0 {
		t.Fatalf("UNVOTE kept the vote")
	}
	g.refused(NotAllowed, "Carol", Private, CmdVote, "Erin") // votes are public
}

func TestD3_NullVoteIsAMissedVote(t *testing.T) {
	g := town7(t)
	for _, n := range []string{"Bob", "Carol", "Dave", "Erin", "Frank", "Grace"} {
		g.vote(n, "Alice")
	}
	g.ok("Alice", Thread, CmdVote, "NULL")
	if g.p("Alice").Vote != NullVote {
		t.Fatalf("null vote not recorded")
	}
	evs := g.closeNow()
	m := find(evs, EvMissedVote)
	if m == nil || m.Slot != g.slot("Alice") || m.Count != 1 {
		t.Fatalf("null vote at the close is not a missed vote: %+v", m)
	}
}

func TestD4_LockAndUnlock(t *testing.T) {
	g := town7(t)
	g.refused(NotAllowed, "Carol", Thread, CmdLock, "") // nothing to lock
	g.ok("Carol", Thread, CmdVote, "null")
	g.refused(NotAllowed, "Carol", Thread, CmdLock, "") // a null vote cannot be locked
	g.vote("Carol", "Dave")
	g.lock("Carol")
	if !g.p("Carol").Locked {
		t.Fatal("not locked")
	}
	g.ok("Carol", Thread, CmdUnlock, "")
	if g.p("Carol").Locked {
		t.Fatal("still locked")
	}
	g.lock("Carol")
	g.vote("Carol", "Erin") // a locked player may change; the new vote is unlocked
	if g.p("Carol").Locked || g.p("Carol").Vote != g.slot("Erin") {
		t.Fatalf("changed vote: locked=%v vote=%d", g.p("Carol").Locked, g.p("Carol").Vote)
	}
}

func TestD5_EarlyClose(t *testing.T) {
	t.Run("locks of everyone not in jeopardy", func(t *testing.T) {
		g := town7(t)
		for _, n := range []string{"Alice", "Carol", "Dave", "Erin", "Frank", "Grace"} {
			g.vote(n, "Bob")
		}
		g.vote("Bob", "Alice")
		// Alice and Bob have votes on them; the other five must lock.
		for i, n := range []string{"Carol", "Dave", "Erin", "Frank"} {
			// The tally names who still has to lock (D15 says why).
			want := []string{"Carol", "Dave", "Erin", "Frank", "Grace"}[i:]
			if got := g.s.Tally(g.now).ToLock; !reflect.DeepEqual(got, want) {
				t.Fatalf("the tally says %v still have to lock, want %v", got, want)
			}
			g.lock(n)
			if g.s.Day != 1 || g.s.Phase != DayPhase {
				t.Fatalf("closed before every player out of jeopardy locked")
			}
		}
		evs := g.ok("Grace", Thread, CmdLock, "")
		closed := find(evs, EvRoundClosed)
		if closed == nil || closed.Outcome != Eliminated || closed.Target != g.slot("Bob") {
			t.Fatalf("no early close: %+v", closed)
		}
		if g.s.Phase != NightPhase {
			t.Fatalf("phase %s after the close", g.s.Phase)
		}
	})
	t.Run("no close without a lock", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson)
		// A cycle: everyone is in jeopardy, no one has locked.
		g.vote("Alice", "Bob")
		g.vote("Bob", "Carol")
		g.vote("Carol", "Dave")
		g.vote("Dave", "Alice")
		if g.s.Phase != DayPhase {
			t.Fatal("closed with no lock")
		}
		// Everyone is in jeopardy and one has locked: D5 is met, and the
		// four-way tie goes to a runoff.
		evs := g.ok("Dave", Thread, CmdLock, "")
		if c := find(evs, EvRoundClosed); c == nil || c.Outcome != ToRunoff {
			t.Fatalf("did not close once a lock came in and all are in jeopardy: %+v", c)
		}
	})
	t.Run("three players: two locks on one target", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson)
		g.ok("ref", Private, CmdModkill, "Dave")
		g.vote("Alice", "Bob")
		g.lock("Alice")
		g.vote("Carol", "Alice")
		g.lock("Carol")
		g.vote("Bob", "Alice")
		if g.s.Phase != DayPhase {
			t.Fatal("closed on locks on different targets")
		}
		// Bob, in jeopardy, has not locked; one lock on Alice is not enough.
		evs := g.ok("Bob", Thread, CmdLock, "")
		if c := find(evs, EvRoundClosed); c == nil || c.Target != g.slot("Alice") {
			t.Fatalf("two locks on Alice did not close the round: %+v", c)
		}
	})
}

func TestD6_RoundLengths(t *testing.T) {
	g := &game{t: t, now: t0}
	s, evs, err := NewGame("len", "ref@example.org", Classic(), t0)
	if err != nil {
		t.Fatal(err)
	}
	g.s, g.log = s, evs
	for i := range 11 {
		g.apply(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: testNames[i] + "@x.org"}, Channel: Signup, Name: testNames[i]})
	}
	evs = g.ok("ref", Private, CmdStart, "")
	day := find(evs, EvDayStarted)
	if day == nil || day.Day != 1 || !day.Deadline.Equal(t0.Add(36*time.Hour)) {
		t.Fatalf("day 1 must open at the start with a 36 h deadline: %+v", day)
	}
	// Tie into a runoff: 24 h.
	g.vote("Alice", "Bob")
	g.vote("Bob", "Alice")
	evs = g.closeNow()
	ro := find(evs, EvRunoffStarted)
	if ro == nil || !ro.Deadline.Equal(g.now.Add(24*time.Hour)) {
		t.Fatalf("runoff must last 24 h: %+v", ro)
	}
	// The referee may extend any round.
	before := g.s.Deadline
	g.apply(Command{Verb: CmdExtend, By: Referee, Channel: Private, Duration: 5 * time.Hour})
	if !g.s.Deadline.Equal(before.Add(5 * time.Hour)) {
		t.Fatalf("EXTEND 5h: deadline %v, want %v", g.s.Deadline, before.Add(5*time.Hour))
	}
}

func chicago(y int, m time.Month, d, h int) time.Time {
	return time.Date(y, m, d, h, 0, 0, 0, mustZone(SeedWeekendZone))
}

func TestD7_Weekend(t *testing.T) {
	cases := []struct {
		name          string
		start         time.Time
		wantClose     time.Time
		wantInWeekend bool
	}{
		{"Thursday start lands Friday night", chicago(2026, 12, 3, 10), chicago(2026, 12, 7, 7), true},
		{"Wednesday start closes Thursday", chicago(2026, 12, 2, 10), chicago(2026, 12, 3, 22), false},
		{"Friday 05:00 lands Saturday", chicago(2026, 12, 4, 5), chicago(2026, 12, 7, 7), true},
		{"Saturday start lands Monday 01:00", chicago(2026, 12, 5, 13), chicago(2026, 12, 7, 7), true},
		{"Saturday start lands Monday 07:00 exactly", chicago(2026, 12, 5, 19), chicago(2026, 12, 7, 7), false},
		// Daylight saving ends on Sunday 2026-11-01: Monday 07:00 is CST.
		{"across the end of DST", chicago(2026, 10, 29, 10), chicago(2026, 11, 2, 7), true},
		// Daylight saving starts on Sunday 2027-03-14: Monday 07:00 is CDT.
		{"across the start of DST", chicago(2027, 3, 11, 10), chicago(2027, 3, 15, 7), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := InWeekend(c.start.Add(36 * time.Hour)); got != c.wantInWeekend {
				t.Errorf("InWeekend(%v) = %v", c.start.Add(36*time.Hour), got)
			}
			s := &State{Deadline: dayDeadline(c.start, 36*time.Hour)}
			if got := s.closeAt(); !got.Equal(c.wantClose) {
				t.Errorf("deadline %v, want %v", got.In(mustZone(SeedWeekendZone)), c.wantClose)
			}
		})
	}
	if h := chicago(2026, 11, 2, 7).UTC().Hour(); h != 13 {
		t.Errorf("Monday 07:00 CST is %02d:00 UTC, want 13:00", h)
	}
	if h := chicago(2027, 3, 15, 7).UTC().Hour(); h != 12 {
		t.Errorf("Monday 07:00 CDT is %02d:00 UTC, want 12:00", h)
	}

	t.Run("early close waits for Monday", func(t *testing.T) {
		setup := Classic()
		setup.ReminderBefore = 0
		g := riggedAt(t, chicago(2026, 12, 4, 16), setup, Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		g.at(chicago(2026, 12, 5, 12)) // Saturday
		g.vote("Alice", "Bob")
		for _, n := range []string{"Bob", "Carol", "Dave", "Erin"} {
			g.vote(n, "Alice")
		}
		for _, n := range []string{"Carol", "Dave", "Erin"} {
			g.lock(n)
		}
		if g.s.Phase != DayPhase {
			t.Fatal("an early close happened on the weekend")
		}
		if d, _ := NextDeadline(g.s); !d.Equal(chicago(2026, 12, 7, 7)) {
			t.Fatalf("held close at %v, want Monday 07:00", d)
		}
		evs := g.at(chicago(2026, 12, 7, 7))
		if find(evs, EvRoundClosed) == nil {
			t.Fatal("no close on Monday 07:00")
		}
	})
	t.Run("weekend close announced before the weekend", func(t *testing.T) {
		g := riggedAt(t, chicago(2026, 12, 3, 10), Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		g.ok("ref", Private, CmdWeekendClose, "")
		g.at(chicago(2026, 12, 4, 23)) // Friday night: past the deadline, held
		if g.s.Phase != DayPhase {
			t.Fatal("closed on the weekend before everyone voted")
		}
		for _, n := range []string{"Bob", "Carol", "Dave", "Erin"} {
			g.vote(n, "Alice")
		}
		if g.s.Phase != DayPhase {
			t.Fatal("closed before every living player voted")
		}
		evs := g.ok("Alice", Thread, CmdVote, "Bob")
		if c := find(evs, EvRoundClosed); c == nil || c.Target != g.slot("Alice") {
			t.Fatalf("announced weekend close with every vote in did not close: %+v", c)
		}
	})
	t.Run("weekend close cannot be announced on the weekend", func(t *testing.T) {
		g := riggedAt(t, chicago(2026, 12, 5, 10), Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		g.refused(NotAllowed, "ref", Private, CmdWeekendClose, "")
	})
	t.Run("nights ignore the weekend", func(t *testing.T) {
		g := riggedAt(t, chicago(2026, 12, 4, 12), Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		g.vote("Bob", "Carol")
		g.ok("ref", Private, CmdClose, "")
		if g.s.Phase != NightPhase {
			t.Fatal("no night")
		}
		evs := g.at(chicago(2026, 12, 5, 6)) // Saturday 06:00: the 18 h mark
		if find(evs, EvDawn) == nil {
			t.Fatal("the night did not end on the weekend")
		}
	})
}

func TestD8_GameTimeZone(t *testing.T) {
	g := town7(t)
	if g.s.GameZone().String() != "America/New_York" {
		t.Fatalf("game zone %s", g.s.GameZone())
	}
	got, err := g.s.ParseGameTime("2026-12-04 18:00")
	if err != nil || !got.Equal(time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)) {
		t.Fatalf("18:00 New York in December = %v (%v), want 23:00 UTC", got, err)
	}
	got, err = g.s.ParseGameTime("2026-07-04 18:00")
	if err != nil || !got.Equal(time.Date(2026, 7, 4, 22, 0, 0, 0, time.UTC)) {
		t.Fatalf("18:00 New York in July = %v (%v), want 22:00 UTC", got, err)
	}
	// Every deadline is an absolute instant; the tally carries it.
	tl := g.s.Tally(g.now)
	if !tl.Deadline.Equal(g.s.Deadline) || tl.Left() != 36*time.Hour {
		t.Fatalf("tally deadline %v left %v", tl.Deadline, tl.Left())
	}
	if _, err := ParseSetup(Classic(), "zone=Mars/Olympus"); err == nil {
		t.Fatal("an unknown zone was accepted")
	}
}

func TestD9_Extensions(t *testing.T) {
	g := town7(t)
	evs := g.ok("Carol", Thread, CmdExtend, "")
	if e := find(evs, EvExtensionAsked); e == nil || !e.To.Referee {
		t.Fatalf("request did not go to the referee: %+v", e)
	}
	g.refused(Duplicate, "Carol", Private, CmdExtend, "")
	before := g.s.Deadline
	g.apply(Command{Verb: CmdGrant, By: Referee, Channel: Private, Duration: 6 * time.Hour})
	if !g.s.Deadline.Equal(before.Add(6 * time.Hour)) {
		t.Fatalf("GRANT 6h: %v", g.s.Deadline)
	}
	g.ok("Dave", Thread, CmdExtend, "")
	evs = g.ok("ref", Private, CmdDeny, "")
	if e := find(evs, EvExtensionDenied); e == nil || e.Slot != g.slot("Dave") {
		t.Fatalf("deny: %+v", e)
	}
	g.refused(NotAllowed, "ref", Private, CmdGrant, "")

	// In a runoff the first request is granted at once by 12 h.
	g.vote("Carol", "Alice")
	g.vote("Dave", "Bob")
	g.closeNow()
	if g.s.Round != Runoff {
		t.Fatalf("no runoff")
	}
	before = g.s.Deadline
	evs = g.ok("Erin", Thread, CmdExtend, "")
	if e := find(evs, EvExtended); e == nil || !e.Auto || !g.s.Deadline.Equal(before.Add(12*time.Hour)) {
		t.Fatalf("first runoff request not granted by 12 h: %+v", e)
	}
	evs = g.ok("Frank", Thread, CmdExtend, "")
	if find(evs, EvExtensionAsked) == nil {
		t.Fatal("the second runoff request should go to the referee")
	}
}

func TestD10_CloseEliminatesTheLeader(t *testing.T) {
	g := town7(t)
	g.vote("Carol", "Dave")
	g.vote("Erin", "Dave")
	g.vote("Frank", "Grace")
	g.vote("Grace", "Frank")
	g.vote("Alice", "Carol")
	evs := g.closeNow()
	c := find(evs, EvRoundClosed)
	if c == nil || c.Outcome != Eliminated || c.Target != g.slot("Dave") || c.Count != 2 {
		t.Fatalf("close: %+v", c)
	}
	if c.Tally == nil || c.Tally.Counts[0].Name != "Dave" || c.Tally.Counts[0].Votes != 2 {
		t.Fatalf("final tally: %+v", c.Tally)
	}
	d := find(evs, EvPlayerDied)
	if d == nil || d.Slot != g.slot("Dave") || Cause(d.Reason) != ByVote || d.RevealsRole() || !d.To.Public {
		t.Fatalf("death: %+v", d)
	}
	// A vote by a dead player never counts.
	g2 := town7(t)
	g2.vote("Carol", "Dave")
	g2.vote("Erin", "Frank")
	g2.vote("Grace", "Frank")
	g2.ok("ref", Private, CmdModkill, "Erin")
	evs = g2.closeNow()
	if c := find(evs, EvRoundClosed); c.Outcome != ToRunoff {
		t.Fatalf("a dead player's vote counted: %+v", c)
	}
}

func TestD11_RunoffCarriesVotes(t *testing.T) {
	g := town7(t)
	g.vote("Alice", "Carol")
	g.vote("Bob", "Carol")
	g.vote("Erin", "Dave")
	g.vote("Frank", "Dave")
	g.vote("Grace", "Alice")
	g.lock("Alice")
	g.vote("Carol", "Grace")
	g.vote("Dave", "null")
	evs := g.closeNow()
	ro := find(evs, EvRunoffStarted)
	if ro == nil || !slices.Equal(ro.Candidates, []int{g.slot("Carol"), g.slot("Dave")}) {
		t.Fatalf("runoff: %+v", ro)
	}
	for n, want := range map[string]string{"Alice": "Carol", "Bob": "Carol", "Erin": "Dave", "Frank": "Dave", "Grace": "", "Carol": "", "Dave": ""} {
		if got := g.s.voteName(g.p(n).Vote); got != want {
			t.Errorf("%s votes %q in the runoff, want %q", n, got, want)
		}
		if g.p(n).Locked {
			t.Errorf("%s still locked", n)
		}
	}
	r := g.refused(BadTarget, "Grace", Thread, CmdVote, "Alice")
	if len(r.Candidates) != 2 {
		t.Errorf("candidates: %v", r.Candidates)
	}
	g.vote("Grace", "Dave")
	g.vote("Erin", "Carol") // a carried vote may change
	g.vote("Carol", "Dave")
	g.vote("Dave", "Carol")
	evs = g.closeNow()
	if c := find(evs, EvRoundClosed); c == nil || c.Outcome != Eliminated || c.Target != g.slot("Carol") {
		t.Fatalf("runoff close: %+v", c)
	}
}

func TestD12_UnbreakableTie(t *testing.T) {
	g := town7(t)
	tie := func(grace string) {
		for voter, target := range map[string]string{"Alice": "Carol", "Bob": "Dave", "Carol": "Dave",
			"Dave": "Carol", "Erin": "Carol", "Frank": "Dave", "Grace": grace} {
			g.vote(voter, target)
		}
	}
	tie("Alice")
	g.closeNow()
	if g.s.Round != Runoff {
		t.Fatal("no runoff")
	}
	tie("null")
	evs := g.closeNow()
	te := find(evs, EvTieExtended)
	if te == nil || !te.Deadline.Equal(g.now.Add(12*time.Hour)) || hasType(evs, EvMissedVote) {
		t.Fatalf("a tied runoff must be extended once by 12 h: %+v", evs)
	}
	evs = g.closeNow()
	c := find(evs, EvRoundClosed)
	if c == nil || c.Outcome != Forfeited || hasType(evs, EvPlayerDied) {
		t.Fatalf("still tied: want the day forfeited, got %+v", c)
	}
	if g.s.Phase != NightPhase {
		t.Fatalf("phase %s after a forfeit", g.s.Phase)
	}
}

func TestD13_NoVotesNoElimination(t *testing.T) {
	g := town7(t)
	evs := g.closeNow()
	c := find(evs, EvRoundClosed)
	if c == nil || c.Outcome != NoVotes || hasType(evs, EvPlayerDied) || g.s.Phase != NightPhase {
		t.Fatalf("close with no votes: %+v phase %s", c, g.s.Phase)
	}
	if count(evs, EvMissedVote) != 7 {
		t.Fatalf("everyone missed a vote: %d", count(evs, EvMissedVote))
	}
}

func TestD14_MissedVotes(t *testing.T) {
	t.Run("second miss mid-runoff removes the player", func(t *testing.T) {
		g := town7(t)
		g.closeNow() // day 1: everyone misses one
		g.ok("Alice", Private, CmdKill, "Grace")
		g.closeNow() // night
		// Day 2: a tie into a runoff; Frank misses his second vote at the opening close.
		g.vote("Alice", "Carol")
		g.vote("Bob", "Dave")
		g.vote("Carol", "Dave")
		g.vote("Dave", "Carol")
		g.vote("Erin", "Alice")
		evs := g.closeNow()
		if !hasType(evs, EvPlayerDied) || g.p("Frank").Alive {
			t.Fatalf("Frank's second miss did not remove him: %+v", evs)
		}
		if c := find(evs, EvRoundClosed); c.Outcome != Void || !slices.Equal(c.Slots, []int{g.slot("Frank")}) {
			t.Fatalf("the round should be void: %+v", c)
		}
		if s := find(evs, EvSuspended); s == nil || s.Address != "Frank@example.org" {
			t.Fatalf("no suspension for the next game: %+v", s)
		}
		if g.s.Phase != NightPhase {
			t.Fatalf("night should begin, phase %s", g.s.Phase)
		}
	})
	t.Run("a miss entering the runoff and one in it", func(t *testing.T) {
		g := town7(t)
		g.vote("Alice", "Carol")
		g.vote("Bob", "Dave")
		g.vote("Carol", "Dave")
		g.vote("Dave", "Carol")
		g.vote("Erin", "Alice")
		g.vote("Frank", "Alice")
		evs := g.closeNow() // Grace misses entering the runoff
		if m := find(evs, EvMissedVote); m == nil || m.Slot != g.slot("Grace") || m.Count != 1 {
			t.Fatalf("missed vote entering the runoff: %+v", m)
		}
		g.vote("Alice", "Carol")
		g.vote("Bob", "Dave")
		g.vote("Erin", "Dave")
		evs = g.closeNow()
		var missed []int
		for _, e := range evs {
			if e.Type == EvMissedVote {
				missed = append(missed, e.Slot)
			}
		}
		if !slices.Contains(missed, g.slot("Grace")) || g.p("Grace").Alive {
			t.Fatalf("Grace's second miss (in the runoff) must remove her: %v", missed)
		}
	})
	t.Run("several reach two misses at one close", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
		g.closeNow()
		g.ok("Alice", Private, CmdNoKill, "")
		g.closeNow() // night, no whack: extra round
		if !g.s.Extra {
			t.Fatal("no extra round")
		}
		for _, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank"} {
			g.vote(n, "Carol")
		}
		evs := g.closeNow()
		var died []int
		for _, e := range evs {
			if e.Type == EvPlayerDied {
				died = append(died, e.Slot)
			}
		}
		if !slices.Equal(died, []int{g.slot("Grace"), g.slot("Heidi"), g.slot("Ivan")}) {
			t.Fatalf("all three with two misses must be removed: %v", died)
		}
		if c := find(evs, EvRoundClosed); c.Outcome != Void || hasType(evs, EvPlayerDied) && !g.p("Carol").Alive {
			t.Fatalf("the round's result must be void: %+v", c)
		}
	})
	t.Run("the missed-vote post names the count", func(t *testing.T) {
		g := town7(t)
		evs := g.closeNow()
		m := find(evs, EvMissedVote)
		if m == nil || !m.To.Public || m.Count != 1 || m.Name == "" {
			t.Fatalf("missed vote event: %+v", m)
		}
	})
}

func TestD15_Tally(t *testing.T) {
	g := town7(t)
	g.vote("Alice", "Carol")
	g.vote("Bob", "Carol")
	g.lock("Bob")
	g.vote("Carol", "Dave")
	g.ok("Dave", Thread, CmdVote, "null")
	g.ok("Erin", Thread, CmdExtend, "")
	g.after(2 * time.Hour)
	tl := g.s.Tally(g.now)
	if len(tl.Counts) != 2 || tl.Counts[0].Name != "Carol" || tl.Counts[0].Votes != 2 ||
		!slices.Equal(tl.Counts[0].Voters, []string{"Alice", "Bob"}) || tl.Counts[1].Name != "Dave" {
		t.Fatalf("counts: %+v", tl.Counts)
	}
	if len(tl.Votes) != 7 || !tl.Votes[1].Locked || !tl.Votes[3].Null || tl.Votes[0].Target != "Carol" {
		t.Fatalf("votes: %+v", tl.Votes)
	}
	if !slices.Equal(tl.NotVoted, []string{"Dave", "Erin", "Frank", "Grace"}) {
		t.Fatalf("not voted: %v", tl.NotVoted)
	}
	if tl.Left() != 34*time.Hour || !tl.Deadline.Equal(t0.Add(36*time.Hour)) {
		t.Fatalf("deadline %v left %v", tl.Deadline, tl.Left())
	}
	if len(tl.Notes) == 0 {
		t.Fatalf("the waiting extension request should be noted")
	}
	evs := g.ok("Frank", Thread, CmdTally, "")
	if e := find(evs, EvTallyShown); e == nil || e.To.Slot != g.slot("Frank") || e.Tally == nil {
		t.Fatalf("TALLY on request: %+v", e)
	}
}
