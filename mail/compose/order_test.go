package compose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// digestGame is a mafia150 game with digests, composed as the host
// composes it: each step one Batch, with the news held since the last
// digest.
type digestGame struct {
	*harness
	held  []compose.Logged
	since time.Time
}

func newDigestGame(t *testing.T) *digestGame {
	h := newHarness(t, engine.Mafia150(), "m150", 5)
	h.signup(names25)
	h.ok(engine.Referee, engine.Private, "SETUP mafia150 digest_interval=2h",
		engine.Command{Verb: engine.CmdSetup, Text: "mafia150 digest_interval=2h"})
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	return &digestGame{harness: h, since: h.now}
}

// step composes events as one batch, answering ans when set, and keeps
// what stays held.
func (g *digestGame) step(before *engine.State, evs []engine.Event, sender *engine.Actor, ans *compose.Answer) []compose.Outgoing {
	g.t.Helper()
	logged := g.logged(evs)
	msgs, err := g.c.Batch(compose.Batch{Before: before, Events: logged, Dir: g.dir, Sender: sender,
		HoldForDigest: true, Held: g.held, HeldSince: g.since, Answer: ans})
	if err != nil {
		g.t.Fatalf("%s: Batch: %v", g.harness.step, err)
	}
	for _, l := range logged {
		switch {
		case engine.Digestible(l.Event):
			g.held = append(g.held, l)
		case l.Event.Type == engine.EvDigest:
			g.held, g.since = nil, l.Event.At
		}
	}
	g.roundBefore = roundWords(before)
	g.record(msgs)
	g.roundBefore = ""
	return msgs
}

// vote is a player's message with one VOTE line, answered as the host
// answers it.
func (g *digestGame) vote(by, target string) []compose.Outgoing {
	g.t.Helper()
	g.harness.step = by + " VOTE " + target
	before := g.s.Clone()
	cmd := vote(target)
	cmd.By, cmd.Channel = g.player(by), engine.Thread
	evs, err := engine.Apply(g.s, cmd, engine.Env{Now: g.now, Rand: g.rand})
	if err != nil {
		g.t.Fatalf("%s: %v", g.harness.step, err)
	}
	sender := g.player(by)
	return g.step(before, evs, &sender, &compose.Answer{State: g.s, Dir: g.dir, Sender: sender, Channel: engine.Thread,
		Cause: "<v-" + by + "@players.example.net>", Received: g.now, Now: g.now,
		Lines: []compose.Line{{Text: "VOTE " + target, Events: evs}}})
}

// TestDigestGoesOutBeforeTheCloseItLeadsTo: the close of a round in a game
// with digests flushes the digest of the posts and votes that led to it,
// and every reader's mail of that step comes in the order of its events,
// with Date headers that increase in that order.
func TestDigestGoesOutBeforeTheCloseItLeadsTo(t *testing.T) {
	t.Parallel()
	g := newDigestGame(t)
	towns := g.withRole(engine.Townsperson)
	g.now = g.now.Add(20 * time.Minute)
	// A vote held for the digest is answered on its own at once: the voter
	// learns now, not at the digest, that it counted.
	msgs := g.vote(towns[0], towns[1])
	if m := toKind(t, msgs, g.key(towns[0]), compose.KindConfirm); !strings.Contains(string(m.Raw), "done") {
		t.Errorf("the answer to a held vote does not say it was done")
	}
	// Before every deadline, one more vote: news waits for the digest
	// whenever the round closes.
	var voters []string
	for _, p := range g.s.Players {
		if p.Alive && p.Name != towns[1] && p.Name != towns[0] {
			voters = append(voters, p.Name)
		}
	}
	for i := range 20 {
		d, ok := engine.NextDeadline(g.s)
		if !ok {
			t.Fatal("nothing waits on the clock")
		}
		var msgs []compose.Outgoing
		var evs []engine.Event
		// Two votes just before it: the first may flush a digest that is
		// due, the second then waits for the next.
		for k, at := range []time.Duration{-time.Minute, -30 * time.Second} {
			if 2*i+k >= len(voters) || g.s.Phase != engine.DayPhase || closes(evs) {
				break
			}
			g.now = d.Add(at)
			n := len(g.history)
			msgs = g.vote(voters[2*i+k], towns[1])
			evs = nil
			for _, l := range g.history[n:] {
				evs = append(evs, l.Event)
			}
		}
		if !closes(evs) {
			g.now = d
			g.harness.step = "tick " + d.Format(time.RFC3339)
			before := g.s.Clone()
			evs = engine.Tick(g.s, d)
			msgs = g.step(before, evs, nil, nil)
		}
		if !closes(evs) {
			continue
		}
		if len(evs) == 0 || evs[0].Type != engine.EvDigest {
			var types []engine.EventType
			for _, e := range evs {
				types = append(types, e.Type)
			}
			t.Fatalf("the close's step does not start with the digest: %v (pending %d)", types, -1)
		}
		seen := map[string][]compose.Outgoing{}
		for _, m := range msgs {
			seen[m.Recipient] = append(seen[m.Recipient], m)
		}
		for _, key := range []string{g.key(towns[0]), g.key(towns[1]), "ref"} {
			got := seen[key]
			if len(got) < 2 || !strings.Contains(strings.Join(got[0].Contents, " "), "digest") {
				t.Fatalf("%s: the close's step gives %d messages, the first %v; want the digest first", key, len(got), got[0].Contents)
			}
			for i := 1; i < len(got); i++ {
				if !got[i].Date.After(got[i-1].Date) || !dateOf(t, got[i]).After(dateOf(t, got[i-1])) {
					t.Errorf("%s: message %d (%v) is dated %v, not after the one before it (%v), %v", key, i, got[i].Contents,
						dateOf(t, got[i]), got[i-1].Contents, dateOf(t, got[i-1]))
				}
			}
		}
		checkInvariants(t, g.harness)
		return
	}
	t.Fatal("the round never closed")
}

func closes(evs []engine.Event) bool {
	for _, e := range evs {
		if e.Type == engine.EvRoundClosed {
			return true
		}
	}
	return false
}

func dateOf(t *testing.T, m compose.Outgoing) time.Time {
	t.Helper()
	h := readBack(t, m.Raw).header
	d, err := h.Date()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAnswerRidesOnTheAuthorsThreadCopy: a post with a vote sends its
// author one mail, their own thread copy, whose first line says what was
// done; a refused line still gets its own answer.
func TestAnswerRidesOnTheAuthorsThreadCopy(t *testing.T) {
	t.Parallel()
	h := started(t)
	a, b := h.town()[0], h.town()[1]
	before := h.s.Clone()
	env := engine.Env{Now: h.now, Rand: h.rand}
	by := h.player(a)
	evs, posted, ans := voteAndPost(t, h, a, b, "I have my reasons.")
	msgs, err := h.c.Batch(compose.Batch{Before: before, Events: h.logged(append(evs, posted...)), Dir: h.dir, Sender: &by, Answer: ans})
	if err != nil {
		t.Fatal(err)
	}
	h.record(msgs)
	var mine []compose.Outgoing
	for _, m := range msgs {
		if m.Recipient == h.key(a) {
			mine = append(mine, m)
		}
	}
	if len(mine) != 1 || mine[0].Kind != compose.KindThread {
		t.Fatalf("the author got %d messages, want their thread copy alone", len(mine))
	}
	own := readBack(t, mine[0].Raw)
	if first, _, _ := strings.Cut(own.text, "\n"); first != "Your message: VOTE "+b+" done" {
		t.Errorf("the author's copy begins %q", first)
	}
	if !strings.Contains(own.text, "I have my reasons.") {
		t.Errorf("the author's copy lacks the post:\n%s", own.text)
	}
	// The author's copy as they read it, beside the copy of a reader
	// who is not its author.
	g := newGoldens(t, "receipt")
	g.add("thread-author", mine[0])
	g.add("thread-other", to(t, msgs, h.key(h.town()[2])))
	g.check()
	other := readBack(t, to(t, msgs, h.key(h.town()[2])).Raw)
	if strings.Contains(other.text, "Your message") {
		t.Errorf("another reader's copy carries the author's receipt:\n%s", other.text)
	}

	// A refused line: the author is told in an answer of their own.
	before = h.s.Clone()
	v := vote("Nobody")
	v.By, v.Channel = by, engine.Thread
	_, verr := engine.Apply(h.s, v, env)
	if verr == nil {
		t.Fatal("a vote for no one was accepted")
	}
	p := post("Oops.")
	p.By, p.Channel = by, engine.Thread
	posted, err = engine.Apply(h.s, p, env)
	if err != nil {
		t.Fatal(err)
	}
	ans = &compose.Answer{State: h.s, Dir: h.dir, Sender: by, Channel: engine.Thread, Cause: "<p2@players.example.net>",
		Received: h.now, Now: h.now, Lines: []compose.Line{{Text: "VOTE Nobody", Err: verr}}}
	msgs, err = h.c.Batch(compose.Batch{Before: before, Events: h.logged(posted), Dir: h.dir, Sender: &by, Answer: ans})
	if err != nil {
		t.Fatal(err)
	}
	h.record(msgs)
	if m := toKind(t, msgs, h.key(a), compose.KindError); !strings.Contains(readBack(t, m.Raw).text, "VOTE Nobody") {
		t.Errorf("the refusal does not name the line")
	}
	if m := toKind(t, msgs, h.key(a), compose.KindThread); strings.Contains(readBack(t, m.Raw).text, "Your message") {
		t.Errorf("the thread copy claims a receipt for a refused line")
	}
	checkInvariants(t, h)
}

// TestUnderThePlanTheDigestCarriesTheReceipt: while the host gathers the
// thread to fit its sending budget (T3), a post with a vote sends its
// author nothing at once; their next digest says what became of it.
func TestUnderThePlanTheDigestCarriesTheReceipt(t *testing.T) {
	t.Parallel()
	h := started(t)
	a, b := h.town()[0], h.town()[1]
	env := engine.Env{Now: h.now, Rand: h.rand}
	if _, err := engine.Apply(h.s, engine.Command{Verb: engine.CmdMailPlan, By: engine.Actor{Kind: engine.ByHost}, Duration: 2 * time.Hour}, env); err != nil {
		t.Fatal(err)
	}
	before := h.s.Clone()
	by := h.player(a)
	evs, posted, ans := voteAndPost(t, h, a, b, "Trust me on this one.")
	held := h.logged(append(evs, posted...))
	msgs, err := h.c.Batch(compose.Batch{Before: before, Events: held, Dir: h.dir, Sender: &by, Answer: ans, HoldForDigest: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Recipient == h.key(a) {
			t.Fatalf("the author got a %s message at once under the plan:\n%s", m.Kind, readBack(t, m.Raw).text)
		}
	}
	// The digest comes at the plan's interval.
	before = h.s.Clone()
	h.now = h.now.Add(2 * time.Hour)
	ticked := engine.Tick(h.s, h.now)
	if len(ticked) == 0 || ticked[0].Type != engine.EvDigest {
		t.Fatalf("no digest at the plan's interval: %+v", ticked)
	}
	msgs, err = h.c.Batch(compose.Batch{Before: before, Events: h.logged(ticked), Dir: h.dir, HoldForDigest: true, Held: held})
	if err != nil {
		t.Fatal(err)
	}
	own := readBack(t, to(t, msgs, h.key(a)).Raw).text
	if want := "Your messages since the last digest, all done: VOTE " + b + " and your post."; !strings.Contains(strings.Join(strings.Fields(own), " "), want) {
		t.Errorf("the author's digest lacks %q:\n%s", want, own)
	}
	if other := readBack(t, to(t, msgs, h.key(h.town()[2])).Raw).text; strings.Contains(other, "Your messages") {
		t.Errorf("another reader's digest carries the author's receipt:\n%s", other)
	}
}

// voteAndPost applies a's thread message that votes for b and says text:
// the vote's events, the post's, and the answer to the message.
func voteAndPost(t *testing.T, h *harness, a, b, text string) (evs, posted []engine.Event, ans *compose.Answer) {
	t.Helper()
	env := engine.Env{Now: h.now, Rand: h.rand}
	by := h.player(a)
	v := vote(b)
	v.By, v.Channel = by, engine.Thread
	evs, err := engine.Apply(h.s, v, env)
	if err != nil {
		t.Fatal(err)
	}
	p := post(text)
	p.By, p.Channel = by, engine.Thread
	if posted, err = engine.Apply(h.s, p, env); err != nil {
		t.Fatal(err)
	}
	ans = &compose.Answer{State: h.s, Dir: h.dir, Sender: by, Channel: engine.Thread, Cause: "<p1@players.example.net>",
		Received: h.now, Now: h.now, Lines: []compose.Line{{Text: "VOTE " + b, Events: evs}}}
	return evs, posted, ans
}
