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
)

// BenchmarkCommandByGames times one command, STATUS in a player's private
// channel (the bench's load), from the raw message to the committed
// transaction with its answer queued, in a host that keeps 1, 10, 100 or
// 1,000 games of 25 players. What the host does for a command should not
// depend on how many other games it keeps: compare the ns/op of the sizes
// (they run on one machine, one after the other, in the same process).
// Every iteration commits to the store with its fsync, as in serve; the
// wait for the disk varies from run to run far more than the work, so the
// benchmark also reports the process's CPU time per command (cpu-ns/op).
func BenchmarkCommandByGames(b *testing.B) {
	for _, games := range []int{1, 10, 100, 1000} {
		// The host logs a line per message; at a thousand games that
		// would be most of what the benchmark measures.
		hs := &harness{t: b, path: filepath.Join(b.TempDir(), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
			log: slog.New(slog.DiscardHandler)}
		hs.open()
		channels := benchGames(hs, games, 25)
		// A message a player would send: each to its own private channel,
		// round the games, so that no game's state stays hot by itself.
		raws := make([][]byte, len(channels))
		for i, ch := range channels {
			from := fmt.Sprintf("p%d@players.test", i)
			raws[i] = fmt.Appendf(nil, "From: %s\r\nTo: %s\r\nSubject: Re: game\r\nMessage-ID: <bench.%d@players.test>\r\n"+
				"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSTATUS\r\n",
				from, ch, i)
		}
		b.Run(fmt.Sprintf("games=%d", games), func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			cpu0 := processCPU(b)
			for b.Loop() {
				raw := raws[n%len(raws)]
				// A new Message-ID each time, or the store takes it for
				// a copy of one it has seen.
				raw = append([]byte(nil), raw...)
				copy(raw[strings.Index(string(raw), "<bench.")+1:], fmt.Sprintf("b%06d", n%1000000))
				hs.uid++
				n++
				if err := hs.h.HandleMessage(ctx, "INBOX", 1, hs.uid, raw); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
		if err := hs.st.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the user and system time the test process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchGames creates and starts games of the given size by mail, as the
// bench does, and returns one player's private channel from each game in
// turn, every player of every game.
func benchGames(hs *harness, games, players int) []string {
	hs.t.Helper()
	setup := "SETUP mafia150"
	if players != 25 {
		setup = fmt.Sprintf("SETUP players=%d mafia=%d", players, max(1, players/4))
	}
	for g := range games {
		id := fmt.Sprintf("g%d", g)
		hs.send("ref@example.org", "host@example.org", "NEW GAME "+id)
		ref := "host+" + id + "-p-" + hs.token(id, "ref@example.org") + "@example.org"
		var body strings.Builder
		body.WriteString(setup + "\r\n")
		for i := range players {
			fmt.Fprintf(&body, "ADD P%s p%d@players.test\r\n", letters(i), g*players+i)
		}
		body.WriteString("START")
		hs.send("ref@example.org", ref, body.String())
		if s := hs.game(id); s.Phase != engine.DayPhase || len(s.Players) != players {
			hs.t.Fatalf("game %s: phase %s with %d players after START", id, s.Phase, len(s.Players))
		}
	}
	var channels []string
	for i := range players {
		for g := range games {
			id := fmt.Sprintf("g%d", g)
			channels = append(channels, "host+"+id+"-p-"+hs.token(id, fmt.Sprintf("p%d@players.test", g*players+i))+"@example.org")
		}
	}
	return channels
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
