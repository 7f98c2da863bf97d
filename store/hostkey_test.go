package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/hostkey"
)

// Tokens derive from the host key and the order participants came in: a
// database rebuilt with the same key hands out the same tokens, and a key
// that is not the database's is refused.
func TestHostKeyTokens(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	key := hostkey.Generate()
	tokens := func(k *hostkey.Key) []string {
		st, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if _, err := st.UseKey(ctx, k, now); err != nil {
			t.Fatal(err)
		}
		var out []string
		err = st.Update(ctx, func(tx *Tx) error {
			if err := tx.CreateGame(ctx, "g1", "running", now); err != nil {
				return err
			}
			for _, n := range []string{"ref", "alice", "bob"} {
				p, err := tx.AddParticipant(ctx, "g1", n, n+"@example.org", KindPlayer, now)
				if err != nil {
					return err
				}
				out = append(out, p.Token)
			}
			c, err := tx.HoldForConfirmation(ctx, Confirmation{Game: "g1", Address: "carol@example.org", Verb: ConfirmJoin, Name: "Carol"}, now, now.Add(time.Hour))
			out = append(out, c.Token)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, other := tokens(key), tokens(key), tokens(hostkey.Generate())
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("token %d: %s, then %s with the same key", i, a[i], b[i])
		}
		if a[i] == other[i] {
			t.Errorf("token %d is the same with another key", i)
		}
		for j := range i {
			if a[i] == a[j] {
				t.Errorf("tokens %d and %d are the same", j, i)
			}
		}
	}

	path := filepath.Join(t.TempDir(), "k.db")
	st, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if recorded, err := st.UseKey(ctx, key, now); err != nil || !recorded {
		t.Fatalf("first key: recorded %v, %v", recorded, err)
	}
	if recorded, err := st.UseKey(ctx, key, now); err != nil || recorded {
		t.Fatalf("the same key again: recorded %v, %v", recorded, err)
	}
	if _, err := st.UseKey(ctx, hostkey.Generate(), now); !errors.Is(err, ErrKeyMismatch) {
		t.Fatalf("another key: %v, want ErrKeyMismatch", err)
	}
	if fp, err := st.KeyFingerprint(ctx); err != nil || fp != key.Fingerprint() {
		t.Fatalf("fingerprint %q, %v", fp, err)
	}
}
