package service

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/host"
)

// clockAt reads a clock at the real instant r.
func clockAt(c host.Clock, r time.Time) time.Time {
	c.Real = func() time.Time { return r }
	return c.Now()
}

// TestServeClock checks that serve's fast game clock goes on across
// restarts, downtime included, instead of falling back to the real time
// at every start, and that real time stays real time with no file.
func TestServeClock(t *testing.T) {
	db := filepath.Join(t.TempDir(), "m.db")
	t0 := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)

	c, err := GameClock(db, 1, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r := t0.Add(time.Minute); !clockAt(c, r).Equal(r) {
		t.Fatalf("speed 1 is not real time: %v at %v", clockAt(c, r), r)
	}
	if _, err := os.Stat(ClockPath(db)); !os.IsNotExist(err) {
		t.Fatalf("real time wrote a clock file: %v", err)
	}

	c, err = GameClock(db, 3600, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := clockAt(c, t0.Add(time.Second)); !got.Equal(t0.Add(time.Hour)) {
		t.Fatalf("one second at 3600x: %v", got)
	}
	// A restart ten seconds later, the host having been down meanwhile:
	// ten game hours have passed, not none.
	c, err = GameClock(db, 3600, t0.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := clockAt(c, t0.Add(10*time.Second)); !got.Equal(t0.Add(10 * time.Hour)) {
		t.Fatalf("after a restart the game clock reads %v, want %v", got, t0.Add(10*time.Hour))
	}
	// A new speed continues from the game time reached.
	c, err = GameClock(db, 60, t0.Add(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := clockAt(c, t0.Add(21*time.Second)); !got.Equal(t0.Add(20*time.Hour + time.Minute)) {
		t.Fatalf("after a change of speed the game clock reads %v", got)
	}
	// Even back at real speed.
	c, err = GameClock(db, 1, t0.Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if got := clockAt(c, t0.Add(31*time.Second)); !got.Equal(t0.Add(20*time.Hour + 10*time.Minute + time.Second)) {
		t.Fatalf("back at speed 1 the game clock reads %v", got)
	}

	if err := os.WriteFile(ClockPath(db), []byte("{\"speed\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := GameClock(db, 3600, t0); err == nil {
		t.Fatal("a damaged clock file was accepted")
	}
}
