//go:build integration

package budgetsim_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/budgetsim"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
)

// cell is one game of the matrix: a group, how much it writes, and the
// mailbox it is hosted on.
type cell struct {
	setup    engine.Setup
	posts    int
	provider budgetsim.Provider
	// longest bounds the longest wait of a post, handed to the host to
	// delivered to the last player, alone or in a digest: the host plans
	// the thread to fit the budget, so a post waits for its digest and
	// not behind a day's queue (docs/mail.md, "Whole games against a
	// budget", has the figures seen).
	longest time.Duration
	// step is how far the clock moves between looks at the mail: a
	// quarter of an hour in the 25-player games, whose mail is heavier to
	// compose, five minutes in the others.
	step time.Duration
}

var cells = []cell{
	{engine.Classic(), 50, budgetsim.Gmail, 24 * time.Hour, 5 * time.Minute},
	{engine.Classic(), 50, budgetsim.Outlook, 24 * time.Hour, 5 * time.Minute},
	{engine.Mafia150(), 150, budgetsim.Gmail, 24 * time.Hour, 15 * time.Minute},
	{engine.Mafia150(), 150, budgetsim.Outlook, 36 * time.Hour, 15 * time.Minute},
}

// Whole games, played by players who read the host's mail, on a mailbox
// with a provider's daily limit and the host's budget set to it, in game
// time: every game ends with a winner, the provider refuses nothing, no
// rolling day holds more than the limit, every message reaches each of
// its readers exactly once, and no secret arrives after a thread post
// queued after it. How long posts wait, and how much mail each player
// gets, is reported (go test -v; MAFIAMAIL_BUDGETSIM_SUMMARY names a file
// for the table).
func TestWholeGamesAgainstBudget(t *testing.T) {
	s := testseed.Seed(t)
	var figures []budgetsim.Figures
	played := cells
	if raceEnabled {
		// The race detector makes a whole game some ten times as costly;
		// the classic game against Gmail's limit takes the host through
		// the same code as the others, and CI plays every cell without it.
		played = cells[:1]
	}
	for _, c := range played {
		cfg := budgetsim.Config{Setup: c.setup, PostsPerDay: c.posts, Provider: c.provider, Seed: s,
			MaxDays: 40, MaxDrainDays: 500, Step: c.step}
		t.Run(strings.ReplaceAll(cfg.Name(), "/", " per "), func(t *testing.T) {
			cfg.Dir, cfg.Log = dir(t), testlog.New(t, slog.LevelWarn)
			cfg.Progress = func(s string) { t.Log(s) }
			began := time.Now()
			res, err := budgetsim.Run(context.Background(), cfg)
			t.Logf("ran in %s", time.Since(began).Round(time.Second))
			if res == nil {
				t.Fatal(err)
			}
			f := res.Figures()
			figures = append(figures, f)
			t.Log("\n" + f.Summary())
			if errors.Is(err, budgetsim.ErrUnfinished) {
				t.Fatalf("%v", err)
			} else if err != nil {
				t.Fatal(err)
			}
			if res.Winner == "" {
				t.Errorf("the game ended with no winner")
			}
			for _, p := range res.Problems() {
				t.Error(p)
			}
			for kind, n := range res.Skipped {
				t.Errorf("players did not know where to send %d %s messages: the host's mail did not tell them", n, kind)
			}
			if f.Posts == 0 || f.Undelivered > 0 {
				t.Errorf("%d posts relayed, %d not delivered", f.Posts, f.Undelivered)
			}
			if f.LongestWait > c.longest {
				t.Errorf("a post waited %s, longer than the bound of %s", f.LongestWait, c.longest)
			}
		})
	}
	table := budgetsim.Table(figures)
	t.Logf("seed %d\n%s", s, table)
	if path := os.Getenv("MAFIAMAIL_BUDGETSIM_SUMMARY"); path != "" {
		if err := os.WriteFile(path, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// dir is where the host's database goes: in memory where the machine has
// a tmpfs, since a game commits tens of thousands of transactions and the
// simulation is about game time, not the disk.
func dir(t *testing.T) string {
	t.Helper()
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "budgetsim-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}
