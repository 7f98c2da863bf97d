package engine

import (
	"testing"
	"time"
)

// BenchmarkWholeGame plays one whole random game per iteration, with the
// invariant checks of the random-game test.
func BenchmarkWholeGame(b *testing.B) {
	for _, setup := range []Setup{Classic(), Mafia150()} {
		b.Run(setup.Name, func(b *testing.B) {
			events := 0
			for i := 0; i < b.N; i++ {
				events += len(playRandomGame(b, setup, uint64(i)).log)
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/game")
		})
	}
}

// BenchmarkVote25 applies one vote to a 25-player game in its first day.
func BenchmarkVote25(b *testing.B) {
	setup := Mafia150()
	roles := make([]Role, 25)
	for i := range roles {
		roles[i] = Townsperson
	}
	for i := range 7 {
		roles[i] = Mafia
	}
	roles[7], roles[8], roles[9] = Inspector, Doctor, Vigilante
	g := rigged(b, setup, roles...)
	env := Env{Now: t0.Add(time.Hour)}
	cmds := []Command{
		{Verb: CmdVote, By: PlayerActor(12), Channel: Thread, Target: "Mallory"},
		{Verb: CmdVote, By: PlayerActor(12), Channel: Thread, Target: "Alice"},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(g.s, cmds[i%2], env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFoldVote25 is the baseline of BenchmarkVote25: folding the
// event a vote makes, with no checks and no clock. Their ratio is what
// the rules cost on top of recording the vote.
func BenchmarkFoldVote25(b *testing.B) {
	setup := Mafia150()
	roles := make([]Role, 25)
	for i := range roles {
		roles[i] = Townsperson
	}
	for i := range 7 {
		roles[i] = Mafia
	}
	roles[7], roles[8], roles[9] = Inspector, Doctor, Vigilante
	g := rigged(b, setup, roles...)
	evs := []Event{
		{V: EventVersion, Type: EvVoted, At: t0.Add(time.Hour), To: toAll, Slot: 12, Target: 11},
		{V: EventVersion, Type: EvVoted, At: t0.Add(time.Hour), To: toAll, Slot: 12, Target: 1},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := g.s.Fold(evs[i%2]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay is the baseline of BenchmarkWholeGame: rebuilding a
// whole game from its log, which is what the state costs without the rules
// and the random player that drives them.
func BenchmarkReplay(b *testing.B) {
	for _, setup := range []Setup{Classic(), Mafia150()} {
		b.Run(setup.Name, func(b *testing.B) {
			log := playRandomGame(b, setup, 1).log
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Replay(log); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(log)), "events/game")
		})
	}
}
