//go:build unix

package host

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// BenchmarkCommandByGames times one command, STATUS in a player's private
// channel (the bench's load), from the raw message to the committed
// transaction with its answer queued, in a host that keeps 1, 10, 100 or
// 1,000 games of 25 players. What the host does for a command should not
// depend on how many other games it keeps: compare the ns/op of the sizes
// (they run on one machine, one after the other, in the same process).
// Every iteration commits to the store with its fsync, as in serve; the
// wait for the disk varies from run to run far more than the work, so the
// benchmark also reports the process's CPU time per command (cpu-ns/op),
// and its two parts: the process's own (user-ns/op) and the kernel's for
// it (sys-ns/op), the writes and syncs, which vary more from run to run.
func BenchmarkCommandByGames(b *testing.B) {
	for _, games := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("games=%d", games), func(b *testing.B) {
			// The games are set up inside the sub-benchmark, so that one
			// left out by -bench costs nothing, and b.Loop's first call
			// leaves the set-up out of the time. The host logs a line
			// per message; at a thousand games that would be most of
			// what the benchmark measures.
			hs := &harness{t: b, path: filepath.Join(b.TempDir(), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
				log: slog.New(slog.DiscardHandler), authserv: harnessAuthServ}
			hs.open()
			defer func() {
				if err := hs.st.Close(); err != nil {
					b.Fatal(err)
				}
			}()
			// Each player writes to its own private channel, round the
			// games, so that no game's state stays hot by itself.
			players := benchGames(hs, games, 25)
			b.ReportAllocs()
			n := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				// send gives every message a Message-ID of its own, as
				// the store would take a repeated one for a copy.
				p := players[n%len(players)]
				hs.send(p.address, p.channel, "STATUS")
				n++
			}
			processCPU(b).since(cpu0).report(b, b.N, "op")
			// Every command must have been applied: a refusal is a
			// cheaper path, and timing it would flatter the host.
			for _, o := range []store.Outcome{store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError} {
				if in, err := hs.st.InboundByOutcome(context.Background(), o, 1); err != nil || len(in) > 0 {
					b.Fatalf("a message was %s: %v %v", o, in, err)
				}
			}
		})
	}
}

// cpuTime is CPU time of the test process: its own (user) and the
// kernel's on its behalf (sys).
type cpuTime struct{ user, sys time.Duration }

// processCPU is the CPU time the test process has used so far.
func processCPU(b *testing.B) cpuTime {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return cpuTime{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
}

// since is the CPU time used between t0 and t.
func (t cpuTime) since(t0 cpuTime) cpuTime {
	return cpuTime{user: t.user - t0.user, sys: t.sys - t0.sys}
}

// report reports t per unit, n of them: the whole (cpu-ns/unit) and its
// two parts (user-ns/unit, sys-ns/unit).
func (t cpuTime) report(b *testing.B, n int, unit string) {
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(t.user+t.sys), "cpu-ns/"+unit)
	b.ReportMetric(per(t.user), "user-ns/"+unit)
	b.ReportMetric(per(t.sys), "sys-ns/"+unit)
}

// benchPlayer is a player of benchGames: its address and its private
// channel.
type benchPlayer struct{ address, channel string }

// benchGames creates and starts games of the given size by mail, as the
// bench does, and returns every player of every game, the games' first
// players first, then their second, and so on.
func benchGames(hs *harness, games, players int) []benchPlayer {
	hs.t.Helper()
	setup := "SETUP mafia150"
	if players != 25 {
		setup = fmt.Sprintf("SETUP players=%d mafia=%d", players, max(1, players/4))
	}
	address := func(g, i int) string { return fmt.Sprintf("p%d@players.test", g*players+i) }
	for g := range games {
		id := fmt.Sprintf("g%d", g)
		hs.send("ref@example.org", "host@example.org", "NEW GAME "+id)
		ref := "host+" + id + "-p-" + hs.token(id, "ref@example.org") + "@example.org"
		var body strings.Builder
		body.WriteString(setup + "\r\n")
		for i := range players {
			fmt.Fprintf(&body, "ADD P%s %s\r\n", letters(i), address(g, i))
		}
		body.WriteString("START")
		hs.send("ref@example.org", ref, body.String())
		if s := hs.game(id); s.Phase != engine.DayPhase || len(s.Players) != players {
			hs.t.Fatalf("game %s: phase %s with %d players after START", id, s.Phase, len(s.Players))
		}
	}
	var out []benchPlayer
	for i := range players {
		for g := range games {
			id := fmt.Sprintf("g%d", g)
			a := address(g, i)
			out = append(out, benchPlayer{a, "host+" + id + "-p-" + hs.token(id, a) + "@example.org"})
		}
	}
	return out
}

// letters names player i with letters alone: a digit in a name would read
// as a vote count.
func letters(i int) string {
	var b []byte
	for n := i; ; n = n/26 - 1 {
		b = append([]byte{byte('a' + n%26)}, b...)
		if n < 26 {
			return string(b)
		}
	}
}

// BenchmarkGroupCommit times STATUS commands handled one to a transaction
// and ten to a transaction (HandleBatch, as the watcher hands over a
// backlog), per command, with the process's CPU time: the commit and its
// fsync are paid once per group.
func BenchmarkGroupCommit(b *testing.B) {
	defer func(w time.Duration) { groupWindow = w }(groupWindow)
	groupWindow = time.Hour
	for _, size := range []int{1, 10} {
		b.Run(fmt.Sprintf("group=%d", size), func(b *testing.B) {
			hs := &harness{t: b, path: filepath.Join(b.TempDir(), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
				log: slog.New(slog.DiscardHandler), authserv: harnessAuthServ}
			hs.open()
			defer func() {
				if err := hs.st.Close(); err != nil {
					b.Fatal(err)
				}
			}()
			players := benchGames(hs, 10, 25)
			b.ReportAllocs()
			n := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				raws := make([][]byte, size)
				for i := range raws {
					p := players[(n+i)%len(players)]
					raws[i] = hs.compose(p.address, p.channel, "STATUS")
				}
				n += size
				for _, err := range hs.handleGroup(raws) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			processCPU(b).since(cpu0).report(b, n, "cmd")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/cmd")
			if in, err := hs.st.InboundByOutcome(context.Background(), store.OutcomeApplied, 0); err != nil || len(in) < n {
				b.Fatalf("%d of %d commands applied (%v)", len(in), n, err)
			}
		})
	}
}
