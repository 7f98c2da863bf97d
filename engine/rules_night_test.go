package engine

import (
	"slices"
	"testing"
	"time"
)

// village is a game with every role: Alice and Bob are Mafia, Carol the
// Inspector, Dave the Doctor, Erin the Vigilante, Frank to Ivan townspeople.
func village(t *testing.T) *game {
	t.Helper()
	setup := Mafia150()
	setup.ReminderBefore = 0
	return rigged(t, setup, Mafia, Mafia, Inspector, Doctor, Vigilante, Townsperson, Townsperson, Townsperson, Townsperson)
}

// toNight closes day 1 with no one eliminated... by voting out Ivan.
func (g *game) toNight() {
	g.t.Helper()
	for _, n := range g.s.Living() {
		if g.s.name(n) != "Ivan" {
			g.vote(g.s.name(n), "Ivan")
		}
	}
	g.ok("ref", Private, CmdClose, "")
	if g.s.Phase != NightPhase {
		g.t.Fatalf("phase %s, want night", g.s.Phase)
	}
}

func TestN1_NightActionsArePrivate(t *testing.T) {
	g := village(t)
	g.refused(WrongPhase, "Carol", Private, CmdInspect, "Alice") // by day
	g.toNight()
	g.refused(NotAllowed, "Carol", Thread, CmdInspect, "Alice")
	g.refused(NotYourRole, "Frank", Private, CmdKill, "Carol")
	g.refused(NotYourRole, "Alice", Private, CmdProtect, "Bob")
	g.refused(NotAllowed, "Carol", MafiaCh, CmdInspect, "Alice")
	g.refused(Dead, "Ivan", Private, CmdKill, "Carol")
	evs := g.ok("Carol", Private, CmdInspect, "Alice")
	if e := find(evs, EvActionTaken); e == nil || e.To.Public || !e.To.Referee || e.To.Slot != g.slot("Carol") {
		t.Fatalf("inspect must go to the inspector and the referee only: %+v", e)
	}
}

func TestN2_Whack(t *testing.T) {
	g := village(t)
	g.toNight()
	evs := g.ok("Alice", MafiaCh, CmdKill, "Frank")
	if e := find(evs, EvActionTaken); e == nil || !e.To.Mafia || !e.To.Referee || e.To.Public {
		t.Fatalf("a whack must be echoed to the living Mafia and the referee: %+v", e)
	}
	g.ok("Bob", Private, CmdKill, "Grace") // the latest submission stands
	if g.s.Night.Whack != g.slot("Grace") || g.s.Night.WhackBy != g.slot("Bob") {
		t.Fatalf("latest whack: %+v", g.s.Night)
	}
	g.ok("ref", Private, CmdModkill, "Alice")
	g.refused(Dead, "Alice", Private, CmdKill, "Frank") // only living Mafiosi
	evs = g.closeNow()
	if d := find(evs, EvDawn); d == nil || len(d.Deaths) != 1 || d.Deaths[0].Slot != g.slot("Grace") || d.Deaths[0].Cause != ByMafia {
		t.Fatalf("dawn: %+v", d)
	}
}

func TestN3_Inspect(t *testing.T) {
	t.Run("answered only at the night's end", func(t *testing.T) {
		g := village(t)
		g.toNight()
		evs := g.ok("Carol", Private, CmdInspect, "Dave")
		if hasType(evs, EvInspection) {
			t.Fatal("answered before the night resolved")
		}
		g.refused(BadTarget, "Carol", Private, CmdInspect, "Carol")
		g.ok("Alice", Private, CmdKill, "Frank")
		night := g.s.Day
		evs = g.closeNow()
		r := find(evs, EvInspection)
		if r == nil || r.Result != "Dave is Doctor" || r.To.Public || r.To.Slot != g.slot("Carol") {
			t.Fatalf("mafia150 inspections name the role: %+v", r)
		}
		// The answer names its own night, not the day that follows it,
		// which has begun by the time a CLOSE is answered.
		if r.Day != night || g.s.Day != night+1 {
			t.Errorf("the inspection of Night %d says Night %d (the state is at Day %d)", night, r.Day, g.s.Day)
		}
	})
	t.Run("a dead inspector gets no answer", func(t *testing.T) {
		g := village(t)
		g.toNight()
		g.ok("Carol", Private, CmdInspect, "Alice")
		g.ok("Alice", Private, CmdKill, "Carol")
		if evs := g.closeNow(); hasType(evs, EvInspection) {
			t.Fatal("a dead Inspector was answered")
		}
	})
	t.Run("classic answers yes or no", func(t *testing.T) {
		setup := Classic()
		setup.ReminderBefore = 0
		g := rigged(t, setup, Mafia, Mafia, Inspector, Townsperson, Townsperson, Townsperson, Townsperson)
		g.toNightFrom("Grace")
		g.ok("Carol", Private, CmdInspect, "Bob")
		g.ok("Alice", Private, CmdKill, "Frank")
		if r := find(g.closeNow(), EvInspection); r == nil || r.Result != "Bob is Mafia" {
			t.Fatalf("classic: %+v", r)
		}
		g.toNightFrom("Erin")
		g.ok("Carol", Private, CmdInspect, "Dave")
		g.ok("Alice", Private, CmdKill, "Carol")
		g.ok("Alice", Private, CmdKill, "Dave")
		if r := find(g.closeNow(), EvInspection); r == nil || r.Result != "Dave is not Mafia" {
			t.Fatalf("classic: %+v", r)
		}
	})
}

func TestN4_Protect(t *testing.T) {
	g := village(t)
	g.toNight()
	g.ok("Dave", Private, CmdProtect, "Dave") // self allowed
	g.ok("Alice", Private, CmdKill, "Dave")
	evs := g.closeNow()
	if d := find(evs, EvDawn); d == nil || d.Blocked != 1 || len(d.Deaths) != 0 {
		t.Fatalf("self-protection must block: %+v", d)
	}
	g.toNightFrom("Heidi")
	r := g.refused(SameProtect, "Dave", Private, CmdProtect, "Dave")
	if r.Message == "" {
		t.Fatal("no message")
	}
	g.ok("Dave", Private, CmdProtect, "Frank")
	g.ok("Alice", Private, CmdNoKill, "")
	g.closeNow() // extra round follows, as no whack was named
	g.toNightFrom("Grace", "Frank")
	g.ok("Dave", Private, CmdProtect, "Dave") // not consecutive any more
}

// toNightFrom closes the running rounds by voting out the first living
// player among victims each round, until night falls.
func (g *game) toNightFrom(victims ...string) {
	g.t.Helper()
	for g.s.Phase == DayPhase {
		victim := ""
		for _, v := range victims {
			if g.p(v).Alive {
				victim = v
				break
			}
		}
		for _, n := range g.s.Living() {
			if g.s.name(n) != victim {
				g.vote(g.s.name(n), victim)
			}
		}
		g.ok("ref", Private, CmdClose, "")
	}
	if g.s.Phase != NightPhase {
		g.t.Fatalf("phase %s", g.s.Phase)
	}
}

func TestN5_Vigilante(t *testing.T) {
	g := village(t)
	g.toNight()
	g.refused(BadTarget, "Erin", Private, CmdShoot, "Erin")
	g.ok("Erin", Private, CmdShoot, "Grace")
	g.ok("Erin", Private, CmdShoot, "Frank") // the latest stands: never two in one night
	if g.s.Night.ShotOf(g.slot("Erin")) != g.slot("Frank") || g.p("Erin").Shots != 2 {
		t.Fatalf("the latest SHOOT stands and is charged at dawn: shot %d, %d left", g.s.Night.ShotOf(g.slot("Erin")), g.p("Erin").Shots)
	}
	g.ok("Dave", Private, CmdProtect, "Frank") // blocked, but the shot is spent
	g.ok("Alice", Private, CmdKill, "Heidi")
	g.closeNow()
	if !g.p("Frank").Alive || g.p("Erin").Shots != 1 {
		t.Fatalf("blocked shot: Frank alive %v, shots %d", g.p("Frank").Alive, g.p("Erin").Shots)
	}
	g.toNightFrom("Grace")
	g.refused(ConsecutiveVig, "Erin", Private, CmdShoot, "Alice")
	g.ok("Erin", Private, CmdPass, "")
	g.ok("Alice", Private, CmdKill, "Dave")
	g.closeNow()
	// By day: resolves at once, announced as the Vigilante's.
	evs := g.ok("Erin", Private, CmdShoot, "Bob")
	d := find(evs, EvPlayerDied)
	if d == nil || d.Slot != g.slot("Bob") || Cause(d.Reason) != ByVigilanteDay || !d.To.Public || d.RevealsRole() {
		t.Fatalf("day shot: %+v", d)
	}
	if g.p("Erin").Shots != 0 {
		t.Fatalf("shots left %d", g.p("Erin").Shots)
	}
	g.refused(NoShotsLeft, "Erin", Private, CmdShoot, "Alice")

	t.Run("one day shot a day", func(t *testing.T) {
		g := village(t)
		g.ok("Erin", Private, CmdShoot, "Frank")
		g.refused(AlreadyShot, "Erin", Private, CmdShoot, "Grace")
	})
	t.Run("no shoot or pass counts as a pass", func(t *testing.T) {
		g := village(t)
		g.toNight()
		g.ok("Alice", Private, CmdKill, "Frank")
		g.closeNow()
		if g.p("Erin").Shots != 2 || g.p("Erin").LastShotNight != 0 {
			t.Fatalf("a silent night is a pass: %+v", g.p("Erin"))
		}
		g.toNightFrom("Grace")
		g.ok("Erin", Private, CmdShoot, "Heidi") // not consecutive with a pass
	})
}

func TestN6_NightLength(t *testing.T) {
	cases := []struct {
		name   string
		allIn  time.Duration // when the last action comes in; <0 never
		wantAt time.Duration
	}{
		{"all in at once ends at 6 h", time.Minute, 6 * time.Hour},
		{"all in at 6 h exactly", 6 * time.Hour, 6 * time.Hour},
		{"all in at 7 h ends at 12 h", 7 * time.Hour, 12 * time.Hour},
		{"all in at 13 h ends at 18 h", 13 * time.Hour, 18 * time.Hour},
		{"never all in ends at 18 h", -1, 18 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := village(t)
			g.toNight()
			start := g.now
			g.ok("Alice", Private, CmdKill, "Frank")
			g.ok("Carol", Private, CmdInspect, "Alice")
			g.ok("Dave", Private, CmdProtect, "Grace")
			if !g.s.OwesAction(g.slot("Erin")) || g.s.OwesAction(g.slot("Carol")) || g.s.OwesAction(g.slot("Frank")) {
				t.Fatal("only the Vigilante still owes an action")
			}
			if c.allIn >= 0 {
				if evs := g.at(start.Add(c.allIn)); hasType(evs, EvDawn) && c.allIn != 6*time.Hour {
					t.Fatal("ended before the vigilante acted")
				}
				if g.s.Phase == NightPhase {
					g.ok("Erin", Private, CmdPass, "")
				}
			}
			end, ok := NextDeadline(g.s)
			if g.s.Phase == NightPhase && (!ok || !end.Equal(start.Add(c.wantAt)) || !g.s.NightEndsAt().Equal(end)) {
				t.Fatalf("night ends at %v, want +%v", end.Sub(start), c.wantAt)
			}
			if evs := g.at(start.Add(c.wantAt - time.Second)); hasType(evs, EvDawn) {
				t.Fatal("ended early")
			}
			if evs := g.at(start.Add(c.wantAt)); !hasType(evs, EvDawn) && g.s.Phase == NightPhase {
				t.Fatal("did not end at the mark")
			}
		})
	}
	t.Run("the referee may extend a night", func(t *testing.T) {
		g := village(t)
		g.toNight()
		start := g.now
		g.apply(Command{Verb: CmdExtend, By: Referee, Channel: Private, Duration: 6 * time.Hour})
		if end, _ := NextDeadline(g.s); !end.Equal(start.Add(24 * time.Hour)) {
			t.Fatalf("extended night ends at +%v", end.Sub(start))
		}
	})
}

func TestN7_MissedWhackGivesAnExtraRound(t *testing.T) {
	g := village(t)
	g.toNight()
	g.ok("Carol", Private, CmdInspect, "Bob")
	evs := g.closeNow() // 18 h, no whack
	if d := find(evs, EvDawn); d == nil || len(d.Deaths) != 0 {
		t.Fatalf("no one dies without a whack: %+v", d)
	}
	if find(evs, EvInspection) == nil {
		t.Fatal("the inspection is still answered")
	}
	x := find(evs, EvExtraStarted)
	if x == nil || x.Round != Extra || !x.Deadline.Equal(g.now.Add(24*time.Hour)) {
		t.Fatalf("extra round: %+v", x)
	}
	if !slices.Contains([]EventType{EvExtraStarted}, evs[len(evs)-1].Type) {
		t.Fatalf("the extra round comes after the dawn post")
	}
	for _, n := range []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"} {
		g.vote(n, "Heidi")
	}
	evs = g.closeNow()
	if find(evs, EvRoundClosed).Target != g.slot("Heidi") {
		t.Fatal("the extra round eliminates like a day round")
	}
	day := find(evs, EvDayStarted)
	if day == nil || day.Day != 2 || g.s.Phase != DayPhase {
		t.Fatalf("the next day must begin after the extra round: %+v", day)
	}
	// NO KILL names no victim either.
	g.toNightFrom("Frank")
	g.ok("Bob", Private, CmdNoKill, "")
	if evs := g.closeNow(); find(evs, EvExtraStarted) == nil {
		t.Fatal("NO KILL must give the town its extra round")
	}
}

func TestN8_NightOrder(t *testing.T) {
	type want struct {
		deaths  map[string]Cause
		blocked int
		saves   int
	}
	cases := []struct {
		name              string
		saves             int
		whack, shot, prot string
		want              want
	}{
		{"whack unprotected", Unlimited, "Frank", "", "Grace", want{map[string]Cause{"Frank": ByMafia}, 0, Unlimited}},
		{"whack blocked", Unlimited, "Frank", "", "Frank", want{nil, 1, Unlimited}},
		{"shot unprotected", Unlimited, "Frank", "Grace", "Heidi", want{map[string]Cause{"Frank": ByMafia, "Grace": ByVigilante}, 0, Unlimited}},
		{"shot blocked, doctor alive", Unlimited, "Frank", "Grace", "Grace", want{map[string]Cause{"Frank": ByMafia}, 1, Unlimited}},
		{"doctor whacked: shot not blocked", Unlimited, "Dave", "Grace", "Grace", want{map[string]Cause{"Dave": ByMafia, "Grace": ByVigilante}, 0, Unlimited}},
		{"doctor saves self, then the shot is blocked too? no: only the target he named", Unlimited, "Dave", "Grace", "Dave", want{map[string]Cause{"Grace": ByVigilante}, 1, Unlimited}},
		{"same target unprotected", Unlimited, "Frank", "Frank", "Grace", want{map[string]Cause{"Frank": ByMafiaAndVig}, 0, Unlimited}},
		{"same target protected: two saves", 3, "Frank", "Frank", "Frank", want{nil, 2, 1}},
		{"same target, one save left: dies", 1, "Frank", "Frank", "Frank", want{map[string]Cause{"Frank": ByMafiaAndVig}, 0, 1}},
		{"the last save blocks the whack; the shot elsewhere kills", 1, "Frank", "Frank2", "Frank", want{map[string]Cause{"Frank2": ByVigilante}, 1, 0}},
		{"no saves left", 0, "Frank", "", "", want{map[string]Cause{"Frank": ByMafia}, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			setup := Mafia150()
			setup.ReminderBefore = 0
			setup.DoctorSaves = c.saves
			g := rigged(t, setup, Mafia, Mafia, Inspector, Doctor, Vigilante, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
			g.s.Players[10].Name = "Frank2"
			g.s.Players[9].Name = "Jack"
			g.toNight()
			if c.whack != "" {
				g.ok("Alice", Private, CmdKill, c.whack)
			}
			if c.shot != "" {
				g.ok("Erin", Private, CmdShoot, c.shot)
			}
			if c.prot != "" {
				g.ok("Dave", Private, CmdProtect, c.prot)
			}
			d := find(g.closeNow(), EvDawn)
			got := map[string]Cause{}
			for _, x := range d.Deaths {
				got[x.Name] = x.Cause
			}
			if len(got) != len(c.want.deaths) {
				t.Fatalf("deaths %v, want %v", got, c.want.deaths)
			}
			for n, cause := range c.want.deaths {
				if got[n] != cause {
					t.Fatalf("deaths %v, want %v", got, c.want.deaths)
				}
			}
			if d.Blocked != c.want.blocked {
				t.Fatalf("blocked %d, want %d", d.Blocked, c.want.blocked)
			}
			if doc := g.p("Dave"); doc.Alive && doc.Saves != c.want.saves {
				t.Fatalf("saves left %d, want %d", doc.Saves, c.want.saves)
			}
		})
	}
}

func TestN9_Dawn(t *testing.T) {
	g := village(t)
	g.toNight()
	g.ok("Alice", Private, CmdKill, "Frank")
	g.ok("Erin", Private, CmdShoot, "Grace")
	g.ok("Dave", Private, CmdProtect, "Grace")
	d := find(g.closeNow(), EvDawn)
	if d == nil || !d.To.Public || d.RevealsRole() {
		t.Fatalf("dawn must be public and name no role: %+v", d)
	}
	if len(d.Deaths) != 1 || d.Deaths[0].Name != "Frank" || d.Deaths[0].Cause != ByMafia || d.Blocked != 1 {
		t.Fatalf("dawn: %+v", d)
	}
}
