package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// compose is send without the delivery: the message as the watcher would
// read it, under the next UID.
func (hs *harness) compose(from, to, body string) []byte {
	hs.uid++
	return []byte(fmt.Sprintf("%sFrom: %s\r\nTo: %s\r\nSubject: game\r\nMessage-ID: <m%d@players.test>\r\n"+
		"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		hs.authResults(from), from, to, hs.uid, body))
}

// withSubject is raw, from compose, with another subject.
func withSubject(raw []byte, subject string) []byte {
	return []byte(strings.Replace(string(raw), "Subject: game", "Subject: "+subject, 1))
}

// handleGroup hands raws to HandleBatch as one group, under the next UIDs,
// and returns its errors.
func (hs *harness) handleGroup(raws [][]byte) []error {
	return hs.handleGroupIn(context.Background(), raws)
}

// handleGroupIn is handleGroup in ctx.
func (hs *harness) handleGroupIn(ctx context.Context, raws [][]byte) []error {
	ms := make([]Mail, len(raws))
	for i, raw := range raws {
		hs.uid++
		ms[i] = Mail{Mailbox: "INBOX", UIDValidity: 1, UID: hs.uid, Raw: raw, Size: len(raw)}
	}
	errs := hs.h.HandleBatch(ctx, ms)
	hs.checkSchedule()
	return errs
}

// dayScript is a day of mail from the players of setUp's game: votes,
// unvotes, posts, questions, lines that are no command, a message that
// cannot be processed, and messages sent twice, drawn from seed.
func dayScript(hs *harness, seed uint64) [][]byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var raws [][]byte
	for i := range 120 {
		p := players[rng.IntN(len(players))]
		other := players[rng.IntN(len(players))]
		to := hs.thread(p)
		if rng.IntN(3) == 0 {
			to = "host+g1-p-" + hs.token("g1", addr(p)) + "@example.org"
		}
		var body string
		switch rng.IntN(8) {
		case 0, 1:
			body = "VOTE " + other
		case 2:
			body = "UNVOTE"
		case 3:
			body = "STATUS"
		case 4:
			body = fmt.Sprintf("VOTE %s\n\n%s has been quiet all day (%d).", other, other, i)
		case 5:
			body = fmt.Sprintf("I think %s is lying about the night, post %d.", other, i)
		case 6:
			body = "VOTE Nobodyhere"
		case 7:
			body = "poison"
		}
		raw := hs.compose(addr(p), to, body)
		if body == "poison" {
			raw = withSubject(raw, "poison")
		}
		raws = append(raws, raw)
		if rng.IntN(10) == 0 {
			// The same message again, as after a crash or a second copy.
			raws = append(raws, raws[rng.IntN(len(raws))])
		}
	}
	return raws
}

// cancelAtLast returns a context that the handling of the message with
// the subject "last" ends, so that its group cannot commit.
func cancelAtLast(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	breakForTest = func(r inbound.Report) {
		if r.Subject == "last" {
			cancel()
		}
	}
	t.Cleanup(func() { breakForTest = nil })
	return ctx
}

// poisonForTest makes every message with the subject "poison" fail as a
// bug met on its content would.
func poisonForTest(t *testing.T) {
	breakForTest = func(r inbound.Report) {
		if r.Subject == "poison" {
			panic("a bug met on this message")
		}
	}
	t.Cleanup(func() { breakForTest = nil })
}

// outcome is what became of every message and what the host sent: the
// whole observable result of a day.
type outcome struct {
	state    string
	inbound  []string
	outbox   []string
	outcomes map[store.Outcome]int
}

func observe(t *testing.T, hs *harness) outcome {
	t.Helper()
	s, err := json.Marshal(hs.game("g1"))
	if err != nil {
		t.Fatal(err)
	}
	o := outcome{state: string(s), outcomes: map[store.Outcome]int{}}
	for _, m := range hs.outbox() {
		o.outbox = append(o.outbox, m.MessageID+" "+strings.Join(m.To, ",")+"\n"+string(m.Raw))
	}
	for _, oc := range []store.Outcome{store.OutcomeApplied, store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError} {
		ins, err := hs.st.InboundByOutcome(context.Background(), oc, 1000)
		if err != nil {
			t.Fatal(err)
		}
		o.outcomes[oc] = len(ins)
		for _, in := range ins {
			o.inbound = append(o.inbound, fmt.Sprintf("%s %s %s", in.MessageID, oc, in.Reason))
		}
	}
	slices.Sort(o.inbound)
	return o
}

// TestGroupCommitIsInvisible: a day of mail handled in groups, each in one
// transaction, has exactly the result of the same mail handled one
// message at a time: the same game, the same outcome for every message,
// the same outgoing mail byte for byte, in the same order. Each message
// sees what the ones before it in its group did (a vote, then its
// unvote; a message and its second copy in one group), and a message that
// fails is recorded as an error without taking the rest of its group with
// it.
func TestGroupCommitIsInvisible(t *testing.T) {
	poisonForTest(t)
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			// Groups committed whole, and groups cut after every message
			// (a window of nothing).
			groupWindow = time.Hour
			if seed%2 == 1 {
				groupWindow = 0
			}
			// One game, set up once and copied: the tokens of its
			// channels are drawn at random.
			one, grouped := newHarness(t), newHarness(t)
			one.draw = drawSeed(seed)
			one.restart()
			one.setUp()
			copyStore(t, one, grouped)
			one.draw, grouped.draw = drawSeed(seed+100), drawSeed(seed+100)
			one.open()
			grouped.open()
			grouped.uid = one.uid
			for _, raw := range dayScript(one, seed) {
				one.deliver(raw)
			}
			raws := dayScript(grouped, seed)
			rng := rand.New(rand.NewPCG(seed, 11))
			groups := 0
			for len(raws) > 0 {
				n := min(len(raws), 1+rng.IntN(12))
				for i, err := range grouped.handleGroup(raws[:n]) {
					if err != nil {
						t.Fatalf("message %d of a group: %v", i, err)
					}
				}
				raws, groups = raws[n:], groups+1
			}
			a, b := observe(t, one), observe(t, grouped)
			if a.state != b.state {
				t.Errorf("the game differs:\none at a time: %s\nin groups:     %s", a.state, b.state)
			}
			if !slices.Equal(a.inbound, b.inbound) {
				t.Errorf("the messages' outcomes differ:\none at a time: %q\nin groups:     %q", a.inbound, b.inbound)
			}
			if !slices.Equal(a.outbox, b.outbox) {
				t.Errorf("the outgoing mail differs: %d messages one at a time, %d in groups", len(a.outbox), len(b.outbox))
				for i := range min(len(a.outbox), len(b.outbox)) {
					if a.outbox[i] != b.outbox[i] {
						t.Fatalf("first difference, message %d:\n%s\n---\n%s", i, a.outbox[i], b.outbox[i])
					}
				}
			}
			if a.outcomes[store.OutcomeError] == 0 || a.outcomes[store.OutcomeApplied] < 50 {
				t.Errorf("the script did not exercise what it should: %v", a.outcomes)
			}
			t.Logf("%d messages in %d groups: %v; %d outgoing messages", len(a.inbound), groups, a.outcomes, len(a.outbox))
		})
	}
}

// TestGroupCommitFailedCommitKeepsNothing: when the group's transaction
// cannot commit, nothing of the group is kept, in the store or in the
// host's memory (games, rate limit), and every message of it reports the
// error, so the watcher offers them all again; offered again, they are
// applied once, exactly as if the failure had never been.
func TestGroupCommitFailedCommitKeepsNothing(t *testing.T) {
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	groupWindow = time.Hour
	hs := newLimitedHarness(t, 40)
	hs.setUp()
	before := observe(t, hs)
	raws := [][]byte{
		hs.compose(addr("Alice"), hs.thread("Alice"), "VOTE Bob"),
		hs.compose(addr("Carol"), hs.thread("Carol"), "VOTE Bob\n\nBob, explain yourself."),
		hs.compose(addr("Alice"), hs.thread("Alice"), "UNVOTE\nVOTE Carol"),
		withSubject(hs.compose(addr("Dave"), hs.thread("Dave"), "VOTE Bob"), "last"),
	}
	// The last message's handling ends the context the transaction runs
	// in: it cannot commit.
	ctx := cancelAtLast(t)
	ms := make([]Mail, len(raws))
	for i, raw := range raws {
		ms[i] = Mail{Mailbox: "INBOX", UIDValidity: 1, UID: uint32(1000 + i), Raw: raw, Size: len(raw)}
	}
	for i, err := range hs.h.HandleBatch(ctx, ms) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("message %d: %v, want the failed commit's error", i, err)
		}
	}
	breakForTest = nil
	if after := observe(t, hs); after.state != before.state || !slices.Equal(after.inbound, before.inbound) || len(after.outbox) != len(before.outbox) {
		t.Fatalf("a group that did not commit left something behind:\nbefore %+v\nafter  %+v", before.outcomes, after.outcomes)
	}
	// Offered again, the group is applied once. Alice's allowance was not
	// spent by the failed try: with 40 an hour, a burst of 10.
	for i, err := range hs.h.HandleBatch(context.Background(), ms) {
		if err != nil {
			t.Fatalf("message %d offered again: %v", i, err)
		}
	}
	s := hs.game("g1")
	if s.Player(1).Vote != 3 || s.Player(3).Vote != 2 {
		t.Errorf("after the retry Alice votes for %d (want Carol, 3) and Carol for %d (want Bob, 2)", s.Player(1).Vote, s.Player(3).Vote)
	}
	for range 8 {
		hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	}
	if refused, _ := hs.st.InboundByOutcome(context.Background(), store.OutcomeRefused, 10); len(refused) != 0 {
		t.Errorf("Alice was charged for the group that failed: %d of her messages refused", len(refused))
	}
}

// TestGroupCommitFailedKeepsTheClockAsItWas: a group that pauses a game
// and then cannot commit leaves the game's deadline where it was, for the
// clock and for the watcher's barrier; offered again, the pause takes.
func TestGroupCommitFailedKeepsTheClockAsItWas(t *testing.T) {
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	groupWindow = time.Hour
	hs := newHarness(t)
	hs.setUp()
	barrier := hs.h.Barrier()
	if barrier.IsZero() {
		t.Fatal("a running game has no deadline")
	}
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	raws := [][]byte{
		hs.compose("ref@example.org", ref, "PAUSE"),
		withSubject(hs.compose(addr("Dave"), hs.thread("Dave"), "VOTE Bob"), "last"),
	}
	ctx := cancelAtLast(t)
	for i, err := range hs.handleGroupIn(ctx, raws) {
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("message %d: %v, want the failed commit's error", i, err)
		}
	}
	breakForTest = nil
	if got := hs.h.Barrier(); !got.Equal(barrier) {
		t.Fatalf("after a group that did not commit the barrier is %v, want %v", got, barrier)
	}
	for i, err := range hs.handleGroup(raws) {
		if err != nil {
			t.Fatalf("message %d offered again: %v", i, err)
		}
	}
	if !hs.game("g1").Paused || !hs.h.Barrier().IsZero() {
		t.Fatalf("after the pause: paused %v, barrier %v", hs.game("g1").Paused, hs.h.Barrier())
	}
}

// A group that takes longer than groupWindow commits what it has and goes
// on in a new transaction; when a commit fails, the messages after it
// are not attempted, so that none overtakes one that will be retried.
func TestGroupCutByItsWindow(t *testing.T) {
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	groupWindow = 0
	hs := newHarness(t)
	hs.setUp()
	raws := [][]byte{
		hs.compose(addr("Alice"), hs.thread("Alice"), "VOTE Bob"),
		withSubject(hs.compose(addr("Carol"), hs.thread("Carol"), "VOTE Bob"), "last"),
		hs.compose(addr("Dave"), hs.thread("Dave"), "VOTE Bob"),
	}
	ctx := cancelAtLast(t)
	errs := hs.handleGroupIn(ctx, raws)
	if errs[0] != nil || !errors.Is(errs[1], context.Canceled) || !errors.Is(errs[2], context.Canceled) {
		t.Fatalf("errors %v: want the first message committed alone, and the failure for the rest", errs)
	}
	s := hs.game("g1")
	if s.Player(1).Vote != 2 || s.Player(3).Vote != 0 || s.Player(4).Vote != 0 {
		t.Errorf("votes of Alice, Carol, Dave: %d %d %d, want only Alice's (2)", s.Player(1).Vote, s.Player(3).Vote, s.Player(4).Vote)
	}
}

// TestGroupMailThatCannotBeLaidOut: a message whose mail cannot be laid
// out, in a group whose mail is laid out beside its next messages, fails
// alone: it is recorded as an error, and every other message of the group
// is applied and answered exactly as one at a time.
func TestGroupMailThatCannotBeLaidOut(t *testing.T) {
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	groupWindow = time.Hour
	broken := 0
	layOutForTest = func(msgs []compose.Outgoing) error {
		for _, m := range msgs {
			if strings.Contains(string(m.Raw), "Layoutbreaker") {
				broken++
				return errors.New("a template that breaks on this message")
			}
		}
		return nil
	}
	t.Cleanup(func() { layOutForTest = nil })
	one, grouped := newHarness(t), newHarness(t)
	one.setUp()
	copyStore(t, one, grouped)
	one.open()
	grouped.open()
	grouped.uid = one.uid
	script := func(hs *harness) [][]byte {
		return [][]byte{
			hs.compose(addr("Alice"), hs.thread("Alice"), "VOTE Bob"),
			hs.compose(addr("Carol"), hs.thread("Carol"), "STATUS"),
			hs.compose(addr("Bob"), hs.thread("Bob"), "VOTE Layoutbreaker"),
			hs.compose(addr("Dave"), hs.thread("Dave"), "VOTE Bob\n\nBob has been quiet."),
			hs.compose(addr("Alice"), hs.thread("Alice"), "UNVOTE"),
		}
	}
	before := observe(t, one)
	for _, raw := range script(one) {
		one.deliver(raw)
	}
	brokenAlone := broken
	for i, err := range grouped.handleGroup(script(grouped)) {
		if err != nil {
			t.Fatalf("message %d of the group: %v", i, err)
		}
	}
	if brokenAlone != 1 || broken < 3 {
		t.Fatalf("the broken mail was laid out %d times one at a time (want 1) and %d in all (want the group's try and its second)", brokenAlone, broken)
	}
	a, b := observe(t, one), observe(t, grouped)
	if a.outcomes[store.OutcomeError] != 1 || a.outcomes[store.OutcomeApplied] != before.outcomes[store.OutcomeApplied]+4 {
		t.Fatalf("one at a time: %v after %v, want 4 more applied and Bob's message an error", a.outcomes, before.outcomes)
	}
	if a.state != b.state || !slices.Equal(a.inbound, b.inbound) {
		t.Errorf("the group's outcome differs:\none at a time: %v %q\nin a group:    %v %q", a.outcomes, a.inbound, b.outcomes, b.inbound)
	}
	if !slices.Equal(a.outbox, b.outbox) {
		t.Errorf("the outgoing mail differs: %d messages one at a time, %d in the group", len(a.outbox), len(b.outbox))
	}
	for _, m := range b.outbox {
		if strings.Contains(m, "Layoutbreaker") {
			t.Errorf("mail of the message that failed went out:\n%s", m)
		}
	}
}

// copyStore closes the stores of from and to and copies from's over
// to's: two hosts that start from the same games, drawn tokens and all.
// Open both again before use.
func copyStore(t *testing.T, from, to *harness) {
	t.Helper()
	for _, hs := range []*harness{from, to} {
		if err := hs.st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(t, from.path, to.path)
}
