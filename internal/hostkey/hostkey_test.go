package hostkey

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestSameKeySameBytesOtherKeyOthers(t *testing.T) {
	k := Generate()
	same, err := New(k.b[:])
	if err != nil {
		t.Fatal(err)
	}
	read := func(k *Key, game, purpose string) []byte {
		b := make([]byte, 100) // more than one block of the stream
		if _, err := io.ReadFull(k.Stream(game, purpose), b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if !bytes.Equal(read(k, "g1", "draw"), read(same, "g1", "draw")) {
		t.Error("the same key read other bytes")
	}
	for _, other := range [][]byte{read(Generate(), "g1", "draw"), read(k, "g2", "draw"), read(k, "g1", "token")} {
		if bytes.Equal(read(k, "g1", "draw"), other) {
			t.Error("another key, game or purpose read the same bytes")
		}
	}
	// The inputs are length-prefixed: a game and a purpose cannot run
	// into each other.
	if bytes.Equal(k.Sum("ab", "c", 0), k.Sum("a", "bc", 0)) || bytes.Equal(k.Sum("g", "t", 1), k.Sum("g", "t", 2)) {
		t.Error("different inputs gave the same sum")
	}
	if k.Fingerprint() != same.Fingerprint() || k.Fingerprint() == Generate().Fingerprint() {
		t.Error("fingerprints do not tell keys apart")
	}
}

func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mafiamail.key")
	k, created, err := LoadOrCreate(path)
	if err != nil || !created {
		t.Fatalf("first start: created %v, %v", created, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	again, created, err := LoadOrCreate(path)
	if err != nil || created || again.Fingerprint() != k.Fingerprint() {
		t.Fatalf("second start: created %v, same %v, %v", created, again != nil && again.Fingerprint() == k.Fingerprint(), err)
	}
	if _, err := Create(path); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over a key: %v, want fs.ErrExist", err)
	}
	os.WriteFile(path+".bad", []byte("not hex\n"), 0o600)
	if _, err := Load(path + ".bad"); err == nil {
		t.Error("a file of no key was read as one")
	}
}
