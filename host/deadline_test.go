package host

import (
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestD8_DeadlineReadOnceByTheEngine: the referee's DEADLINE reaches the
// engine as written and is read there, in the game's zone unless it names
// one, in every form the answer to a bad one suggests.
func TestD8_DeadlineReadOnceByTheEngine(t *testing.T) {
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
