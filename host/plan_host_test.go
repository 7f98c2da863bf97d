package host

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// sendAll marks every message in the outbox sent at the harness's time, as
// a sender that met no limit would.
func (hs *harness) sendAll() {
	hs.t.Helper()
	ctx := context.Background()
	for {
		ms, err := hs.st.ClaimDue(ctx, hs.now, 100)
		if err != nil {
			hs.t.Fatal(err)
		}
		if len(ms) == 0 {
			return
		}
		for _, m := range ms {
			if err := hs.st.MarkSent(ctx, m.ID, hs.now); err != nil {
				hs.t.Fatal(err)
			}
		}
	}
}

func (hs *harness) tick() {
	hs.t.Helper()
	if err := hs.h.TickDue(context.Background()); err != nil {
		hs.t.Fatal(err)
	}
	hs.checkSchedule()
}

// When a busy thread would not fit the sending budget, the host gathers
// it into digests for everyone, says so in the thread and tells the
// referee the figures; posts then wait for the digest; the plan outlives
// a restart; and once the budget has room again, the thread goes as the
// players chose.
func TestThePlanGathersABusyThreadToFitTheBudget(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.recipientsPerDay = 150
	hs.restart()
	hs.setUp()
	ctx := context.Background()
	// A busy morning: 30 posts in three hours, each to 6 readers.
	for i := range 30 {
		hs.now = hs.now.Add(6 * time.Minute)
		hs.send(addr(players[i%5]), hs.thread(players[i%5]), "I have a theory about this, number "+string(rune('a'+i%26)))
	}
	hs.sendAll()
	before := len(hs.outbox())
	hs.tick()
	s := hs.game("g1")
	if s.MailPlan == 0 {
		p, _, _ := hs.st.Plan(ctx, "g1")
		t.Fatalf("no plan with the budget spent and a busy thread: forecast %+v", p)
	}
	plan, ok, err := hs.st.Plan(ctx, "g1")
	if err != nil || !ok || plan.Interval != s.MailPlan || plan.AsChosen <= plan.Room || plan.Limit != 150 {
		t.Fatalf("the kept forecast: %+v %v %v", plan, ok, err)
	}
	news := hs.outbox()[before:]
	told := map[string]bool{}
	for _, m := range news {
		text := flat(m.Raw)
		for _, to := range m.To {
			switch {
			case m.Kind == "thread" && strings.Contains(text, "gathered into a digest every"):
				told[to] = true
			case m.Kind == "referee" && strings.Contains(text, "recipients a day") && strings.Contains(text, "of 150 recipients"):
				told["referee:"+to] = true
			}
		}
	}
	for _, p := range players {
		if !told[addr(p)] {
			t.Errorf("%s was not told in the thread that posts are gathered", p)
		}
	}
	if !told["referee:ref@example.org"] {
		for _, m := range news {
			t.Logf("%s %v: %s", m.Kind, m.To, flat(m.Raw))
		}
		t.Errorf("the referee was not told the figures: %d messages", len(news))
	}
	// A post now waits for the digest: no thread copy to the others, the
	// referee included.
	before = len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"), "Quiet now?")
	for _, m := range hs.outbox()[before:] {
		if m.Kind == "thread" && (slices.Contains(m.To, addr("Bob")) || slices.Contains(m.To, "ref@example.org")) {
			t.Fatalf("a post went to %v at once under the plan", m.To)
		}
	}
	// The plan is the game's: a restart keeps it.
	every := s.MailPlan
	hs.restart()
	if hs.game("g1").MailPlan != every {
		t.Fatalf("after a restart the plan is %v, want %v", hs.game("g1").MailPlan, every)
	}
	hs.sendAll()
	// A quiet day later, the budget has room: the plan ends.
	hs.now = hs.now.Add(26 * time.Hour)
	before = len(hs.outbox())
	hs.tick()
	if s := hs.game("g1"); s.Phase == engine.DayPhase && s.MailPlan != 0 {
		p, _, _ := hs.st.Plan(ctx, "g1")
		t.Fatalf("the plan outlived the pressure: %+v", p)
	}
	ended := false
	for _, m := range hs.outbox()[before:] {
		if m.Kind == "thread" && strings.Contains(flat(m.Raw), "has room again") {
			ended = true
		}
	}
	if !ended {
		t.Error("the thread was not told that posts come as chosen again")
	}
}

// A round's close that falls due while the game's posts are held back by
// the provider's limit waits for them, and closes once they have gone
// out; without the mail going out, it closes at the grace's end.
func TestTheCloseWaitsForHeldMail(t *testing.T) {
	t.Parallel()
	for _, flows := range []bool{true, false} {
		hs := newHarness(t)
		hs.setUp()
		ctx := context.Background()
		hs.sendAll()
		hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob\n\nBob is the one.")
		if err := hs.st.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.BeginHold(ctx, hs.now, "550 5.4.5 Daily user sending limit exceeded")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		due := hs.game("g1").ClosesAt()
		hs.now = due
		hs.tick()
		s := hs.game("g1")
		if s.Phase != engine.DayPhase || !s.MailWaiting() || !s.ClosesAt().Equal(due.Add(engine.DefaultSendingGrace)) {
			t.Fatalf("at the deadline with the vote's mail held: phase %s, waiting %v, closes %v", s.Phase, s.MailWaiting(), s.ClosesAt())
		}
		if !flows {
			hs.now = due.Add(engine.DefaultSendingGrace)
			hs.tick()
			if s := hs.game("g1"); s.Phase == engine.DayPhase {
				t.Fatalf("the wait outran its grace: closes %v", s.ClosesAt())
			}
			continue
		}
		hs.now = due.Add(30 * time.Minute)
		hs.tick()
		if hs.game("g1").Phase != engine.DayPhase {
			t.Fatal("the round closed while its mail was held")
		}
		if _, err := hs.st.EndHold(ctx); err != nil {
			t.Fatal(err)
		}
		hs.sendAll()
		hs.now = due.Add(40 * time.Minute)
		hs.tick()
		s = hs.game("g1")
		if s.Phase == engine.DayPhase || s.MailWaiting() {
			t.Fatalf("the mail went out and the round did not close: phase %s", s.Phase)
		}
		var told []string
		for _, m := range hs.mailTo(addr("Carol"), 0) {
			text := flat(m.Raw)
			if strings.Contains(text, "so the close waits for it") || strings.Contains(text, "has gone out, so the round closes now") {
				told = append(told, text)
			}
		}
		if len(told) != 2 {
			t.Errorf("Carol was told %d times of the wait, want its start and its end", len(told))
		}
	}
}

// flat is a message's text with its lines joined, for phrases a flowed
// or quoted-printable body breaks.
func flat(raw []byte) string {
	return strings.Join(strings.Fields(parseLetter(raw).Text), " ")
}
