package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// TestStaleSnapshotIsRebuiltFromTheLog: a snapshot written by a program
// that kept less in a game's state (here: without the counts of what each
// player was sent) does not stop the host. It starts, with the state
// folded afresh from the log.
func TestStaleSnapshotIsRebuiltFromTheLog(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	want := hs.game("g1")
	if want.PublicSent == 0 {
		t.Fatal("the game sent nothing to the thread: the test shows nothing")
	}
	old := want.Clone()
	old.PublicSent = 0
	for i := range old.Players {
		old.Players[i].Sent = 0
	}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := hs.st.LastSeq(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if err := hs.st.Update(ctx, func(tx *store.Tx) error { return tx.SaveSnapshot(ctx, "g1", seq, b, hs.now) }); err != nil {
		t.Fatal(err)
	}
	hs.restart()
	got := hs.game("g1")
	if got.PublicSent != want.PublicSent || got.Player(1).Sent != want.Player(1).Sent {
		t.Errorf("after a restart on the stale snapshot the game counts %d public events and %d for player 1, want %d and %d",
			got.PublicSent, got.Player(1).Sent, want.PublicSent, want.Player(1).Sent)
	}
	// And it plays on.
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	if s := hs.game("g1"); s.Player(1).Vote != 2 || s.Phase != engine.DayPhase {
		t.Errorf("after the restart Alice's vote did not count: %+v", s.Player(1))
	}
}
