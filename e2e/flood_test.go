//go:build integration

package e2e

import (
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

// floodSize is the size of the flood, and of the backlog of real posts its
// rate is measured against.
const floodSize = 5000

// A flood of junk must not decide which votes count: thousands of tiny
// mails with all-different forged senders to made-up thread addresses,
// sent just before a deadline, then a real vote that reaches the mailbox
// before it. The vote counts and the closing tally shows it; the flood is
// reported to the referee once, with its size; and the junk drains at no
// less than 0.8 times the rate of as many real posts.
func TestJunkFloodDoesNotDecideWhichVotesCount(t *testing.T) {
	if testing.Short() {
		t.Skip("a flood of 5,000 messages and a backlog of 5,000 posts")
	}
	r := newRig(t, time.Minute)

	// The yardstick: as many real posts from the players, in a burst, an
	// hour before the deadline.
	r.start(clockAt(r.deadline.Add(-time.Hour)))
	r.waitFor("the watcher to catch up", func() bool { return r.w.Stats().CaughtUp })
	base := r.w.Stats().Handled
	threads := map[string]string{}
	for _, p := range players {
		threads[p] = r.thread(p)
	}
	started := time.Now()
	for i := range floodSize {
		p := players[i%len(players)]
		r.deliver(addr(p), threads[p], fmt.Sprintf("post-%d", i),
			fmt.Sprintf("Post %d: whoever stays quiet today has something to hide.", i), time.Time{})
	}
	postsIn := r.drained(base+floodSize, started)
	postRate := float64(floodSize) / postsIn.Seconds()
	r.stop()

	// The flood, fifteen seconds before the deadline, then Carol's vote.
	clock := clockAt(r.deadline.Add(-15 * time.Second))
	r.start(clock)
	r.waitFor("the watcher to catch up", func() bool { return r.w.Stats().CaughtUp })
	base = r.w.Stats().Handled
	started = time.Now()
	for i := range floodSize {
		r.deliver(fmt.Sprintf("voter%d@forged%d.example.net", i, i%97), madeUpThread(i), fmt.Sprintf("junk-%d", i),
			"VOTE Dave", time.Time{})
	}
	r.deliver(addr("Carol"), threads["Carol"], "carol-vote", "VOTE Dave", time.Time{})
	sent := time.Now()
	if !sent.Before(clock.RealAt(r.deadline)) {
		t.Fatalf("sending the flood took %v: the vote reached the mailbox after the deadline", sent.Sub(started))
	}
	// The flood drains while the round runs to its close: both are
	// watched at once, so that the drain's time is its own, not the wait
	// for the deadline.
	var tally *engine.Tally
	var junkIn time.Duration
	var handledAtClose uint64
	r.waitWithin(5*time.Minute, "the flood to drain and Day 1 to close", func() bool {
		st := r.w.Stats()
		if junkIn == 0 && st.Handled >= base+floodSize+1 {
			junkIn = time.Since(started)
		}
		if tally == nil {
			if tally = r.closedTally(); tally != nil {
				handledAtClose = r.w.Stats().Handled - base
			}
		}
		return tally != nil && junkIn > 0 && st.CaughtUp
	})
	if got := votesFor(tally, "Dave"); strings.Join(got, ",") != "Carol" {
		t.Fatalf("the closing tally has %v voting for Dave, want Carol's vote, which reached the mailbox %v before the deadline",
			got, clock.RealAt(r.deadline).Sub(sent).Round(time.Millisecond))
	}
	junkRate := float64(floodSize+1) / junkIn.Seconds()
	t.Logf("real posts: %d drained in %v (%.0f/s); junk: %d and a vote drained in %v (%.0f/s), ratio %.2f; "+
		"the round closed with %d of them handled, %v after the flood began",
		floodSize, postsIn.Round(time.Millisecond), postRate, floodSize, junkIn.Round(time.Millisecond), junkRate,
		junkRate/postRate, handledAtClose, clock.RealAt(r.deadline).Sub(started).Round(time.Millisecond))
	if junkRate < 0.8*postRate {
		t.Errorf("the junk drained at %.0f/s, less than 0.8 times the %.0f/s of real posts", junkRate, postRate)
	}

	r.waitFor("the flood to be reported", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.floods) > 0
	})
	// The host tells the referee after the watcher has reported the flood,
	// in a transaction of its own.
	notice := fmt.Sprintf("%d messages reached the host's mailbox that no game could use", floodSize)
	r.waitFor("the referee to be told of the flood", func() bool { return r.refereeNotices(notice) > 0 })
	time.Sleep(2 * time.Second) // a second report would come by now
	r.mu.Lock()
	floods := append([]watcher.Flood(nil), r.floods...)
	r.mu.Unlock()
	if len(floods) != 1 || floods[0].Messages != floodSize {
		t.Fatalf("floods reported: %+v, want one of %d messages", floods, floodSize)
	}
	if n := r.refereeNotices(notice); n != 1 {
		t.Errorf("the referee was told of the flood %d times, want once", n)
	}
}

// drained waits until the watcher has handled want messages in all and is
// caught up, and says how long that took since started.
func (r *rig) drained(want uint64, started time.Time) time.Duration {
	r.t.Helper()
	var done time.Duration
	last := time.Now()
	// A backlog of thousands takes about a minute on a loaded two-core
	// machine.
	r.waitWithin(5*time.Minute, fmt.Sprintf("%d messages to be handled", want), func() bool {
		st := r.w.Stats()
		if time.Since(last) > 5*time.Second {
			last = time.Now()
			r.t.Logf("handled %d of %d so far, %v", st.Handled, want, time.Since(started).Round(time.Millisecond))
		}
		if st.Handled >= want && done == 0 {
			done = time.Since(started)
		}
		return done > 0 && st.CaughtUp
	})
	return done
}

// madeUpThread is a thread address of game g1 with a token no one has.
func madeUpThread(i int) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(i)*2654435761+12345)
	tok := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	return "host+g1-t-" + tok + "@example.org"
}
