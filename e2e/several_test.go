//go:build integration

package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// flat is a mail's text with its lines joined, so that a sentence the mail
// wrapped reads whole.
func flat(text string) string { return strings.Join(strings.Fields(text), " ") }

// TestSeveralDoctorsAndVigilantesOverMail plays a 12-player game with two
// Doctors and two Vigilantes (S1, amended) on the embedded mail servers,
// through a night in which all four act (N8): both Doctors protect the
// Mafia's target, whom the first Vigilante shoots too, so that each Doctor
// blocks a kill; the second Vigilante aims at the same player, is refused
// with the reason, and shoots another. It checks each actor's answer, the
// referee's STATUS (each Doctor's saves and each Vigilante's shots), the
// inspection that names the second Doctor's role, and the dawn.
func TestSeveralDoctorsAndVigilantesOverMail(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "niaj"}
	name := func(u string) string { return strings.ToUpper(u[:1]) + u[1:] }

	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel := created.ReplyTo
	g.send(ref, refChannel, "SETUP players=12 mafia=3 inspectors=1 doctors=2 vigilantes=2 inspector_result=role doctor_saves=2")
	if a := flat(g.answerTo(ref, "SETUP players=12").Text); !strings.Contains(a, "New setup: 12 players: 3 Mafia, 1 Inspector, 2 Doctors, 2 Vigilantes, 4 Townspeople") {
		t.Fatalf("the answer to SETUP:\n%s", a)
	}
	// The setup in full, in the thread: its options and the weekend
	// window in force (D7).
	setup := flat(g.await(ref, "the new setup in the thread", func(l letter) bool {
		return l.Kind == "thread" && strings.Contains(l.Text, "New setup: 12 players")
	}).Text)
	for _, want := range []string{"A Vigilante has 2 shots.", "A Doctor has 2 saves.", "No day round closes from Friday 17:00 to Monday 07:00 Chicago time."} {
		if !strings.Contains(setup, want) {
			t.Errorf("the new setup lacks %q:\n%s", want, setup)
		}
	}
	for _, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+name(u))
	}
	waitFor(t, "twelve players", func() bool { return len(g.state().Players) == 12 })
	g.send(ref, refChannel, "START")
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })

	s := g.state()
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	var mafia, doctors, vigilantes, town []int
	inspector := 0
	for _, p := range s.Players {
		switch p.Role {
		case engine.Mafia:
			mafia = append(mafia, p.Slot)
		case engine.Inspector:
			inspector = p.Slot
		case engine.Doctor:
			doctors = append(doctors, p.Slot)
		case engine.Vigilante:
			vigilantes = append(vigilantes, p.Slot)
		default:
			town = append(town, p.Slot)
		}
	}
	if len(mafia) != 3 || inspector == 0 || len(doctors) != 2 || len(vigilantes) != 2 || len(town) != 4 {
		t.Fatalf("the draw: %+v", s.Players)
	}
	// Each Doctor and Vigilante is told in the role message that there are
	// two of them, and how they act together.
	for _, slot := range append(slices.Clone(doctors), vigilantes...) {
		role := g.await(user(slot), "the role message", func(l letter) bool { return l.Kind == "role" })
		want := "This game has 2 Doctors"
		if s.Player(slot).Role == engine.Vigilante {
			want = "This game has 2 Vigilantes, each shooting on their own; two of them may not shoot the same player in one night"
		}
		if !strings.Contains(flat(role.Text), want) {
			t.Errorf("%s's role message lacks %q:\n%s", user(slot), want, role.Text)
		}
	}

	g.send(ref, refChannel, "CLOSE")
	waitFor(t, "Night 1", func() bool { return g.state().Phase == engine.NightPhase })

	d1, d2 := doctors[0], doctors[1]
	v1, v2 := vigilantes[0], vigilantes[1] // v1 signed up first: his shot resolves first
	target, other := town[0], town[1]
	private := func(slot int) string { _, p := g.addrs(slot); return p }

	g.send(user(d1), private(d1), "PROTECT "+name(user(target)))
	if a := flat(g.answerTo(user(d1), "PROTECT").Text); !strings.Contains(a, "✓ PROTECT "+name(user(target))) || !strings.Contains(a, "You protect "+name(user(target))+" tonight") {
		t.Errorf("the first Doctor's answer:\n%s", a)
	}
	g.send(user(d2), private(d2), "PROTECT "+name(user(target)))
	if a := flat(g.answerTo(user(d2), "PROTECT").Text); !strings.Contains(a, "You protect "+name(user(target))+" tonight") {
		t.Errorf("the second Doctor's answer:\n%s", a)
	}
	g.send(user(mafia[0]), private(mafia[0]), "KILL "+name(user(target)))
	g.answerTo(user(mafia[0]), "KILL")
	g.send(user(v1), private(v1), "SHOOT "+name(user(target)))
	if a := flat(g.answerTo(user(v1), "SHOOT").Text); !strings.Contains(a, "✓ SHOOT "+name(user(target))) || !strings.Contains(a, "2 shots are left, this one included") {
		t.Errorf("the first Vigilante's answer:\n%s", a)
	}
	// The second Vigilante aims at the same player: refused, with the reason.
	g.send(user(v2), private(v2), "SHOOT "+name(user(target)))
	refused := flat(g.answerTo(user(v2), "SHOOT "+name(user(target))).Text)
	if !strings.Contains(refused, "✗ SHOOT "+name(user(target))) ||
		!strings.Contains(refused, "Another Vigilante already shoots "+name(user(target))+" tonight, and two Vigilantes may not shoot the same player in one night") {
		t.Errorf("the second Vigilante's SHOOT at the same player:\n%s", refused)
	}
	if strings.Contains(refused, name(user(v1))) {
		t.Errorf("the refusal names the other Vigilante:\n%s", refused)
	}
	g.send(user(v2), private(v2), "SHOOT "+name(user(other)))
	if a := flat(g.answerTo(user(v2), "SHOOT "+name(user(other))).Text); !strings.Contains(a, "✓ SHOOT "+name(user(other))) || !strings.Contains(a, "You shoot "+name(user(other))+" tonight") {
		t.Errorf("the second Vigilante's answer:\n%s", a)
	}
	g.send(user(inspector), private(inspector), "INSPECT "+name(user(d2)))
	g.answerTo(user(inspector), "INSPECT")

	// The referee's STATUS shows each one's action, saves and shots.
	g.send(ref, refChannel, "STATUS")
	st := flat(g.await(ref, "the night's STATUS", func(l letter) bool {
		return strings.Contains(l.Text, "✓ STATUS") && strings.Contains(l.Text, "Tonight")
	}).Text)
	for _, want := range []string{
		name(user(d1)) + " (Doctor): PROTECT " + name(user(target)),
		name(user(d2)) + " (Doctor): PROTECT " + name(user(target)),
		name(user(v1)) + " (Vigilante): SHOOT " + name(user(target)),
		name(user(v2)) + " (Vigilante): SHOOT " + name(user(other)),
	} {
		if !strings.Contains(st, want) {
			t.Errorf("the referee's STATUS lacks %q:\n%s", want, st)
		}
	}
	checkSeats(t, st, map[string]string{
		name(user(d1)): "saves left: 2", name(user(d2)): "saves left: 2",
		name(user(v1)): "2 shots left", name(user(v2)): "2 shots left",
	})

	waitFor(t, "every action in", func() bool { return !g.state().Night.AllInAt.IsZero() })
	g.advance(g.state().NightEndsAt().Sub(g.clock()))
	waitFor(t, "Day 2", func() bool { return g.state().Phase == engine.DayPhase && g.state().Day == 2 })

	// The dawn: the whack and the first shot on one player were blocked by
	// a Doctor each; the second shot killed.
	dawn := g.await(user(town[2]), "the dawn", func(l letter) bool { return l.Kind == "dawn" })
	// The dawn's own part, before the tally that names every player.
	text, _, _ := strings.Cut(flat(dawn.Text), "Roles stay secret until the game ends.")
	if !strings.HasPrefix(text, "Night 1 is over: "+name(user(other))+" was shot by a Vigilante ") {
		t.Errorf("the dawn:\n%s", dawn.Text)
	}
	if n := strings.Count(text, "A kill was blocked."); n != 2 {
		t.Errorf("the dawn tells %d blocked kills, want 2:\n%s", n, dawn.Text)
	}
	for _, slot := range append(append(slices.Clone(doctors), vigilantes...), target) {
		if strings.Contains(text, name(user(slot))) {
			t.Errorf("the dawn names %s:\n%s", name(user(slot)), dawn.Text)
		}
	}
	s = g.state()
	if !s.Player(target).Alive || s.Player(other).Alive {
		t.Fatalf("after the night: %s alive %v, %s alive %v", name(user(target)), s.Player(target).Alive, name(user(other)), s.Player(other).Alive)
	}
	// The inspection names the second Doctor's role.
	insp := g.await(user(inspector), "the inspection's answer", func(l letter) bool {
		return l.Kind == "private" && strings.Contains(l.Text, "inspection")
	})
	if !strings.Contains(flat(insp.Text), name(user(d2))+" is Doctor") {
		t.Errorf("the inspection:\n%s", insp.Text)
	}
	// Each Doctor spent one save, each Vigilante one shot.
	g.send(ref, refChannel, "STATUS")
	st = flat(g.await(ref, "the STATUS of Day 2", func(l letter) bool {
		return strings.Contains(l.Text, "✓ STATUS") && strings.Contains(l.Text, "Day 2")
	}).Text)
	checkSeats(t, st, map[string]string{
		name(user(d1)): "saves left: 1", name(user(d2)): "saves left: 1",
		name(user(v1)): "1 shot left", name(user(v2)): "1 shot left",
	})
}

// checkSeats checks that each player's seat in a referee's STATUS, read
// flat, says what want says of it.
func checkSeats(t *testing.T, status string, want map[string]string) {
	t.Helper()
	for who, says := range want {
		_, seat, ok := strings.Cut(status, "- "+who+": ")
		if !ok {
			t.Errorf("the STATUS has no seat for %s:\n%s", who, status)
			continue
		}
		if i := strings.Index(seat, " - "); i >= 0 {
			seat = seat[:i]
		}
		if !strings.Contains(seat, says) {
			t.Errorf("%s's seat reads %q, want %q in it", who, seat, says)
		}
	}
}
