//go:build integration

package e2e

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// TestRefereeSubjectsOverAGame plays a whole game over the embedded mail
// servers, with the referee's every kind of mail in it (sign-ups, answers
// to the referee's commands done and refused, an extension asked for, a
// held post, the night's reports), and lists the subjects of the referee's
// mailbox: each mail of the referee channel says what it is and whether it
// waits for the referee, so that the inbox can be sorted by subject; the
// town thread's copies keep the round's subject.
func TestRefereeSubjectsOverAGame(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin"}
	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel := created.ReplyTo
	g.send(ref, refChannel, "SETUP players=5 mafia=1 inspectors=1 doctors=0 vigilantes=0 inspector_knows_mafioso=false")
	g.answerTo(ref, "SETUP")
	for i, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
		g.answerTo(u, "JOIN")
		waitFor(t, "the sign-up", func() bool { return len(g.state().Players) == i+1 })
	}
	g.settled()
	g.send(ref, refChannel, "START")
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	g.settled()
	s := g.state()
	var mafioso, inspector int
	var town []int
	for _, p := range s.Players {
		switch p.Role {
		case engine.Mafia:
			mafioso = p.Slot
		case engine.Inspector:
			inspector = p.Slot
		default:
			town = append(town, p.Slot)
		}
	}
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	name := func(slot int) string { return s.Player(slot).Name }

	// Day 1: a player asks for more time, which the referee grants; the
	// referee removes a player, whose post is then held and rejected; a
	// command the referee mistypes is refused.
	t0Thread, _ := g.addrs(town[0])
	g.send(user(town[0]), t0Thread, "EXTEND")
	waitFor(t, "the request", func() bool { return len(g.state().Asked) > 0 })
	g.settled()
	g.send(ref, refChannel, "GRANT")
	g.answerTo(ref, "GRANT")
	g.settled()
	g.send(ref, refChannel, "MODKILL "+name(town[2]))
	g.answerTo(ref, "MODKILL "+name(town[2]))
	g.settled()
	t2Thread, _ := g.addrs(town[2])
	g.send(user(town[2]), t2Thread, "I was Town!")
	waitFor(t, "the held post", func() bool { return len(g.state().Held) == 1 })
	g.settled()
	g.send(ref, refChannel, "REJECT 1")
	g.answerTo(ref, "REJECT 1")
	g.settled()
	g.send(ref, refChannel, "RELAY 7")
	g.answerTo(ref, "RELAY 7")
	g.settled()
	g.send(ref, refChannel, "CLOSE")
	waitFor(t, "the night", func() bool { return g.state().Phase == engine.NightPhase })
	g.settled()

	// Night 1: the Mafia kill, the Inspector inspects; the referee hears
	// of both.
	_, mPrivate := g.addrs(mafioso)
	_, iPrivate := g.addrs(inspector)
	g.send(user(mafioso), mPrivate, "KILL "+name(town[1]))
	waitFor(t, "the kill", func() bool { return g.state().Night.Whack == town[1] })
	g.send(user(inspector), iPrivate, "INSPECT "+name(mafioso))
	waitFor(t, "the inspection", func() bool { return len(g.state().Night.Inspects) == 1 })
	g.settled()
	g.advance(g.state().NightEndsAt().Sub(g.clock()))
	waitFor(t, "Day 2", func() bool { return g.state().Phase == engine.DayPhase && g.state().Day == 2 })
	g.settled()

	// Day 2: the town votes the Mafioso out and the referee closes.
	for _, slot := range []int{inspector, town[0]} {
		th, _ := g.addrs(slot)
		g.send(user(slot), th, "VOTE "+name(mafioso))
		waitFor(t, "the vote", func() bool { return g.state().Player(slot).Vote == mafioso })
	}
	g.send(ref, refChannel, "CLOSE")
	waitFor(t, "the end", func() bool { return g.state().Phase == engine.EndedPhase })
	g.settled()

	want := []string{
		"Done: NEW GAME g1",
		"Done: SETUP players=5 mafia=1 inspectors=1 do…",
		"Sign-up: " + name(1) + " (1 of 5)",
		"Sign-up: " + name(2) + " (2 of 5)",
		"Sign-up: " + name(3) + " (3 of 5)",
		"Sign-up: " + name(4) + " (4 of 5)",
		"Sign-up: " + name(5) + " (5 of 5)",
		"Done: START",
		name(town[0]) + " asks for more time — waits for you: GRANT or DENY",
		"Done: GRANT",
		"Done: MODKILL " + name(town[2]),
		"Post #1 by " + name(town[2]) + " is held — waits for you: RELAY 1 or REJECT 1",
		"Done: REJECT 1",
		"Refused: RELAY 7",
		"Done: CLOSE",
		"Report: Night 1: " + name(mafioso) + " (Mafia) names " + name(town[1]) + " as the victim",
		"Report: Night 1: " + name(inspector) + " (Inspector) inspects " + name(mafioso),
		"Report: " + name(inspector) + "'s inspection: " + name(mafioso) + " is Mafia",
		"Done: CLOSE",
	}
	var got []string
	for _, l := range g.mailbox(ref) {
		subject, ok := strings.CutPrefix(l.Subject, "[g1] ")
		if !ok {
			t.Errorf("a mail to the referee without the game's tag: %q", l.Subject)
			continue
		}
		if l.Kind == "thread" || l.Kind == "dawn" || l.Kind == "end" {
			// The town thread: a conversation per round, whose subject
			// says the round.
			if strings.Contains(subject, ":") {
				t.Errorf("thread mail to the referee has subject %q", l.Subject)
			}
			continue
		}
		got = append(got, subject)
	}
	t.Logf("the referee's subjects, in the order they came:\n%s", strings.Join(got, "\n"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the referee's subjects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
