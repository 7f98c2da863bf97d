package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// TestD8_DeadlineReadOnceByTheEngine: the referee's DEADLINE reaches the
// engine as written and is read there, in the game's zone unless it names
// one, in every form the answer to a bad one suggests.
func TestD8_DeadlineReadOnceByTheEngine(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	for line, want := range map[string]time.Time{
		"DEADLINE 2026-12-07 18:00":               time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC), // New York
		"DEADLINE 2026-12-07T18:00":               time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC),
		"DEADLINE 2026-12-07 18:00 UTC":           time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC),
		"DEADLINE 2026-12-07 18:00 Europe/Berlin": time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC),
		"DEADLINE 2026-12-07T18:00-05:00":         time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC),
		"DEADLINE 2026-12-07 18:00 +01:00":        time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC),
	} {
		hs.send("ref@example.org", ref, line)
		if got := hs.game("g1").Deadline; !got.Equal(want) {
			t.Errorf("%s: deadline %v, want %v", line, got, want)
		}
	}
	before := len(hs.outbox())
	hs.send("ref@example.org", ref, "DEADLINE friday evening")
	answers := hs.mailTo("ref@example.org", before)
	if len(answers) != 1 {
		t.Fatalf("the referee gets one answer to a DEADLINE the engine cannot read: %d", len(answers))
	}
	// The examples are dated two days after the game's clock, in its zone.
	example := hs.game("g1").Clock.In(engine.DefaultLocation()).AddDate(0, 0, 2).Format("2006-01-02") + " 18:00 Europe/Berlin"
	if body := string(answers[0].Raw); !strings.Contains(body, example) || !strings.Contains(body, "America/New_York") {
		t.Fatalf("the answer says how to write a time, in the game's zone:\n%s", body)
	}
}

// TestStoredDeadlineFollowsTheGame: the game's row holds its next
// deadline after every command, tick and restart; a command that leaves
// the deadline as it was does not write the row, and an ended game's row
// is written by every message (its time of change ages its mail out).
func TestStoredDeadlineFollowsTheGame(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	row := func(step string) store.Game {
		t.Helper()
		g, err := hs.st.Game(ctx, "g1")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := engine.NextDeadline(hs.game("g1"))
		if !g.Deadline.Equal(want) {
			t.Fatalf("after %s the row's deadline is %v, the game's %v", step, g.Deadline, want)
		}
		return g
	}
	before := row("START")
	hs.now = hs.now.Add(time.Minute)
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	hs.send(addr("Bob"), hs.thread("Bob"), "UNVOTE")
	hs.restart()
	hs.send(addr("Carol"), hs.thread("Carol"), "VOTE Dave")
	if g := row("votes and a restart"); !g.UpdatedAt.Equal(before.UpdatedAt) {
		t.Errorf("votes that leave the deadline rewrote the row: changed at %v, was %v", g.UpdatedAt, before.UpdatedAt)
	}
	for _, line := range []string{"PAUSE", "RESUME", "DEADLINE 2026-12-07 18:00 UTC"} {
		hs.now = hs.now.Add(time.Minute)
		hs.send("ref@example.org", ref, line)
		if g := row(line); !g.UpdatedAt.Equal(hs.now) {
			t.Errorf("%s changed the deadline, yet the row is of %v", line, g.UpdatedAt)
		}
	}
	// Every phase after: the clock runs the game to its end.
	for i := 0; i < 40 && hs.game("g1").Phase != engine.EndedPhase; i++ {
		next, ok := engine.NextDeadline(hs.game("g1"))
		if !ok {
			t.Fatalf("no deadline in phase %s", hs.game("g1").Phase)
		}
		hs.now = next.Add(time.Second)
		hs.tick()
		row("a tick")
	}
	if hs.game("g1").Phase != engine.EndedPhase {
		t.Fatal("the game did not end")
	}
	hs.now = hs.now.Add(time.Hour)
	hs.send(addr("Alice"), hs.thread("Alice"), "Good game, all.")
	if g := row("a post after the end"); !g.UpdatedAt.Equal(hs.now) {
		t.Errorf("a message to an ended game left its row of %v", g.UpdatedAt)
	}
}
