package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// Event is one entry of a game's append-only log.
type Event struct {
	Game string
	// Seq numbers a game's events 1, 2, 3, ... without gaps.
	Seq  int64
	Type string
	// Version is the version of the payload's shape for this Type, so that
	// old events can still be read after the engine changes.
	Version int
	Payload json.RawMessage
	At      time.Time
	// Cause tells what made the event: "inbox:<id>", "deadline", ...
	Cause string
}

// NewEvent is an event to append.
type NewEvent struct {
	Type    string
	Version int
	// Payload must be valid JSON.
	Payload json.RawMessage
	At      time.Time
}

// AppendEvents appends events to a game's log. after is the sequence number
// of the last event the caller's state reflects (0 for none): if the log has
// moved on since, nothing is appended and the error is ErrSeqConflict. It
// returns the stored events with their sequence numbers.
func (tx *Tx) AppendEvents(ctx context.Context, game string, after int64, cause string, evs ...NewEvent) ([]Event, error) {
	last, err := tx.LastSeq(ctx, game)
	if err != nil {
		return nil, err
	}
	if last != after {
		return nil, fmt.Errorf("store: append to %s after event %d: log is at %d: %w", game, after, last, ErrSeqConflict)
	}
	out := make([]Event, 0, len(evs))
	for i, e := range evs {
		if e.Type == "" {
			return nil, fmt.Errorf("store: append to %s: event %d has no type", game, i)
		}
		if !json.Valid(e.Payload) {
			return nil, fmt.Errorf("store: append %s to %s: payload is not valid JSON", e.Type, game)
		}
		ev := Event{
			Game: game, Seq: last + int64(i) + 1, Type: e.Type, Version: e.Version,
			Payload: e.Payload, At: fromNanos(toNanos(e.At)), Cause: cause,
		}
		_, err := tx.q.ExecContext(ctx, `INSERT INTO events
			(game, seq, type, version, payload, created_at, cause) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			ev.Game, ev.Seq, ev.Type, ev.Version, string(ev.Payload), toNanos(ev.At), ev.Cause)
		if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY) {
			return nil, fmt.Errorf("store: append to %s: game %w", game, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("store: append %s to %s: %w", e.Type, game, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

// LastSeq returns the sequence number of a game's last event, 0 if none.
func (r reader) LastSeq(ctx context.Context, game string) (int64, error) {
	var last int64
	err := r.q.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM events WHERE game = ?`, game).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("store: last event of %s: %w", game, err)
	}
	return last, nil
}

// Events returns a game's events after sequence number after, in order.
func (r reader) Events(ctx context.Context, game string, after int64) ([]Event, error) {
	return r.eventRange(ctx, game, after, -1)
}

// eventRange returns the events with after < seq <= upTo (upTo < 0: all).
func (r reader) eventRange(ctx context.Context, game string, after, upTo int64) ([]Event, error) {
	query := `SELECT seq, type, version, payload, created_at, cause FROM events
		WHERE game = ? AND seq > ? ORDER BY seq`
	args := []any{game, after}
	if upTo >= 0 {
		query = `SELECT seq, type, version, payload, created_at, cause FROM events
			WHERE game = ? AND seq > ? AND seq <= ? ORDER BY seq`
		args = append(args, upTo)
	}
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", game, err)
	}
	defer rows.Close()
	var evs []Event
	for rows.Next() {
		e := Event{Game: game}
		var payload string
		var at int64
		if err := rows.Scan(&e.Seq, &e.Type, &e.Version, &payload, &at, &e.Cause); err != nil {
			return nil, fmt.Errorf("store: events of %s: %w", game, err)
		}
		e.Payload, e.At = json.RawMessage(payload), fromNanos(at)
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", game, err)
	}
	// The log must be dense: a gap means rows went missing.
	for i, e := range evs {
		if e.Seq != after+int64(i)+1 {
			return nil, fmt.Errorf("store: %w: events of %s: expected seq %d, found %d", ErrCorrupt, game, after+int64(i)+1, e.Seq)
		}
	}
	return evs, nil
}

// Snapshot is a game's state as of event Seq, as the caller's fold wrote it.
type Snapshot struct {
	Game  string
	Seq   int64
	State []byte
	// Hash is the hex SHA-256 of State.
	Hash string
	At   time.Time
}

func hashState(state []byte) string {
	sum := sha256.Sum256(state)
	return hex.EncodeToString(sum[:])
}

// SaveSnapshot stores state as the game's state after event seq, replacing
// any older snapshot. seq must be an event of the game.
func (tx *Tx) SaveSnapshot(ctx context.Context, game string, seq int64, state []byte, now time.Time) error {
	last, err := tx.LastSeq(ctx, game)
	if err != nil {
		return err
	}
	if seq < 1 || seq > last {
		return fmt.Errorf("store: snapshot of %s at event %d: the log has events 1..%d", game, seq, last)
	}
	_, err = tx.q.ExecContext(ctx, `INSERT INTO snapshots (game, seq, state, hash, created_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (game) DO UPDATE SET seq = excluded.seq, state = excluded.state,
			hash = excluded.hash, created_at = excluded.created_at`,
		game, seq, state, hashState(state), toNanos(now))
	if err != nil {
		return fmt.Errorf("store: snapshot of %s: %w", game, err)
	}
	return nil
}

// LatestSnapshot returns a game's snapshot; ok is false if it has none. It
// returns ErrCorrupt if the state does not match its hash.
func (r reader) LatestSnapshot(ctx context.Context, game string) (snap Snapshot, ok bool, err error) {
	var at int64
	snap.Game = game
	err = r.q.QueryRowContext(ctx, `SELECT seq, state, hash, created_at FROM snapshots WHERE game = ?`, game).
		Scan(&snap.Seq, &snap.State, &snap.Hash, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return Snapshot{}, false, nil
	}
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("store: snapshot of %s: %w", game, err)
	}
	snap.At = fromNanos(at)
	if hashState(snap.State) != snap.Hash {
		return Snapshot{}, false, fmt.Errorf("store: %w: snapshot of %s at event %d does not match its hash", ErrCorrupt, game, snap.Seq)
	}
	return snap, true, nil
}

// FoldFunc applies events, in order, to a game's state and returns the new
// state. state is nil for a game before its first event. It must be
// deterministic: the same state and events give the same bytes.
type FoldFunc func(game string, state []byte, events []Event) ([]byte, error)

// Rebuilt is a game's state rebuilt from the store.
type Rebuilt struct {
	Game string
	// Seq is the last event folded into State.
	Seq   int64
	State []byte
	// FromSnapshot is the event the snapshot used was taken at, 0 if the
	// whole log was folded.
	FromSnapshot int64
	// Verified is true when the snapshot was checked against a fold of the
	// log up to it.
	Verified bool
	// Stale is true when that check failed: the snapshot was passed over
	// and State is the fold of the whole log. The log is the record; a
	// snapshot is only a shortcut, which a newer fold (a program that
	// keeps more in its state) makes stale.
	Stale bool
}

// Rebuild returns a game's current state: its snapshot, if any, with the
// rest of the log folded onto it. With verify, the snapshot is checked
// against a fold of the log from the start; if they differ, the fold is
// used and the result is marked Stale.
// Everything is read in one transaction, so concurrent writes do not tear
// the result.
func (s *Store) Rebuild(ctx context.Context, game string, fold FoldFunc, verify bool) (Rebuilt, error) {
	var out Rebuilt
	err := s.readTx(ctx, func(r reader) error {
		var err error
		out, err = r.rebuild(ctx, game, fold, verify)
		return err
	})
	return out, err
}

// RebuildAll rebuilds every game, as Rebuild does, in one read transaction.
func (s *Store) RebuildAll(ctx context.Context, fold FoldFunc, verify bool) ([]Rebuilt, error) {
	var out []Rebuilt
	err := s.readTx(ctx, func(r reader) error {
		games, err := r.Games(ctx)
		if err != nil {
			return err
		}
		for _, g := range games {
			rb, err := r.rebuild(ctx, g.ID, fold, verify)
			if err != nil {
				return err
			}
			out = append(out, rb)
		}
		return nil
	})
	return out, err
}

func (r reader) rebuild(ctx context.Context, game string, fold FoldFunc, verify bool) (Rebuilt, error) {
	out := Rebuilt{Game: game}
	snap, ok, err := r.LatestSnapshot(ctx, game)
	if err != nil {
		return Rebuilt{}, err
	}
	var state []byte
	if ok {
		if verify {
			head, err := r.eventRange(ctx, game, 0, snap.Seq)
			if err != nil {
				return Rebuilt{}, err
			}
			if int64(len(head)) != snap.Seq {
				return Rebuilt{}, fmt.Errorf("store: %w: %s has a snapshot at event %d but only %d events", ErrCorrupt, game, snap.Seq, len(head))
			}
			full, err := fold(game, nil, head)
			if err != nil {
				return Rebuilt{}, fmt.Errorf("store: rebuild %s: fold events 1..%d: %w", game, snap.Seq, err)
			}
			out.Verified = true
			if !bytes.Equal(full, snap.State) {
				out.Stale = true
				snap.State = full
			}
		}
		state, out.Seq, out.FromSnapshot = snap.State, snap.Seq, snap.Seq
	}
	tail, err := r.Events(ctx, game, out.Seq)
	if err != nil {
		return Rebuilt{}, err
	}
	if len(tail) > 0 || state == nil {
		state, err = fold(game, state, tail)
		if err != nil {
			return Rebuilt{}, fmt.Errorf("store: rebuild %s: fold events %d..: %w", game, out.Seq+1, err)
		}
		out.Seq += int64(len(tail))
	}
	out.State = state
	return out, nil
}

// readTx runs fn in one read transaction on the read pool: it sees one
// consistent state of the database.
func (s *Store) readTx(ctx context.Context, fn func(r reader) error) error {
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: begin read: %w", err)
	}
	defer tx.Rollback()
	return fn(reader{q: tx})
}
