package engine

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// ward is a game with two Doctors and two Vigilantes (S1, amended): Alice
// and Bob are Mafia, Carol the Inspector, Dave and Erin the Doctors (in
// that order of sign-up), Frank and Grace the Vigilantes, Heidi to Niaj
// Townspeople. Each Doctor has saves saves.
func ward(t *testing.T, saves int) *game {
	t.Helper()
	setup := Mafia150()
	setup.ReminderBefore = 0
	setup.DoctorSaves = saves
	g := rigged(t, setup, Mafia, Mafia, Inspector, Doctor, Doctor, Vigilante, Vigilante,
		Townsperson, Townsperson, Townsperson, Townsperson, Townsperson)
	g.toNightFrom("Niaj")
	return g
}

// dawn ends the night and returns its dawn, checking that the log rebuilds
// the state it left, saves and shots included.
func (g *game) dawn() *Event {
	g.t.Helper()
	d := find(g.closeNow(), EvDawn)
	if d == nil {
		g.t.Fatal("no dawn")
	}
	g.checkReplay()
	return d
}

// deathsOf lists a dawn's deaths as "Name:cause", in the order announced.
func deathsOf(d *Event) []string {
	var out []string
	for _, x := range d.Deaths {
		out = append(out, x.Name+":"+string(x.Cause))
	}
	return out
}

func TestS1_SeveralDoctorsAndVigilantes(t *testing.T) {
	s, err := ParseSetup(Classic(), "players=12 mafia=3 inspectors=1 doctors=2 vigilantes=1")
	if err != nil {
		t.Fatalf("S1 promises any counts of the roles: %v", err)
	}
	if s.Doctors != 2 || s.Vigilantes != 1 || s.Townspeople() != 5 {
		t.Fatalf("setup %+v", s)
	}
	if got := s.Summary(); got != "12 players: 3 Mafia, 1 Inspector, 2 Doctors, 1 Vigilante, 5 Townspeople; no day round closes from Friday 17:00 to Monday 07:00 Chicago time" {
		t.Errorf("summary %q", got)
	}
	s, err = ParseSetup(Classic(), "players=12 mafia=3 inspectors=1 doctors=2 vigilantes=2 inspector_result=role doctor_saves=3 vigilante_shots=1")
	if err != nil {
		t.Fatal(err)
	}
	s.ReminderBefore = 0
	g := signup(t, s)
	g.ok("ref", Private, CmdStart, "")
	var doctors, vigilantes []int
	for _, p := range g.s.Players {
		switch p.Role {
		case Doctor:
			doctors = append(doctors, p.Slot)
			if p.Saves != 3 {
				t.Errorf("Doctor %s has %d saves, want the setup's 3", p.Name, p.Saves)
			}
		case Vigilante:
			vigilantes = append(vigilantes, p.Slot)
			if p.Shots != 1 {
				t.Errorf("Vigilante %s has %d shots, want the setup's 1", p.Name, p.Shots)
			}
		}
	}
	if len(doctors) != 2 || len(vigilantes) != 2 {
		t.Fatalf("drawn: %d Doctors, %d Vigilantes", len(doctors), len(vigilantes))
	}
	for _, slot := range append(slices.Clone(doctors), vigilantes...) {
		var role *Event
		for i, e := range g.log {
			if e.Type == EvRoleAssigned && e.Slot == slot {
				role = &g.log[i]
			}
		}
		if role == nil || role.Role != g.s.Player(slot).Role || role.To.Public {
			t.Errorf("role message of %s: %+v", g.s.name(slot), role)
		}
	}
	// The referee's status lists each Doctor's saves and each Vigilante's
	// shots (F2).
	st := g.s.refereeStatus()
	for _, pl := range st.Players {
		if pl.Role == Doctor && pl.Saves != 3 || pl.Role == Vigilante && pl.Shots != 1 {
			t.Errorf("status line %+v", pl)
		}
	}
}

func TestS1_InspectionsNameEachRole(t *testing.T) {
	g := ward(t, Unlimited)
	g.ok("Alice", Private, CmdKill, "Heidi")
	g.ok("Carol", Private, CmdInspect, "Erin")
	evs := g.closeNow()
	if r := find(evs, EvInspection); r == nil || r.Result != "Erin is Doctor" {
		t.Fatalf("inspection of the second Doctor: %+v", r)
	}
	g.toNightFrom("Niaj", "Mallory")
	g.ok("Alice", Private, CmdKill, "Ivan")
	g.ok("Carol", Private, CmdInspect, "Grace")
	if r := find(g.closeNow(), EvInspection); r == nil || r.Result != "Grace is Vigilante" {
		t.Fatalf("inspection of the second Vigilante: %+v", r)
	}
}

func TestN8_TwoDoctorsOneTarget(t *testing.T) {
	g := ward(t, 2)
	g.ok("Dave", Private, CmdProtect, "Heidi")
	g.ok("Erin", Private, CmdProtect, "Heidi")
	g.ok("Alice", Private, CmdKill, "Heidi")
	g.ok("Frank", Private, CmdShoot, "Heidi")
	g.ok("Grace", Private, CmdPass, "")
	g.ok("Carol", Private, CmdInspect, "Bob")
	d := g.dawn()
	// Two Doctors on one target block two kills, one save each.
	if len(d.Deaths) != 0 || d.Blocked != 2 || !g.p("Heidi").Alive {
		t.Fatalf("dawn %v, blocked %d", deathsOf(d), d.Blocked)
	}
	if dave, erin := g.p("Dave"), g.p("Erin"); dave.Saves != 1 || erin.Saves != 1 {
		t.Errorf("saves left: Dave %d, Erin %d; want 1 each", dave.Saves, erin.Saves)
	}
	if f := g.p("Frank"); f.Shots != 1 || f.LastShotNight != 1 {
		t.Errorf("the blocked shot still counts (N5): %+v", f)
	}
	if g.p("Dave").LastProtected != g.slot("Heidi") || g.p("Erin").LastProtected != g.slot("Heidi") {
		t.Error("each Doctor's last protection is their own")
	}

	t.Run("one kill takes one save, the first Doctor's", func(t *testing.T) {
		g := ward(t, 2)
		g.ok("Dave", Private, CmdProtect, "Heidi")
		g.ok("Erin", Private, CmdProtect, "Heidi")
		g.ok("Alice", Private, CmdKill, "Heidi")
		d := g.dawn()
		if len(d.Deaths) != 0 || d.Blocked != 1 {
			t.Fatalf("dawn %v, blocked %d", deathsOf(d), d.Blocked)
		}
		if g.p("Dave").Saves != 1 || g.p("Erin").Saves != 2 {
			t.Errorf("saves left: Dave %d, Erin %d; want 1 and 2", g.p("Dave").Saves, g.p("Erin").Saves)
		}
	})
	t.Run("one Doctor's last save for two kills: the player dies, the save is kept", func(t *testing.T) {
		g := ward(t, 1)
		g.ok("Dave", Private, CmdProtect, "Heidi")
		g.ok("Alice", Private, CmdKill, "Heidi")
		g.ok("Grace", Private, CmdShoot, "Heidi")
		d := g.dawn()
		if got := deathsOf(d); !slices.Equal(got, []string{"Heidi:" + string(ByMafiaAndVig)}) || d.Blocked != 0 {
			t.Fatalf("dawn %v, blocked %d", got, d.Blocked)
		}
		if g.p("Dave").Saves != 1 {
			t.Errorf("a save that blocked nothing is not spent: %d left", g.p("Dave").Saves)
		}
	})
}

func TestN8_TwoDoctorsTwoTargets(t *testing.T) {
	g := ward(t, 1)
	g.ok("Dave", Private, CmdProtect, "Heidi")
	g.ok("Erin", Private, CmdProtect, "Ivan")
	g.ok("Alice", Private, CmdKill, "Heidi")
	g.ok("Frank", Private, CmdShoot, "Ivan")
	g.ok("Grace", Private, CmdShoot, "Judy")
	d := g.dawn()
	if got := deathsOf(d); !slices.Equal(got, []string{"Judy:" + string(ByVigilante)}) || d.Blocked != 2 {
		t.Fatalf("dawn %v, blocked %d", got, d.Blocked)
	}
	if g.p("Dave").Saves != 0 || g.p("Erin").Saves != 0 {
		t.Errorf("each Doctor spent their one save: Dave %d, Erin %d", g.p("Dave").Saves, g.p("Erin").Saves)
	}
	// No saves left: neither Doctor is waited for, nor may protect (N4).
	g.toNightFrom("Niaj", "Mallory")
	if g.s.OwesAction(g.slot("Dave")) || g.s.OwesAction(g.slot("Erin")) {
		t.Error("a Doctor with no saves left is waited for")
	}
	g.refused(NotAllowed, "Erin", Private, CmdProtect, "Heidi")
}

func TestN8_DoctorWhackedBeforeTheShotAtHisPatient(t *testing.T) {
	g := ward(t, Unlimited)
	g.ok("Dave", Private, CmdProtect, "Heidi")
	g.ok("Alice", Private, CmdKill, "Dave")
	g.ok("Frank", Private, CmdShoot, "Heidi")
	d := g.dawn()
	// The whack first: the Doctor is dead when the shot comes, and his
	// protection blocks nothing.
	want := []string{"Dave:" + string(ByMafia), "Heidi:" + string(ByVigilante)}
	if got := deathsOf(d); !slices.Equal(got, want) || d.Blocked != 0 {
		t.Fatalf("dawn %v, blocked %d; want %v, none blocked", got, d.Blocked, want)
	}

	t.Run("the other Doctor's protection still stands", func(t *testing.T) {
		g := ward(t, Unlimited)
		g.ok("Dave", Private, CmdProtect, "Heidi")
		g.ok("Erin", Private, CmdProtect, "Heidi")
		g.ok("Alice", Private, CmdKill, "Dave")
		g.ok("Frank", Private, CmdShoot, "Heidi")
		d := g.dawn()
		if got := deathsOf(d); !slices.Equal(got, []string{"Dave:" + string(ByMafia)}) || d.Blocked != 1 {
			t.Fatalf("dawn %v, blocked %d", got, d.Blocked)
		}
	})
	t.Run("a Doctor shot by the first Vigilante before the second's shot", func(t *testing.T) {
		g := ward(t, Unlimited)
		g.ok("Dave", Private, CmdProtect, "Heidi")
		g.ok("Alice", Private, CmdKill, "Ivan")
		g.ok("Grace", Private, CmdShoot, "Heidi") // sent first, resolves after Frank's
		g.ok("Frank", Private, CmdShoot, "Dave")
		want := []string{"Ivan:" + string(ByMafia), "Dave:" + string(ByVigilante), "Heidi:" + string(ByVigilante)}
		if got := deathsOf(g.dawn()); !slices.Equal(got, want) {
			t.Fatalf("dawn %v, want %v", got, want)
		}
	})
}

func TestN8_TwoVigilantesResolveInSignUpOrder(t *testing.T) {
	// Frank signed up before Grace: his shot resolves first, whoever sent
	// theirs first. Grace shoots the Doctor, Frank the Doctor's patient:
	// Frank's shot meets the protection while the Doctor lives.
	g := ward(t, Unlimited)
	g.ok("Dave", Private, CmdProtect, "Heidi")
	g.ok("Grace", Private, CmdShoot, "Dave")
	g.ok("Frank", Private, CmdShoot, "Heidi")
	g.ok("Alice", Private, CmdKill, "Ivan")
	d := g.dawn()
	want := []string{"Ivan:" + string(ByMafia), "Dave:" + string(ByVigilante)}
	if got := deathsOf(d); !slices.Equal(got, want) || d.Blocked != 1 || !g.p("Heidi").Alive {
		t.Fatalf("dawn %v, blocked %d; want %v and one block", got, d.Blocked, want)
	}
	for _, v := range []string{"Frank", "Grace"} {
		if p := g.p(v); p.Shots != 1 || p.LastShotNight != 1 {
			t.Errorf("%s's shot is charged to %s alone: %+v", v, v, p)
		}
	}
	// Each Vigilante's own limit: Frank shot last night and may not
	// tonight; the same for Grace (N5).
	g.toNightFrom("Niaj", "Mallory")
	g.refused(ConsecutiveVig, "Frank", Private, CmdShoot, "Alice")
	g.refused(ConsecutiveVig, "Grace", Private, CmdShoot, "Alice")

	t.Run("a Vigilante killed by the whack still shoots", func(t *testing.T) {
		g := ward(t, Unlimited)
		g.ok("Alice", Private, CmdKill, "Frank")
		g.ok("Frank", Private, CmdShoot, "Bob")
		want := []string{"Frank:" + string(ByMafia), "Bob:" + string(ByVigilante)}
		if got := deathsOf(g.dawn()); !slices.Equal(got, want) {
			t.Fatalf("dawn %v, want %v", got, want)
		}
	})
}

func TestN8_TwoVigilantesMayNotShootOnePlayer(t *testing.T) {
	g := ward(t, Unlimited)
	g.ok("Frank", Private, CmdShoot, "Heidi")
	r := g.refused(SameShot, "Grace", Private, CmdShoot, "Heidi")
	if !strings.Contains(r.Message, "Heidi") || !strings.Contains(r.Message, "two Vigilantes may not shoot the same player in one night") {
		t.Errorf("the refusal must give the reason: %q", r.Message)
	}
	g.ok("Frank", Private, CmdShoot, "Heidi") // his own shot again is no second shot
	if !g.s.OwesAction(g.slot("Grace")) {
		t.Error("the refused SHOOT stands for Grace's action")
	}
	g.ok("Frank", Private, CmdShoot, "Ivan") // Frank moves on: Heidi is free
	g.ok("Grace", Private, CmdShoot, "Heidi")
	g.refused(SameShot, "Frank", Private, CmdShoot, "Heidi")
	if g.s.Night.ShotOf(g.slot("Frank")) != g.slot("Ivan") || g.s.Night.ShotOf(g.slot("Grace")) != g.slot("Heidi") {
		t.Fatalf("shots %+v", g.s.Night.Shots)
	}
	g.ok("Alice", Private, CmdKill, "Judy")
	want := []string{"Judy:" + string(ByMafia), "Ivan:" + string(ByVigilante), "Heidi:" + string(ByVigilante)}
	if got := deathsOf(g.dawn()); !slices.Equal(got, want) {
		t.Fatalf("dawn %v, want %v", got, want)
	}
}

func TestN6_EveryDoctorAndVigilanteIsWaitedFor(t *testing.T) {
	g := ward(t, Unlimited)
	start := g.now
	g.ok("Alice", Private, CmdKill, "Heidi")
	g.ok("Carol", Private, CmdInspect, "Bob")
	g.ok("Dave", Private, CmdProtect, "Ivan")
	g.ok("Frank", Private, CmdPass, "")
	for _, who := range []string{"Erin", "Grace"} {
		if !g.s.OwesAction(g.slot(who)) {
			t.Errorf("%s still owes tonight's action", who)
		}
	}
	for _, who := range []string{"Dave", "Frank"} {
		if g.s.OwesAction(g.slot(who)) {
			t.Errorf("%s acted already", who)
		}
	}
	lines := strings.Join(g.s.nightActionLines(), "\n")
	for _, want := range []string{"Dave (Doctor): PROTECT Ivan", "Frank (Vigilante): PASS", "Erin (Doctor) has not acted yet", "Grace (Vigilante) has not acted yet"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the referee's night lines lack %q:\n%s", want, lines)
		}
	}
	if own := strings.Join(g.s.ownActionLines(g.slot("Erin")), "\n"); strings.Contains(own, "Ivan") || !strings.Contains(own, "not acted") {
		t.Errorf("Erin's own status shows another Doctor's action: %q", own)
	}
	g.ok("Erin", Private, CmdProtect, "Judy")
	g.at(start.Add(g.s.Setup.NightStep + time.Minute))
	if g.s.Phase != NightPhase {
		t.Fatal("the night ended at 6 h with a Vigilante's action missing")
	}
	g.ok("Grace", Private, CmdShoot, "Bob")
	if end := g.s.NightEndsAt(); !end.Equal(start.Add(2 * g.s.Setup.NightStep)) {
		t.Fatalf("the night ends at +%v, want the 12 h mark", end.Sub(start))
	}
}

func TestN4_EachDoctorsOwnLastNight(t *testing.T) {
	g := ward(t, Unlimited)
	g.ok("Dave", Private, CmdProtect, "Heidi")
	g.ok("Erin", Private, CmdProtect, "Ivan")
	g.ok("Alice", Private, CmdKill, "Judy")
	g.dawn()
	g.toNightFrom("Niaj", "Mallory")
	g.refused(SameProtect, "Dave", Private, CmdProtect, "Heidi")
	g.refused(SameProtect, "Erin", Private, CmdProtect, "Ivan")
	g.ok("Erin", Private, CmdProtect, "Heidi") // Heidi was Dave's, not Erin's
	g.ok("Dave", Private, CmdProtect, "Ivan")
}
