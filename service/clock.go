package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
)

// clockState is the game clock of a database whose game time runs faster
// than real time, as kept in DATABASE.clock: game time was Start at the real
// instant Anchor and runs Speed times faster since.
type clockState struct {
	Anchor time.Time `json:"anchor"`
	Start  time.Time `json:"start"`
	Speed  float64   `json:"speed"`
}

func (c clockState) clock() host.Clock {
	return host.Clock{Anchor: c.Anchor, Start: c.Start, Speed: c.Speed}
}

// SavedClock is the game clock kept beside the database at db, for tools
// that read a database while serve runs; an error when there is none.
func SavedClock(db string) (host.Clock, error) {
	data, err := os.ReadFile(ClockPath(db))
	if err != nil {
		return host.Clock{}, err
	}
	var c clockState
	if err := json.Unmarshal(data, &c); err != nil {
		return host.Clock{}, fmt.Errorf("read the game clock %s: %w", ClockPath(db), err)
	}
	return c.clock(), nil
}

// ClockPath is where serve keeps the game clock of the database at db.
func ClockPath(db string) string { return db + ".clock" }

// GameClock returns the game clock for the database at db. With real time
// (speed 1 and no clock file) it is the real clock and nothing is written.
// Otherwise the clock lives in a file beside the database, so that game
// time goes on across restarts, the time the host was down included, as
// real time does: anchored afresh at every start, a fast clock would fall
// back to the real time, and deadlines that passed while the host was down
// would come again hours of game time later. A change of speed continues
// from the game time reached.
func GameClock(db string, speed float64, now time.Time) (host.Clock, error) {
	path := ClockPath(db)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if speed == 1 {
			return host.Clock{Speed: 1, Anchor: now}, nil
		}
		c := clockState{Anchor: now.UTC(), Start: now.UTC(), Speed: speed}
		return c.clock(), writeClock(path, c)
	}
	if err != nil {
		return host.Clock{}, fmt.Errorf("read the game clock: %w", err)
	}
	var saved clockState
	if err := json.Unmarshal(data, &saved); err != nil || saved.Anchor.IsZero() || saved.Start.IsZero() || saved.Speed < 1 {
		return host.Clock{}, fmt.Errorf("the game clock %s is damaged; remove it to restart game time from now", path)
	}
	if saved.Speed == speed {
		return saved.clock(), nil
	}
	at := saved.clock()
	at.Real = func() time.Time { return now }
	c := clockState{Anchor: now.UTC(), Start: at.Now(), Speed: speed}
	return c.clock(), writeClock(path, c)
}

// writeClock replaces the clock file atomically: a crash leaves the old
// clock or the new one, never a part of either.
func writeClock(path string, c clockState) error {
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("write the game clock: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write the game clock: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the game clock: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write the game clock: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the game clock: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write the game clock: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename lasts through a power cut where the file system allows
		d.Close()
	}
	return nil
}

// SetGameClock writes the game clock of the database at db, which then
// reads c.Start at the real instant c.Anchor and runs c.Speed times faster
// than real time: how a test starts a host at a chosen game time.
func SetGameClock(db string, c host.Clock) error {
	return writeClock(ClockPath(db), clockState{Anchor: c.Anchor.UTC(), Start: c.Start.UTC(), Speed: c.Speed})
}

// WeekendEndAfter is the next Monday 07:00 America/Chicago after t: where a
// demo, the bench or a test starts game time, so that no weekend (D7)
// holds its first round.
func WeekendEndAfter(t time.Time) time.Time {
	e := engine.WeekendEnd(t)
	for !e.After(t) {
		e = engine.WeekendEnd(e.Add(7 * 24 * time.Hour))
	}
	return e
}
