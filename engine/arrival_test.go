package engine

import (
	"strings"
	"testing"
	"time"
)

// D8: the referee sets how long a deadline waits for mail that reached the
// host's mailbox before it while the mailbox cannot be read; zero leaves
// the host's default.
func TestD8_MailGraceSetup(t *testing.T) {
	if g := Classic().MailGrace; g != 0 {
		t.Fatalf("classic sets a mail grace of %v; the host's default should apply", g)
	}
	s, err := ParseSetup(Classic(), "mail_grace=30m")
	if err != nil {
		t.Fatal(err)
	}
	if s.MailGrace != 30*time.Minute {
		t.Fatalf("mail_grace=30m gave %v", s.MailGrace)
	}
	for _, bad := range []string{"mail_grace=10s", "mail_grace=2d", "mail_grace=-5m", "mail_grace=soon"} {
		_, err := ParseSetup(Classic(), bad)
		if err == nil || !strings.Contains(err.Error(), "mail_grace") {
			t.Errorf("SETUP %s: %v, want a refusal naming mail_grace", bad, err)
		}
	}
}

// D8: the deadlines that wait for the mail that arrived before them are
// the ones its order decides: the round's close and its reminder, the
// night's end. A digest due sooner is the next deadline, but not the
// next ordered one.
func TestD8_ADigestDoesNotWaitForMail(t *testing.T) {
	g := town7(t)
	ordered, ok := NextOrderedDeadline(g.s)
	if next, _ := NextDeadline(g.s); !ok || !next.Equal(ordered) || ordered.After(g.s.closeAt()) {
		t.Fatalf("with no digest due: next %v, ordered %v (%v), want the same, by the close at %v", next, ordered, ok, g.s.closeAt())
	}
	if _, err := g.apply(Command{Verb: CmdMail, By: PlayerActor(g.slot("Carol")), Channel: Private, Text: "digest"}); err != nil {
		t.Fatal(err)
	}
	g.ok("Dave", Thread, CmdPost, "Carol is quiet today.")
	digestAt := g.s.LastDigest.Add(g.s.DigestEvery())
	if !digestAt.Before(ordered) {
		t.Fatalf("the digest at %v is not before the next ordered deadline at %v", digestAt, ordered)
	}
	if next, ok := NextDeadline(g.s); !ok || !next.Equal(digestAt) {
		t.Fatalf("NextDeadline %v (%v), want the digest at %v", next, ok, digestAt)
	}
	if o, ok := NextOrderedDeadline(g.s); !ok || !o.Equal(ordered) {
		t.Fatalf("NextOrderedDeadline %v (%v) with a digest due, want %v", o, ok, ordered)
	}
	if evs := g.at(digestAt); find(evs, EvDigest) == nil {
		t.Fatalf("no digest at %v: %+v", digestAt, evs)
	}
	g.at(g.s.closeAt())
	if g.s.Phase != NightPhase {
		t.Fatalf("phase %s after the close", g.s.Phase)
	}
	g.ok("Dave", Thread, CmdPost, "Anyone?")
	end, ok := NextOrderedDeadline(g.s)
	if next, _ := NextDeadline(g.s); !ok || end.After(g.s.nightEndsAt()) || next.After(end) {
		t.Fatalf("at night: next %v, ordered %v (%v), want one by the night's end %v", next, end, ok, g.s.nightEndsAt())
	}
	g.s.Paused = true
	if _, ok := NextOrderedDeadline(g.s); ok {
		t.Error("a paused game has an ordered deadline")
	}
}
