package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

var townWaitPlayers = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace"}

// townWaitGame starts g1 with seven players, two of them Mafiosi, and
// sends everything it queued.
func townWaitGame(t *testing.T) *harness {
	t.Helper()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=7 mafia=2 inspectors=1 doctors=1 inspector_knows_mafioso=false")
	for _, p := range townWaitPlayers {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	hs.send("ref@example.org", ref, "START")
	if s := hs.game("g1"); s.Phase != engine.DayPhase {
		t.Fatalf("phase %s after START", s.Phase)
	}
	hs.sendAll()
	return hs
}

// channelOf is a player's address in a channel: "t" the thread, "p"
// private, "m" the mafia list.
func (hs *harness) channelOf(name, ch string) string {
	return "host+g1-" + ch + "-" + hs.token("g1", addr(name)) + "@example.org"
}

// withRole names g1's living players of a role.
func (hs *harness) withRole(r engine.Role) []string {
	var out []string
	for _, p := range hs.game("g1").Players {
		if p.Alive && p.Role == r {
			out = append(out, p.Name)
		}
	}
	return out
}

// holdSending starts a hold of the provider's sending limit: nothing
// more goes out.
func (hs *harness) holdSending() {
	hs.t.Helper()
	ctx := context.Background()
	if err := hs.st.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.BeginHold(ctx, hs.now, "550 5.4.5 Daily user sending limit exceeded")
		return err
	}); err != nil {
		hs.t.Fatal(err)
	}
}

// unsent lists the kinds of g1's mail not sent yet, for failure messages.
func (hs *harness) unsent() []string {
	var out []string
	for _, m := range hs.outbox() {
		if m.Game == "g1" && (m.Status == store.OutPending || m.Status == store.OutSending) {
			out = append(out, m.Kind+" to "+strings.Join(m.To, ","))
		}
	}
	return out
}

// TestT4_TheCloseWaitsForTheTownsMailAlone: while the sending limit holds
// mail back, a round's close by the clock waits only for mail the town
// needs before it, which its existence tells no one anything by: the
// thread's posts and news with their tallies, and the reminders to vote.
// Mafia-list posts, answers to private commands (a tally asked for, a
// status), a private note to the referee and a night role's reminder are
// held like any mail, but the close does not wait for them: were it to,
// the wait would tell the town that the Mafia talked, that someone asked
// for something, or that a night action is missing, and the Mafia could
// hold voting open by talking.
func TestT4_TheCloseWaitsForTheTownsMailAlone(t *testing.T) {
	t.Parallel()
	t.Run("secret mail held at the day's close", func(t *testing.T) {
		hs := townWaitGame(t)
		mafia := hs.withRole(engine.Mafia)
		town := hs.withRole(engine.Townsperson)
		for i, text := range []string{"Who do we push today?", "Not me, for once.", "Follow the crowd."} {
			hs.send(addr(mafia[i%2]), hs.channelOf(mafia[i%2], "m"), text)
		}
		hs.send(addr(town[0]), hs.channelOf(town[0], "p"), "TALLY")
		hs.send(addr(town[1]), hs.channelOf(town[1], "p"), "STATUS")
		hs.send(addr(town[1]), hs.channelOf(town[1], "p"), "A word for the referee alone.")
		hs.holdSending()
		due := hs.game("g1").ClosesAt()
		hs.now = due
		hs.tick()
		if s := hs.game("g1"); s.MailWaiting() || s.Phase != engine.NightPhase {
			t.Fatalf("with only secret mail held (%v) the day's close waited: phase %s, waiting %v", hs.unsent(), s.Phase, s.MailWaiting())
		}
	})
	t.Run("a thread post held at the day's close", func(t *testing.T) {
		hs := townWaitGame(t)
		town := hs.withRole(engine.Townsperson)
		hs.send(addr(town[0]), hs.channelOf(town[0], "t"), "Still here.")
		hs.holdSending()
		due := hs.game("g1").ClosesAt()
		hs.now = due
		hs.tick()
		if s := hs.game("g1"); !s.MailWaiting() || s.Phase != engine.DayPhase {
			t.Fatalf("with a thread post held the day's close did not wait: phase %s", s.Phase)
		}
	})
	t.Run("a reminder to vote held at the day's close", func(t *testing.T) {
		hs := townWaitGame(t)
		due := hs.game("g1").ClosesAt()
		hs.now = due.Add(-hs.game("g1").Setup.ReminderBefore)
		hs.tick()
		if !hs.game("g1").Reminded {
			t.Fatal("no reminders to vote")
		}
		hs.holdSending()
		hs.now = due
		hs.tick()
		if s := hs.game("g1"); !s.MailWaiting() || s.Phase != engine.DayPhase {
			t.Fatalf("with the reminders to vote held (%v) the day's close did not wait: phase %s", hs.unsent(), s.Phase)
		}
	})
	t.Run("a night role's reminder held at the night's end", func(t *testing.T) {
		hs := townWaitGame(t)
		ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
		hs.send("ref@example.org", ref, "CLOSE")
		if s := hs.game("g1"); s.Phase != engine.NightPhase {
			t.Fatalf("phase %s after CLOSE", s.Phase)
		}
		hs.sendAll()
		end := hs.game("g1").ClosesAt()
		hs.now = end.Add(-hs.game("g1").Setup.ReminderBefore)
		hs.tick()
		if !hs.game("g1").Night.Reminded {
			t.Fatal("no reminders of the night's actions")
		}
		hs.holdSending()
		hs.now = end
		hs.tick()
		if s := hs.game("g1"); s.MailWaiting() || s.Phase == engine.NightPhase {
			t.Fatalf("with only the night roles' reminders held (%v) the night waited", hs.unsent())
		}
	})
}
