package host

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/hostkey"
)

// keyedRun plays the sign-up and START of game g1 and a vote on a host with
// key, and returns what a replay must decide alike: the participants'
// tokens, the draw, and the Message-IDs of every mail queued.
func keyedRun(t *testing.T, key *hostkey.Key) (tokens []string, drawn engine.Event, ids []string) {
	t.Helper()
	hs := &harness{t: t, path: filepath.Join(t.TempDir(), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
		authserv: harnessAuthServ, key: key}
	hs.open()
	t.Cleanup(func() { hs.st.Close() })
	hs.setUp()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	for _, a := range append([]string{"ref@example.org"}, mapAddr(players)...) {
		tokens = append(tokens, hs.token("g1", a))
	}
	for _, e := range hs.h.eventsOf(t, "g1") {
		if e.Type == engine.EvRolesDrawn {
			drawn = e
		}
	}
	for _, m := range hs.outbox() {
		ids = append(ids, m.MessageID)
	}
	return tokens, drawn, ids
}

func mapAddr(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = addr(n)
	}
	return out
}

// The host key decides what the host decides by chance: the same key and
// the same mail give the same tokens, role draw, salt, commitment and
// Message-IDs, so that a host replaying its mailbox after losing its
// database sends the same mail to the same addresses; another key gives
// other ones.
func TestHostKeyDecidesTokensDrawAndMessageIDs(t *testing.T) {
	t.Parallel()
	key := hostkey.Generate()
	tokens1, draw1, ids1 := keyedRun(t, key)
	tokens2, draw2, ids2 := keyedRun(t, key)
	if !slices.Equal(tokens1, tokens2) {
		t.Errorf("the same key gave other tokens:\n%v\n%v", tokens1, tokens2)
	}
	if draw1.Salt == "" || draw1.Salt != draw2.Salt || draw1.Commitment != draw2.Commitment || !slices.Equal(draw1.Roles, draw2.Roles) {
		t.Errorf("the same key drew otherwise:\n%+v\n%+v", draw1, draw2)
	}
	if len(ids1) == 0 || !slices.Equal(ids1, ids2) {
		t.Errorf("the same key gave other Message-IDs (%d and %d)", len(ids1), len(ids2))
	}

	tokens3, draw3, ids3 := keyedRun(t, hostkey.Generate())
	for i := range tokens1 {
		if tokens1[i] == tokens3[i] {
			t.Errorf("another key gave the same token %d", i)
		}
	}
	if draw3.Salt == draw1.Salt || draw3.Commitment == draw1.Commitment {
		t.Error("another key gave the same salt or commitment")
	}
	if len(ids3) != len(ids1) {
		t.Fatalf("another key sent %d messages, not %d", len(ids3), len(ids1))
	}
	for i := range ids1 {
		if ids1[i] == ids3[i] {
			t.Errorf("another key gave the same Message-ID %s", ids1[i])
		}
	}
}

// A host without a key, as before there was one, draws and makes tokens
// from crypto/rand: two runs differ.
func TestNoHostKeyStaysRandom(t *testing.T) {
	t.Parallel()
	tokens1, draw1, _ := keyedRun(t, nil)
	tokens2, draw2, _ := keyedRun(t, nil)
	if slices.Equal(tokens1, tokens2) || bytes.Equal([]byte(draw1.Salt), []byte(draw2.Salt)) {
		t.Error("two hosts without a key made the same tokens or salt")
	}
}

// eventsOf reads game's log from the host's store as engine events.
func (h *Host) eventsOf(t *testing.T, game string) []engine.Event {
	t.Helper()
	stored, err := h.st.Events(t.Context(), game, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]engine.Event, len(stored))
	for i, se := range stored {
		if evs[i], err = engine.UnmarshalEvent(se.Payload); err != nil {
			t.Fatal(err)
		}
	}
	return evs
}
