package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	netmail "net/mail"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// game is one game as the host keeps it in memory: the engine's state, the
// sequence number of the last stored event it reflects, and the referee's
// participant row.
type game struct {
	state   *engine.State
	seq     int64
	referee store.Participant
	// observers maps each observer's address to their token.
	observers map[string]string
	// digest gathers the thread news of a game with a digest interval
	// since the last digest went out (T1), and digestSince is when it did.
	digest      []compose.Logged
	digestSince time.Time
	// lastDate is the latest Date of the game's mail composed since the
	// host started: later mail is never dated before it (a batch may date
	// its last mail a second or two ahead of its events).
	lastDate time.Time
	// next is the game's next deadline (NextDeadline), kept so that the
	// clock can find the earliest among a thousand games without
	// recomputing each one's after every message.
	next    time.Time
	hasNext bool
	// ordered is the game's next ordered deadline (NextOrderedDeadline):
	// the next one that waits for the mail that arrived before it.
	ordered    time.Time
	hasOrdered bool
	// stored is the deadline the game's row holds (zero: none, as in
	// the row of a game just created).
	stored time.Time
}

// setGame makes g the live game id (nil: no such game), in the games map
// and in the clock's schedule. The caller holds mu.
func (h *Host) setGame(id string, g *game) {
	if g == nil {
		delete(h.games, id)
	} else {
		h.games[id] = g
	}
	h.schedule.set(id, g)
}

// updateNext recomputes the game's next deadline after its state changed.
func (g *game) updateNext() {
	g.next, g.hasNext = engine.NextDeadline(g.state)
	g.ordered, g.hasOrdered = engine.NextOrderedDeadline(g.state)
}

// waitsForMail reports whether the game's deadline at t is applied only
// once the mail that arrived before it is read: whether an ordered
// deadline is due by then. A digest alone is sent on time.
func (g *game) waitsForMail(t time.Time) bool {
	return g.hasOrdered && !g.ordered.After(t)
}

// gather keeps what a batch leaves held for the next digest (T1): the
// thread news since the engine's last EvDigest. The composer sends the
// digests themselves, in their place among the batch's mail.
func (g *game) gather(evs []compose.Logged) {
	for _, l := range evs {
		switch {
		case engine.Digestible(l.Event):
			g.digest = append(g.digest, l)
		case l.Event.Type == engine.EvDigest:
			g.digest, g.digestSince = nil, l.Event.At
		}
	}
}

// dir is what the composer needs beyond the state: the referee's token and
// the observers'.
func (g *game) dir() compose.Directory {
	return compose.Directory{RefereeToken: g.referee.Token, Observers: g.observers}
}

func (g *game) clone() *game {
	c := *g
	c.state = g.state.Clone()
	c.digest = append([]compose.Logged(nil), g.digest...)
	c.observers = make(map[string]string, len(g.observers))
	for a, t := range g.observers {
		c.observers[a] = t
	}
	return &c
}

// foldJSON is the store's fold for engine games: state JSON in, events
// folded, state JSON out. It is what rebuilds every game on start, and what
// checks snapshots against the log.
func foldJSON(id string, state []byte, evs []store.Event) ([]byte, error) {
	s := &engine.State{}
	if state != nil {
		if err := json.Unmarshal(state, s); err != nil {
			return nil, fmt.Errorf("decode state of %s: %w", id, err)
		}
	}
	for _, se := range evs {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return nil, fmt.Errorf("event %d of %s: %w", se.Seq, id, err)
		}
		if err := s.Fold(e); err != nil {
			return nil, fmt.Errorf("fold event %d of %s: %w", se.Seq, id, err)
		}
	}
	return json.Marshal(s)
}

// toStore encodes engine events for the log.
func toStore(evs []engine.Event) ([]store.NewEvent, error) {
	out := make([]store.NewEvent, 0, len(evs))
	for _, e := range evs {
		b, err := engine.MarshalEvent(e)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", e.Type, err)
		}
		out = append(out, store.NewEvent{Type: string(e.Type), Version: e.V, Payload: b, At: e.At})
	}
	return out, nil
}

// dated records the latest Date of mail composed for the game.
func (g *game) dated(latest time.Time) {
	if latest.After(g.lastDate) {
		g.lastDate = latest
	}
}

// headerDate is the Date of a message the host composed; zero when it
// cannot be read.
func headerDate(raw []byte) time.Time {
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return time.Time{}
	}
	t, err := m.Header.Date()
	if err != nil {
		return time.Time{}
	}
	return t
}
