package engine

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// signup creates a game of the setup and signs up its players.
func signup(t *testing.T, setup Setup) *game {
	t.Helper()
	s, evs, err := NewGame("demo1", "ref@example.org", setup, t0)
	if err != nil {
		t.Fatal(err)
	}
	g := &game{t: t, s: s, log: evs, now: t0}
	for i := 0; i < setup.Players; i++ {
		_, err := g.apply(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: testNames[i] + "@example.org"},
			Channel: Signup, Name: testNames[i], Token: "tok" + strings.ToLower(testNames[i])})
		if err != nil {
			t.Fatalf("join %s: %v", testNames[i], err)
		}
	}
	return g
}

func TestS1_Setups(t *testing.T) {
	c, m := Classic(), Mafia150()
	if c.Players != 11 || c.Mafia != 3 || c.Inspectors != 1 || c.Townspeople() != 7 || c.InspectorResult != Alignment || !c.InspectorKnowsMafioso {
		t.Errorf("classic: %+v", c)
	}
	if m.Players != 25 || m.Mafia != 7 || m.Inspectors != 1 || m.Doctors != 1 || m.Vigilantes != 1 || m.Townspeople() != 15 || m.InspectorResult != ExactRole {
		t.Errorf("mafia150: %+v", m)
	}
	if c.Summary() != "11 players: 3 Mafia, 1 Inspector, 7 Townspeople; no day round closes from Friday 17:00 to Monday 07:00 Chicago time" {
		t.Errorf("summary %q", c.Summary())
	}
	bad := []struct{ args, want string }{
		{"players=5 mafia=2 inspectors=2 doctors=1 vigilantes=1", "do not fit"},
		{"players=6 mafia=4", "would win at the start"},
		{"players=6 mafia=1 inspectors=1", "would know the whole Mafia"},
		{"mafia=0", "at least one Mafioso"},
		{"inspector_result=maybe", "inspector_result"},
		{"day_length=10m", "at least an hour"},
		{"colour=red", "unknown setup key"},
		{"players=x", "bad value"},
		{"weekend=maybe", "bad value for weekend"},
		{"zone=Europe/Berlin weekend_zone=Mars/Olympus", "weekend_zone"},
		{"doctors=1", "at least one Mafioso"}, // a custom setup has only the roles it names
	}
	for _, b := range bad {
		if _, err := ParseSetup(c, b.args); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("SETUP %s: %v, want an error about %q", b.args, err, b.want)
		}
	}
	s, err := ParseSetup(c, "players=9 mafia=2 inspectors=2 doctors=1 doctor_saves=2 vigilantes=1 vigilante_shots=1 inspector_result=role day_length=1d runoff_length=12h")
	if err != nil || s.Inspectors != 2 || s.Townspeople() != 3 || s.DoctorSaves != 2 || s.DayLength != 24*time.Hour || s.Name != "custom" {
		t.Fatalf("custom: %+v %v", s, err)
	}
	// Any number of Inspectors, each told "Inspector" and nothing of the others.
	setup := s
	setup.ReminderBefore = 0
	g := signup(t, setup)
	g.ok("ref", Private, CmdStart, "")
	var insp []Event
	for _, e := range g.log {
		if e.Type == EvRoleAssigned && e.Role == Inspector {
			insp = append(insp, e)
		}
	}
	if len(insp) != 2 || len(insp[0].Mafiosi) != 0 {
		t.Fatalf("two inspectors: %+v", insp)
	}
	// Nothing about a setup changes after the start.
	g.refused(WrongPhase, "ref", Private, CmdSetup, "classic")

	g2 := signup(t, Classic())
	if _, err := g2.apply(Command{Verb: CmdSetup, By: Referee, Channel: Private, Text: "players=5 mafia=1"}); err == nil {
		t.Fatal("a setup smaller than the sign-ups was accepted")
	}
}

func TestS2_DrawIsUniformAndCommitted(t *testing.T) {
	g := signup(t, Classic())
	evs := g.ok("ref", Private, CmdStart, "")
	drawn := find(evs, EvRolesDrawn)
	commit := find(evs, EvDrawCommitted)
	if drawn == nil || commit == nil || !commit.To.Public || commit.RevealsRole() || drawn.To.Public {
		t.Fatalf("draw: %+v / %+v", drawn, commit)
	}
	if !VerifyDraw(commit.Commitment, "demo1", drawn.Names, drawn.Roles, drawn.Salt) {
		t.Fatal("the draw does not match its commitment")
	}
	tampered := slices.Clone(drawn.Roles)
	tampered[0], tampered[1] = tampered[1], tampered[0]
	if tampered[0] != tampered[1] && VerifyDraw(commit.Commitment, "demo1", drawn.Names, tampered, drawn.Salt) {
		t.Fatal("a changed draw verified")
	}
	if VerifyDraw(commit.Commitment, "demo1", drawn.Names, drawn.Roles, "00"+drawn.Salt) {
		t.Fatal("a changed salt verified")
	}
	// Draw order: the first Mafioso drawn is the one the Inspector is told.
	if g.s.Player(drawn.Known).Role != Mafia {
		t.Fatal("the Inspector is told a non-Mafioso")
	}
	// Uniform: every seat is Mafia 3/11 of the time, Inspector 1/11.
	const n = 22000
	mafia := make([]int, 11)
	insp := make([]int, 11)
	src := seeded(42)
	for range n {
		roles, first, _, err := draw(Classic(), 11, src)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range roles {
			switch r {
			case Mafia:
				mafia[i]++
			case Inspector:
				insp[i]++
			}
		}
		if roles[first-1] != Mafia {
			t.Fatal("first Mafioso is not Mafia")
		}
	}
	for i := range 11 {
		// 5 standard deviations either way.
		for _, c := range []struct {
			got int
			p   float64
		}{{mafia[i], 3.0 / 11}, {insp[i], 1.0 / 11}} {
			mean := n * c.p
			sd := math.Sqrt(n * c.p * (1 - c.p))
			if math.Abs(float64(c.got)-mean) > 5*sd {
				t.Errorf("seat %d: %d draws, expected %.0f±%.0f", i+1, c.got, mean, sd)
			}
		}
	}
	// A failing random source refuses START and changes nothing.
	g2 := signup(t, Classic())
	_, err := Apply(g2.s, Command{Verb: CmdStart, By: Referee, Channel: Private}, Env{Now: t0, Rand: bytes.NewReader(nil)})
	if err == nil || g2.s.Phase != SignupPhase {
		t.Fatalf("START without randomness: %v, phase %s", err, g2.s.Phase)
	}
}

func TestS3_RoleMessages(t *testing.T) {
	g := signup(t, Mafia150())
	evs := g.ok("ref", Private, CmdStart, "")
	seen := map[int]bool{}
	for _, e := range evs {
		if e.Type != EvRoleAssigned {
			continue
		}
		if e.To.Public || e.To.Slot != e.Slot || e.To.Mafia || e.To.Referee {
			t.Fatalf("role message to the wrong audience: %+v", e.To)
		}
		seen[e.Slot] = true
		p := g.s.Player(e.Slot)
		if e.Role != p.Role {
			t.Fatalf("%s told %s, is %s", p.Name, e.Role, p.Role)
		}
		if p.Role == Mafia {
			if len(e.Mafiosi) != 6 {
				t.Fatalf("a Mafioso must learn every fellow: %v", e.Mafiosi)
			}
			for _, m := range e.Mafiosi {
				if g.s.Player(m).Role != Mafia || m == e.Slot {
					t.Fatalf("fellow %d is not Mafia", m)
				}
			}
		} else if len(e.Mafiosi) > 0 {
			t.Fatalf("a %s learned the Mafia", p.Role)
		}
	}
	if len(seen) != 25 {
		t.Fatalf("%d role messages for 25 players", len(seen))
	}
	// Classic: the Inspector is told one Mafioso's name.
	g = signup(t, Classic())
	for _, e := range g.ok("ref", Private, CmdStart, "") {
		if e.Type == EvRoleAssigned && e.Role == Inspector && (e.Known == 0 || g.s.Player(e.Known).Role != Mafia) {
			t.Fatalf("classic inspector must know a Mafioso: %+v", e)
		}
	}
}

func TestS4_ReplaceKeepsTheSeat(t *testing.T) {
	g := town7(t)
	g.vote("Carol", "Dave")
	g.lock("Carol")
	g.s.Players[2].Missed = 1
	evs, err := g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Carol", Address: "sub@example.org", Token: "newtok"})
	if err != nil {
		t.Fatal(err)
	}
	p := g.p("Carol")
	if p.Address != "sub@example.org" || p.Token != "newtok" || p.Role != Townsperson || p.Vote != g.slot("Dave") || !p.Locked || p.Missed != 1 {
		t.Fatalf("substitute's seat: %+v", p)
	}
	if r := find(evs, EvRoleAssigned); r == nil || r.Slot != p.Slot {
		t.Fatal("the substitute needs the role message")
	}
	pub := find(evs, EvSubstituted)
	if pub == nil || pub.Address != "" || pub.Token != "" || !pub.To.Public {
		t.Fatalf("public notice must not carry the address: %+v", pub)
	}
	if rep := find(evs, EvPlayerReplaced); rep.To.Public {
		t.Fatal("the replacement's address went public")
	}
	// Names are fixed: joining is closed and names cannot change.
	g.refused(WrongPhase, "", Signup, CmdAdd, "")
	_, err = g.apply(Command{Verb: CmdReplace, By: Referee, Channel: Private, Target: "Dave", Address: "sub@example.org"})
	var r *Refusal
	if !errors.As(err, &r) || r.Reason != Duplicate {
		t.Fatalf("one address, two seats: %v", err)
	}
}

func TestW1_Winning(t *testing.T) {
	t.Run("town wins when no Mafioso is alive", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		evs := g.ok("ref", Private, CmdModkill, "Alice")
		if e := find(evs, EvGameEnded); e == nil || e.Winner != Town {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("Mafia win when they outnumber the rest", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
		g.ok("ref", Private, CmdModkill, "Carol")
		g.ok("ref", Private, CmdModkill, "Dave")
		if g.s.Phase == EndedPhase {
			t.Fatal("2 against 3 is not a win")
		}
		g.ok("ref", Private, CmdModkill, "Erin")
		if g.s.Phase == EndedPhase {
			t.Fatal("2 against 2 is not a win")
		}
		evs := g.ok("ref", Private, CmdModkill, "Frank")
		if e := find(evs, EvGameEnded); e == nil || e.Winner != MafiaWin {
			t.Fatalf("%+v", e)
		}
	})
	t.Run("one Mafioso against one other: Mafia win", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson)
		g.toNightFrom("Dave")
		g.ok("Alice", Private, CmdKill, "Carol")
		evs := g.closeNow()
		if e := find(evs, EvGameEnded); e == nil || e.Winner != MafiaWin {
			t.Fatalf("1-1 must end for the Mafia: %+v", e)
		}
		if hasType(evs, EvDayStarted) {
			t.Fatal("a day began after the game ended")
		}
	})
	t.Run("checked after a lynch", func(t *testing.T) {
		g := rigged(t, Classic(), Mafia, Townsperson, Townsperson, Townsperson, Townsperson)
		evs := func() []Event {
			for _, n := range []string{"Bob", "Carol", "Dave", "Erin"} {
				g.vote(n, "Alice")
			}
			return g.closeNow()
		}()
		if e := find(evs, EvGameEnded); e == nil || e.Winner != Town || hasType(evs, EvNightStarted) {
			t.Fatalf("%+v", e)
		}
	})
}

func TestW2_EndRevealsEverything(t *testing.T) {
	g := signup(t, Classic())
	g.ok("ref", Private, CmdStart, "")
	var mafia []string
	for _, p := range g.s.Players {
		if p.Role == Mafia {
			mafia = append(mafia, p.Name)
		}
	}
	var evs []Event
	for _, m := range mafia {
		evs = g.ok("ref", Private, CmdModkill, m)
	}
	end := find(evs, EvGameEnded)
	if end == nil || end.Winner != Town || !end.To.Public || len(end.Roles) != 11 || len(end.Names) != 11 || end.Salt == "" {
		t.Fatalf("end: %+v", end)
	}
	if !VerifyDraw(end.Commitment, g.s.Game, end.Names, end.Roles, end.Salt) {
		t.Fatal("the published draw does not verify")
	}
	g.refused(GameOver, "Alice", Thread, CmdVote, "Bob")
	g.checkReplay()
}

func TestC1_DeadPlayersPostsAreHeld(t *testing.T) {
	g := town7(t)
	g.ok("ref", Private, CmdModkill, "Grace")
	evs := g.ok("Grace", Thread, CmdPost, "Alice is mafia!!")
	h := find(evs, EvPostHeld)
	if h == nil || h.To.Public || !h.To.Referee || hasType(evs, EvThreadPost) {
		t.Fatalf("a dead player's post must be held: %+v", evs)
	}
	evs = g.apply2(Command{Verb: CmdRelay, By: Referee, Channel: Private, Held: h.Held})
	if r := find(evs, EvPostRelayed); r == nil || !r.To.Public || r.Text != "Alice is mafia!!" {
		t.Fatalf("relay: %+v", r)
	}
	if _, err := g.apply(Command{Verb: CmdRelay, By: Referee, Channel: Private, Held: h.Held}); err == nil {
		t.Fatal("a post relayed twice")
	}
	g.ok("Grace", Thread, CmdPost, "and Bob")
	evs = g.apply2(Command{Verb: CmdReject, By: Referee, Channel: Private, Held: 2, Suspend: true})
	if r := find(evs, EvPostRejected); r == nil || r.To.Public {
		t.Fatalf("reject: %+v", r)
	}
	if s := find(evs, EvSuspended); s == nil || s.Address != "Grace@example.org" {
		t.Fatalf("REJECT SUSPEND: %+v", s)
	}
}

func (g *game) apply2(c Command) []Event {
	g.t.Helper()
	evs, err := g.apply(c)
	if err != nil {
		g.t.Fatalf("%s: %v", c.Verb, err)
	}
	return evs
}

func TestC2_NoSharingRoleMessages(t *testing.T) {
	g := town7(t)
	for _, text := range []string{
		"look: " + SecretMarker("test") + ". I'm town",
		"write to me at host+test-p-TOKBOB@example.org",
	} {
		evs := g.ok("Carol", Thread, CmdPost, text)
		if find(evs, EvPostHeld) == nil || hasType(evs, EvThreadPost) {
			t.Fatalf("%q must be held: %+v", text, evs)
		}
	}
	if evs := g.ok("Carol", Thread, CmdPost, "I'm town, I swear"); find(evs, EvThreadPost) == nil {
		t.Fatal("an ordinary post was held")
	}
}

func TestC3_Suspensions(t *testing.T) {
	s, _, _ := NewGame("next", "ref@example.org", Classic(), t0)
	g := &game{t: t, s: s, now: t0}
	_, err := g.apply(Command{Verb: CmdJoin, By: Actor{Kind: ByOutsider, Address: "grace@example.org"}, Channel: Signup,
		Name: "Grace", Suspension: "removed from game test for two missed votes (D14)"})
	var r *Refusal
	if !errors.As(err, &r) || r.Reason != Suspended || !strings.Contains(r.Message, "two missed votes") {
		t.Fatalf("a suspended player joined: %v", err)
	}
	// The sources of suspensions: D14 removals and the referee.
	g2 := town7(t)
	g2.refused(BadArgument, "ref", Private, CmdSuspend, "")
	evs := g2.apply2(Command{Verb: CmdSuspend, By: Referee, Channel: Private, Address: "troll@example.org"})
	if e := find(evs, EvSuspended); e == nil || e.Address != "troll@example.org" || e.To.Public {
		t.Fatalf("SUSPEND: %+v", e)
	}
	for _, n := range []string{"Alice", "Bob", "Carol"} {
		g2.vote(n, "Dave")
	}
	g2.closeNow()
	g2.ok("Alice", Private, CmdKill, "Erin")
	g2.closeNow()
	g2.vote("Alice", "Bob")
	evs = g2.closeNow() // Frank and Grace miss their second vote
	var suspended []string
	for _, e := range evs {
		if e.Type == EvSuspended {
			suspended = append(suspended, e.Address)
		}
	}
	if !slices.Equal(suspended, []string{"Frank@example.org", "Grace@example.org"}) {
		t.Fatalf("D14 removals must be suspended from the next game: %v", suspended)
	}
}

func TestC4_Outsiders(t *testing.T) {
	g := town7(t)
	_, err := g.apply(Command{Verb: CmdPost, By: Actor{Kind: ByOutsider, Address: "x@example.org"}, Channel: Thread, Text: "hi"})
	var r *Refusal
	if !errors.As(err, &r) || r.Reason != NotInGame {
		t.Fatalf("outsider: %v", err)
	}
	evs := g.apply2(Command{Verb: CmdAdmit, By: Referee, Channel: Private, Address: "watcher@example.org"})
	if !slices.Equal(g.s.Observers, []string{"watcher@example.org"}) || find(evs, EvObserverAdmitted) == nil {
		t.Fatal("observer not admitted")
	}
	obs := Actor{Kind: ByObserver, Address: "watcher@example.org"}
	for _, v := range []Verb{CmdPost, CmdVote} {
		if _, err := g.apply(Command{Verb: v, By: obs, Channel: Thread, Text: "hi", Target: "Bob"}); !errors.As(err, &r) || r.Reason != NotAllowed {
			t.Fatalf("observer %s: %v", v, err)
		}
	}
	if evs := g.apply2(Command{Verb: CmdTally, By: obs, Channel: Thread}); find(evs, EvTallyShown).To.Address != "watcher@example.org" {
		t.Fatal("observers may ask for the tally")
	}
}

func TestC5_NoPublicRoleBeforeTheEnd(t *testing.T) {
	for seed := range uint64(50) {
		playRandomGame(t, Mafia150(), 1000+seed) // checks C5 after every step
	}
	// And the fields themselves: a public event with a role is flagged.
	if !(Event{Role: Mafia}).RevealsRole() || (Event{Name: "x"}).RevealsRole() {
		t.Fatal("RevealsRole")
	}
}

func TestF1_RefereeCommands(t *testing.T) {
	g := town7(t)
	// Pause stops the clock; resume moves every deadline by the pause.
	deadline := g.s.Deadline
	if e := find(g.ok("ref", Private, CmdPause, ""), EvPaused); e == nil || !e.To.Public {
		t.Fatal("pause must be announced")
	}
	g.refused(PausedGame, "Carol", Thread, CmdVote, "Dave")
	if _, ok := NextDeadline(g.s); ok {
		t.Fatal("a paused game has no deadline")
	}
	g.after(48 * time.Hour)
	if g.s.Phase != DayPhase {
		t.Fatal("the clock ran while paused")
	}
	g.ok("ref", Private, CmdResume, "")
	if !g.s.Deadline.Equal(deadline.Add(48 * time.Hour)) {
		t.Fatalf("resume: deadline %v, want %v", g.s.Deadline, deadline.Add(48*time.Hour))
	}
	// Deadline, announcement, close, end: each announced.
	dl := g.now.Add(3 * time.Hour)
	if e := find(g.apply2(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Time: dl}), EvDeadlineSet); e == nil || !e.To.Public || !g.s.Deadline.Equal(dl) {
		t.Fatalf("deadline: %+v", e)
	}
	if _, err := g.apply(Command{Verb: CmdDeadline, By: Referee, Channel: Private, Time: g.now.Add(-time.Hour)}); err == nil {
		t.Fatal("a deadline in the past")
	}
	if e := find(g.apply2(Command{Verb: CmdAnnounce, By: Referee, Channel: Private, Text: "Be nice."}), EvAnnouncement); e == nil || !e.To.Public {
		t.Fatal("announce")
	}
	g.vote("Carol", "Dave")
	if e := find(g.ok("ref", Private, CmdClose, ""), EvRoundClosed); e == nil || e.Target != g.slot("Dave") {
		t.Fatal("close now")
	}
	if e := find(g.ok("ref", Private, CmdEnd, ""), EvGameEnded); e == nil || e.Winner != NoWinner || len(e.Roles) != 7 {
		t.Fatalf("end: %+v", e)
	}
	// Players cannot use referee commands.
	g2 := town7(t)
	g2.refused(NotAllowed, "Carol", Private, CmdModkill, "Dave")
	g2.refused(NotAllowed, "Carol", Private, CmdClose, "")
	g2.checkReplay()
}

func TestF2_RefereeSeesSecrets(t *testing.T) {
	g := village(t)
	g.toNight()
	g.ok("Alice", Private, CmdKill, "Frank")
	g.ok("Dave", Private, CmdProtect, "Grace")
	evs := g.ok("ref", Private, CmdStatus, "")
	st := find(evs, EvStatusShown)
	if st == nil || st.To.Public || !st.To.Referee || st.Status == nil {
		t.Fatalf("status: %+v", st)
	}
	if len(st.Status.Players) != 9 || st.Status.Players[0].Role != Mafia || st.Status.Players[4].Shots != 2 {
		t.Fatalf("referee status: %+v", st.Status.Players)
	}
	text := strings.Join(st.Status.Actions, "\n")
	for _, want := range []string{"KILL Frank", "PROTECT Grace", "Carol (Inspector) has not acted"} {
		if !strings.Contains(text, want) {
			t.Errorf("referee status lacks %q:\n%s", want, text)
		}
	}
	// A player's own status tells only their own role.
	own := find(g.ok("Frank", Private, CmdStatus, ""), EvStatusShown)
	if len(own.Status.Players) != 1 || own.Status.Players[0].Name != "Frank" || own.To.Slot != g.slot("Frank") {
		t.Fatalf("player status: %+v", own.Status)
	}
	// Every secret action reaches the referee.
	for _, e := range g.log {
		if e.Type == EvActionTaken && !e.To.Referee {
			t.Fatalf("secret action hidden from the referee: %+v", e)
		}
	}
}

func TestT1_ThreadPostsReachEveryone(t *testing.T) {
	g := town7(t)
	e := find(g.ok("Carol", Thread, CmdPost, "Good morning"), EvThreadPost)
	if e == nil || !e.To.Public || e.Name != "Carol" {
		t.Fatalf("thread post: %+v", e)
	}
	if e := find(g.ok("Carol", Private, CmdPost, "psst, referee"), EvPrivateNote); e == nil || e.To.Public || !e.To.Referee {
		t.Fatalf("a private channel's discussion goes to the referee: %+v", e)
	}
}

func TestT2_MafiaList(t *testing.T) {
	g := town7(t)
	e := find(g.ok("Alice", MafiaCh, CmdPost, "Carol tonight?"), EvMafiaPost)
	if e == nil || !e.To.Mafia || e.To.Public || e.To.Referee {
		t.Fatalf("mafia post goes to the living Mafia and no one else: %+v", e)
	}
	g.refused(NotYourRole, "Carol", MafiaCh, CmdPost, "hello Mafia")
	g.ok("ref", Private, CmdModkill, "Bob")
	if _, err := g.apply(Command{Verb: CmdPost, By: PlayerActor(g.slot("Bob")), Channel: MafiaCh, Text: "boo"}); err == nil {
		t.Fatal("a dead Mafioso wrote to the list")
	}
}

func TestT1_Digests(t *testing.T) {
	setup := Classic()
	setup.DigestInterval = 2 * time.Hour
	setup.ReminderBefore = 0
	g := rigged(t, setup, Mafia, Mafia, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	if _, ok := NextDeadline(g.s); !ok {
		t.Fatal("no deadline")
	}
	g.ok("Carol", Thread, CmdPost, "Morning all")
	g.vote("Dave", "Alice")
	if g.s.DigestPending != 2 {
		t.Fatalf("pending thread news: %d", g.s.DigestPending)
	}
	if d, _ := NextDeadline(g.s); !d.Equal(t0.Add(2 * time.Hour)) {
		t.Fatalf("next digest at %v, want +2h", d)
	}
	evs := g.at(t0.Add(2 * time.Hour))
	if e := find(evs, EvDigest); e == nil || e.Count != 2 || e.To != (Audience{}) {
		t.Fatalf("digest: %+v", e)
	}
	if g.s.DigestPending != 0 {
		t.Fatal("pending not reset")
	}
	if d, _ := NextDeadline(g.s); !d.Equal(g.s.closeAt()) {
		t.Fatal("a digest with nothing to send was scheduled")
	}
	// The news goes out before the round closes.
	g.vote("Erin", "Alice")
	evs = g.ok("ref", Private, CmdClose, "")
	if len(evs) < 2 || evs[0].Type != EvDigest || find(evs, EvRoundClosed) == nil {
		t.Fatalf("close without the digest first: %v", evs)
	}
	g.checkReplay()
}

// Post-game talk: after the end, thread posts reach every participant,
// the dead too, for the setup's post_game_talk (a week unless set); after
// that they are refused, and so is everything but HELP.
func TestPostGameTalk(t *testing.T) {
	g := town7(t)
	g.ok("ref", Private, CmdModkill, "Frank")
	g.ok("ref", Private, CmdEnd, "")
	if g.s.Phase != EndedPhase || !g.s.EndedAt.Equal(g.now) {
		t.Fatalf("END: phase %s, ended at %v", g.s.Phase, g.s.EndedAt)
	}
	for _, who := range []string{"Alice", "Frank", "ref"} {
		evs := g.ok(who, Thread, CmdPost, "GG")
		if len(evs) != 1 || evs[0].Type != EvPostGameTalk || !evs[0].To.Public || evs[0].Text != "GG" {
			t.Fatalf("%s's post after the end: %+v", who, evs)
		}
	}
	g.refused(GameOver, "Alice", Private, CmdPost, "a note")
	g.refused(GameOver, "Alice", Thread, CmdVote, "Bob")
	g.now = g.now.Add(DefaultPostGameTalk - time.Minute)
	g.ok("Bob", Thread, CmdPost, "one more")
	g.now = g.now.Add(time.Minute)
	r := g.refused(GameOver, "Bob", Thread, CmdPost, "too late")
	if !strings.Contains(r.Message, "post-game talk has closed") {
		t.Errorf("late post: %q", r.Message)
	}
	if s, err := Replay(g.log); err != nil || !s.EndedAt.Equal(g.s.EndedAt) {
		t.Errorf("replay: %v, ended at %v", err, s.EndedAt)
	}
}

func TestPostGameTalkSetup(t *testing.T) {
	s, err := ParseSetup(Classic(), "post_game_talk=2d")
	if err != nil || s.TalkAfterEnd() != 48*time.Hour {
		t.Fatalf("post_game_talk=2d: %v, %v", s.TalkAfterEnd(), err)
	}
	s, err = ParseSetup(Classic(), "post_game_talk=none")
	if err != nil || s.TalkAfterEnd() != 0 {
		t.Fatalf("post_game_talk=none: %v, %v", s.TalkAfterEnd(), err)
	}
	if Classic().TalkAfterEnd() != DefaultPostGameTalk {
		t.Fatalf("default: %v", Classic().TalkAfterEnd())
	}
}
