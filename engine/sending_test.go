package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func (g *game) host(c Command) ([]Event, error) {
	c.By = Actor{Kind: ByHost}
	return g.apply(c)
}

// TestT3_TheHostGathersTheThreadToFitItsBudget: the host's MAIL PLAN
// gathers the thread into digests for everyone, whatever they chose,
// first sending what was gathered; the plan's end returns each reader to
// their choice. Only the host may set it.
func TestT3_TheHostGathersTheThreadToFitItsBudget(t *testing.T) {
	g := town7(t)
	carol, dave := g.p("Carol"), g.p("Dave")
	g.ok("Carol", Private, CmdMail, MailEach)
	if g.s.DigestEvery() != 0 {
		t.Fatal("a classic game gathers the thread before any plan")
	}
	planned := g.now
	evs, err := g.host(Command{Verb: CmdMailPlan, Duration: 3 * time.Hour})
	if e := find(evs, EvMailPlan); err != nil || e == nil || e.Duration != 3*time.Hour || !e.To.Public {
		t.Fatalf("MAIL PLAN 3h: %+v %v", evs, err)
	}
	if !g.s.TakesDigests(carol) || !g.s.TakesDigests(dave) || g.s.DigestEvery() != 3*time.Hour {
		t.Fatal("the plan did not gather the thread for everyone, MAIL EACH readers included")
	}
	g.ok("Dave", Thread, CmdPost, "Quiet day.")
	g.vote("Erin", "Dave")
	if evs := g.at(planned.Add(3*time.Hour - time.Minute)); hasType(evs, EvDigest) {
		t.Fatal("a digest came before the plan's interval")
	}
	if evs := g.at(planned.Add(3 * time.Hour)); find(evs, EvDigest) == nil || find(evs, EvDigest).Count != 2 {
		t.Fatalf("no digest of the post and the vote at the plan's interval: %+v", evs)
	}
	// The end of the plan sends what is gathered first.
	g.ok("Dave", Thread, CmdPost, "Still quiet.")
	evs, err = g.host(Command{Verb: CmdMailPlan})
	if err != nil || len(evs) != 2 || evs[0].Type != EvDigest || evs[1].Type != EvMailPlan || evs[1].Duration != 0 {
		t.Fatalf("the plan's end: %+v %v", evs, err)
	}
	if g.s.TakesDigests(carol) || g.s.DigestEvery() != 0 {
		t.Fatal("after the plan the thread is still gathered")
	}
	// A setup with its own digests keeps the longer of the two.
	if _, err := g.host(Command{Verb: CmdMailPlan, Duration: time.Hour}); err != nil {
		t.Fatal(err)
	}
	g.s.Setup.DigestInterval = 2 * time.Hour
	if g.s.DigestEvery() != 2*time.Hour {
		t.Fatalf("a plan shorter than the setup's interval gathers every %v", g.s.DigestEvery())
	}
	g.s.Setup.DigestInterval = 0
	// Nobody else may send it; the mail grammar has no word for it.
	for _, by := range []Actor{Referee, PlayerActor(carol.Slot)} {
		if _, err := g.apply(Command{Verb: CmdMailPlan, By: by, Channel: Private, Duration: time.Hour}); err == nil {
			t.Errorf("%s could set the host's plan", by.Kind)
		}
	}
	if _, err := g.host(Command{Verb: CmdMailPlan, Duration: time.Second}); err == nil {
		t.Error("a plan of one second was accepted")
	}
	g.checkReplay()
}

// TestT4_TheCloseWaitsForHeldMail: when the round's close comes due by
// the clock while mail is held back, the host's MAIL WAIT holds it until
// the latest time given; MAIL FLOWED closes it then and there. The
// referee's deadline takes over from a wait.
func TestT4_TheCloseWaitsForHeldMail(t *testing.T) {
	g := town7(t)
	g.vote("Carol", "Dave")
	due := g.s.ClosesAt()
	g.now = due.Add(-time.Hour)
	if _, err := g.host(Command{Verb: CmdMailWait, Time: due.Add(2 * time.Hour)}); err == nil {
		t.Fatal("a close that is not due yet was made to wait")
	}
	g.now = due
	evs, err := g.host(Command{Verb: CmdMailWait, Time: due.Add(2 * time.Hour)})
	if err != nil || hasType(evs, EvRoundClosed) || find(evs, EvMailWait) == nil || !find(evs, EvMailWait).To.Public {
		t.Fatalf("MAIL WAIT at the deadline: %+v %v", evs, err)
	}
	if !g.s.MailWaiting() || !g.s.ClosesAt().Equal(due.Add(2*time.Hour)) {
		t.Fatalf("the close is at %v, want %v", g.s.ClosesAt(), due.Add(2*time.Hour))
	}
	// Votes still count meanwhile.
	g.now = due.Add(20 * time.Minute)
	g.vote("Erin", "Dave")
	evs, err = g.host(Command{Verb: CmdMailFlowed})
	if err != nil || find(evs, EvMailFlowed) == nil || find(evs, EvRoundClosed) == nil {
		t.Fatalf("MAIL FLOWED: %+v %v", evs, err)
	}
	if c := find(evs, EvRoundClosed); c.Tally == nil || c.Target != g.slot("Dave") {
		t.Fatalf("the close after the wait: %+v", c)
	}
	if g.s.MailWaiting() {
		t.Fatal("the wait outlived its round")
	}

	// The grace runs out: the round closes at the latest time.
	g2 := town7(t)
	due = g2.s.ClosesAt()
	g2.now = due
	if _, err := g2.host(Command{Verb: CmdMailWait, Time: due.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if evs := g2.at(due.Add(time.Hour)); find(evs, EvRoundClosed) == nil {
		t.Fatalf("the wait did not end at its latest: %+v", evs)
	}

	// The referee's EXTEND takes over: the mail flowing later does not cut it short.
	g3 := town7(t)
	due = g3.s.ClosesAt()
	g3.now = due
	if _, err := g3.host(Command{Verb: CmdMailWait, Time: due.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	g3.ok("ref", Private, CmdExtend, "")
	if evs, err := g3.host(Command{Verb: CmdMailFlowed}); err != nil || len(evs) != 0 {
		t.Fatalf("MAIL FLOWED after the referee's extension: %+v %v", evs, err)
	}
	// Only the host may hold a close.
	g4 := town7(t)
	due = g4.s.ClosesAt()
	g4.now = due
	var r *Refusal
	if _, err := g4.apply(Command{Verb: CmdMailWait, By: Referee, Channel: Private, Time: due.Add(time.Hour)}); !errors.As(err, &r) {
		t.Fatalf("the referee could send MAIL WAIT: %v", err)
	}
	for _, g := range []*game{g, g2, g3} {
		again, err := Replay(g.log)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again, g.s) {
			t.Fatal("a replay of the log differs from the game")
		}
	}
}

// TestT4_ASetupMayNotWait: held_mail_grace=none asks the host never to
// hold a close, and the default is 2 hours.
func TestT4_ASetupMayNotWait(t *testing.T) {
	s, err := ParseSetup(Classic(), "held_mail_grace=none")
	if err != nil || s.SendingGrace() != 0 {
		t.Fatalf("held_mail_grace=none: %v %v", s.SendingGrace(), err)
	}
	if Classic().SendingGrace() != DefaultSendingGrace {
		t.Fatal("the default grace is not 2 hours")
	}
	if s, err := ParseSetup(Classic(), "held_mail_grace=45m"); err != nil || s.SendingGrace() != 45*time.Minute {
		t.Fatalf("held_mail_grace=45m: %v %v", s.SendingGrace(), err)
	}
	if _, err := ParseSetup(Classic(), "held_mail_grace=30s"); err == nil {
		t.Fatal("a grace of 30 s was accepted")
	}
}
