//go:build integration

package sender_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/mail/mailserver"
)

// burstRounds is how many times the Postfix run plays every case, each
// time with choices of its own: twice under the race detector, which
// makes each run several times as costly and sees the same goroutines in
// the second round as in the sixth; CI plays all six without it.
func burstRounds() int {
	if raceEnabled {
		return 2
	}
	return 6
}

// The long run: every case burstRounds times, through a provider with the
// limit (the embedded server, relaying) in front of a real Postfix that
// delivers into a real Dovecot, where each reader's mailbox is read over
// IMAP. The players' mail never passes the provider: its limit is the
// host's account's alone. MAFIAMAIL_SEED replays one run.
func TestLimitInABurstIsAWaitThroughPostfix(t *testing.T) {
	stack := mailstack.Start(t, mailstack.Config{})
	// Each case has readers of its own, whose mailboxes its rounds
	// share. They are made before any mail flows: Postfix refuses mail
	// for a user it does not know yet, and learns of new ones only
	// between its sessions.
	for i := range burstCases() {
		for _, r := range append([]string{burstReferee}, burstReaders...) {
			if err := stack.AddUser(readerPrefix(i)+r, readerPass); err != nil {
				t.Fatal(err)
			}
		}
	}
	seed := testseed.Seed(t)
	var runs atomic.Int64
	cases := burstCases()
	// The runs wait on the provider's windows and on Postfix, not on the
	// processor: six at a time overlap their waits.
	concurrently(t, burstRounds()*len(cases), 6, func(run int) string {
		return fmt.Sprintf("%d/%s", run/len(cases), cases[run%len(cases)])
	}, func(t *testing.T, run int) {
		i := run % len(cases)
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		runBurst(t, cases[i], rng, (run+1)*runNumbers, 500*time.Millisecond, func(t *testing.T, lim *mailserver.SendLimit) provider {
			return postfixProvider(t, stack, readerPrefix(i), lim)
		})
		if !t.Failed() {
			runs.Add(1)
		}
	})
	t.Cleanup(func() {
		t.Logf("%d runs of %d delivered every copy exactly once", runs.Load(), burstRounds()*len(burstCases()))
	})
}

// readerPass is the password of the readers' Dovecot mailboxes.
const readerPass = "reader-pw"

// readerPrefix names the readers of case i.
func readerPrefix(i int) string { return fmt.Sprintf("c%d", i) }

// postfixProvider is the embedded server with lim in front of stack's
// Postfix, to which it relays what it accepts; the readers are the
// Dovecot users named with prefix.
func postfixProvider(t *testing.T, stack *mailstack.Stack, prefix string, lim *mailserver.SendLimit) provider {
	t.Helper()
	srv := startServer(t, mailserver.Config{Users: map[string]string{"host": "pw"}, Relay: stack.SMTPAddr(), SendLimit: lim})
	return provider{addr: srv.SMTPAddr(), limit: lim,
		address: func(reader string) string { return stack.Address(prefix + reader) },
		delivered: func(t *testing.T) map[string]int {
			if err := stack.WaitDelivered(); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, r := range append([]string{burstReferee}, burstReaders...) {
				for _, id := range readInbox(t, stack.IMAPAddr(), prefix+r, readerPass) {
					got[id+" "+prefix+r]++
				}
			}
			return got
		}}
}
