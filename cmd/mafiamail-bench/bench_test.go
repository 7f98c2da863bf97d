package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/binary"
	"github.com/mafiamail/mafiamail/mail/command"
)

// benchBinary is the bench's own command, whose child subcommand runs the
// host and the relay: built once for the package.
var benchBinary = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail-bench")

func TestMain(m *testing.M) { binary.RunTests(m, benchBinary) }

// The command line refuses what it cannot run, with exit status 2, before
// it starts anything. (Runs of the bench itself, which start a host and
// a relay over sockets, are in e2e/bench_test.go.)
func TestBenchRefusesBadFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	for _, bad := range [][]string{{"--games", "x"}, {"--runs", "0"}, {"--stack", "exim"}, {"--load", "night"},
		{"--load", "day", "--players", "5"}, {"--digest-every", "0s"}, {"--baseline", filepath.Join(t.TempDir(), "none")}} {
		if code := run(bad, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// No post of the day load holds a line the host would read as a command,
// in the thread or the mafia list, whatever its length; each carries its
// marker on its first line.
func TestDiscussionIsNoCommand(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		text := discussion(r, int64(i), postSize(r))
		for _, set := range []command.Set{command.Thread, command.Mafia} {
			if res := command.Parse(text, set); res.Lines() != 0 {
				t.Fatalf("post %d reads as commands in %s: %+v\n%s", i, set, res, text)
			}
		}
		if first, _, _ := strings.Cut(text, "\r\n"); first != fmt.Sprintf("[b%d]", i) {
			t.Fatalf("post %d starts %q", i, first)
		}
		if len(text) < 300 || len(text) > 2400 {
			t.Fatalf("post %d is %d bytes", i, len(text))
		}
	}
}

// The mix draws each kind of message about as often as its weight says.
func TestDayMix(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var n [dayOps]int
	const draws = 100000
	for range draws {
		n[drawOp(r)]++
	}
	sum := 0
	for _, w := range dayOpWeight {
		sum += w
	}
	if sum != 100 {
		t.Errorf("the weights add up to %d, not 100", sum)
	}
	for op, w := range dayOpWeight {
		if got := float64(n[op]) * 100 / draws; got < float64(w)-1 || got > float64(w)+1 {
			t.Errorf("%s: %.1f%%, want %d%%", dayOpNames[op], got, w)
		}
	}
}

// The stack alone's copies carry no X-Mafiamail-Kind: counted apart, a
// digest the host sends while the stack alone runs neither ends its
// window early nor late.
func TestStackAloneCountsItsOwnCopies(t *testing.T) {
	e := &benchEnv{}
	t0 := time.Unix(1000, 0)
	e.arrived(delivered{to: "players+g1-p1@example.test", at: t0.Add(2 * time.Second), kind: "digest"})
	e.arrived(delivered{to: "players+g1-p2@example.test", at: t0})
	e.arrived(delivered{to: "players+g1-p3@example.test", at: t0.Add(time.Second)})
	e.arrived(delivered{to: "players+g1-p4@example.test", at: t0.Add(-time.Second)})
	if n, last := e.unmarked.Load(), time.Unix(0, e.lastUnmarked.Load()); n != 3 || !last.Equal(t0.Add(time.Second)) {
		t.Errorf("the stack's own copies: %d, the last at %v; want 3, the last at %v", n, last, t0.Add(time.Second))
	}
	if n, last := e.toPlayers.Load(), time.Unix(0, e.lastDelivery.Load()); n != 4 || !last.Equal(t0.Add(2*time.Second)) {
		t.Errorf("all deliveries: %d, the last at %v; want 4, the last at %v", n, last, t0.Add(2*time.Second))
	}
}

// The day load's deliveries end with its last copy or answer: a digest
// that the games' clock sends after it is left out, one before it counts.
func TestDigestsAfterTheLoadAreLeftOut(t *testing.T) {
	d := newDayState(25, true)
	reader, other := &benchPlayer{}, &benchPlayer{}
	reader.day.digest.Store(true)
	t0 := time.Unix(1000, 0)
	mail := func(kind string, at time.Time) delivered {
		return delivered{kind: kind, at: at, replyTo: func() string { return "" }, text: func() []byte { return nil }}
	}
	d.seen(reader, mail("thread", t0))                     // a digest during the load
	d.seen(other, mail("thread", t0.Add(time.Second)))     // a post's copy
	d.seen(reader, mail("confirm", t0.Add(2*time.Second))) // an answer, the load's last mail
	d.refereeSeen(mail("thread", t0.Add(3*time.Second)))   // the referee's digest, after it
	d.seen(reader, mail("thread", t0.Add(4*time.Second)))  // and a reader's
	end := time.Unix(0, d.lastMail.Load())
	if !end.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("the load's last mail at %v, want the answer's %v", end, t0.Add(2*time.Second))
	}
	if n, late := d.digestCount(), d.digestsAfter(end); n != 3 || late != 2 {
		t.Errorf("%d digests, %d after the load; want 3 and 2", n, late)
	}
}
