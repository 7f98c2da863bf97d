package compose_test

import (
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// BenchmarkRoundClose composes the busiest step of a mafia150 game: the
// close of Day 1 with every vote in, an elimination and nightfall, for 25
// players, the referee and an observer.
func BenchmarkRoundClose(b *testing.B) {
	h := newHarness(b, engine.Mafia150(), "m150", 5)
	h.dir.Observers[observerAddr] = observerToken
	h.ok(engine.Referee, engine.Private, "ADMIT", engine.Command{Verb: engine.CmdAdmit, Address: observerAddr})
	h.signup(names25)
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	target := h.town()[0]
	for _, p := range h.s.Players {
		if p.Name != target {
			h.ok(h.player(p.Name), engine.Thread, "VOTE "+target, vote(target))
		}
	}
	before := h.s.Clone()
	evs := engine.Tick(h.s, h.s.Deadline)
	batch := compose.Batch{Before: before, Events: h.logged(evs), Dir: h.dir}
	var msgs []compose.Outgoing
	var bytes int
	for b.Loop() {
		var err error
		msgs, err = h.c.Batch(batch)
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, m := range msgs {
		bytes += len(m.Raw)
	}
	b.ReportMetric(float64(len(msgs)), "msgs/op")
	b.ReportMetric(float64(bytes)/float64(len(msgs)), "bytes/msg")
}

// BenchmarkVote composes one vote in a classic game: the most frequent
// thread mail.
func BenchmarkVote(b *testing.B) {
	h := started(b)
	a, c := h.town()[0], h.town()[1]
	cmd := vote(c)
	cmd.By, cmd.Channel = h.player(a), engine.Thread
	before := h.s.Clone()
	evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now})
	if err != nil {
		b.Fatal(err)
	}
	batch := compose.Batch{Before: before, Events: h.logged(evs), Dir: h.dir}
	for b.Loop() {
		if _, err := h.c.Batch(batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThreadPost composes one discussion post in a mafia150 game on
// Day 1: a copy for each of the 25 players and the referee, the most
// frequent mail of a real day by far.
func BenchmarkThreadPost(b *testing.B) {
	h := newHarness(b, engine.Mafia150(), "m150", 5)
	h.signup(names25)
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	cmd := post("I have been reading the thread again and something about the quiet players bothers me.\n\n" +
		"Look at who jumped on the first wagon and then went silent once it had momentum.")
	cmd.By, cmd.Channel = h.player(h.town()[0]), engine.Thread
	before := h.s.Clone()
	evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now})
	if err != nil {
		b.Fatal(err)
	}
	batch := compose.Batch{Before: before, Events: h.logged(evs), Dir: h.dir}
	var msgs []compose.Outgoing
	for b.Loop() {
		if msgs, err = h.c.Batch(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(msgs)), "msgs/op")
}
