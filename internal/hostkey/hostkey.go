// Package hostkey is the host's secret key: a file of 32 random bytes kept
// beside the configuration (created by `mafiamail init`, or by the first
// start of a host that has none), never in the database. Everything the
// host decides by chance — the role draw and its salt, the participants'
// tokens (and with them every Message-ID, which derive from the referee's)
// and the one-time confirmation addresses — is derived from it with
// HMAC-SHA256 over the game, the purpose and a counter, so that a host
// brought back from an old backup, or from none, and replaying its mailbox
// decides the same again. The database holds the key's fingerprint alone,
// so that a key that does not belong to a database is noticed.
package hostkey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Size is the length of a key in bytes.
const Size = 32

// Key is a host's secret key.
type Key struct {
	b [Size]byte
}

// New makes a key of the bytes b, which must be Size long.
func New(b []byte) (*Key, error) {
	if len(b) != Size {
		return nil, fmt.Errorf("hostkey: a key is %d bytes, not %d", Size, len(b))
	}
	k := &Key{}
	copy(k.b[:], b)
	return k, nil
}

// Generate makes a fresh key from crypto/rand.
func Generate() *Key {
	k := &Key{}
	rand.Read(k.b[:]) // never fails (crypto/rand)
	return k
}

// The file holds the key in hex on one line, so that it can be printed
// on paper and typed back.
func (k *Key) text() []byte { return []byte(hex.EncodeToString(k.b[:]) + "\n") }

// Load reads the key file at path.
func Load(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the host key: %w", err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(b) != Size {
		return nil, fmt.Errorf("read the host key %s: not %d bytes in hex", path, Size)
	}
	return New(b)
}

// Create writes a fresh key to path, readable by its owner alone; it
// never replaces a file that exists (fs.ErrExist).
func Create(path string) (*Key, error) {
	k := Generate()
	if err := k.Write(path); err != nil {
		return nil, err
	}
	return k, nil
}

// Write writes the key to a new file at path (mode 0600), synced with its
// directory; it never replaces a file that exists (fs.ErrExist).
func (k *Key) Write(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write the host key: %w", err)
	}
	_, err = f.Write(k.text())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("write the host key %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// LoadOrCreate reads the key at path, or creates it there when there is no
// file; created says which.
func LoadOrCreate(path string) (k *Key, created bool, err error) {
	k, err = Load(path)
	if err == nil {
		return k, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	k, err = Create(path)
	if errors.Is(err, fs.ErrExist) {
		// Another process made it meanwhile.
		k, err = Load(path)
		return k, false, err
	}
	return k, err == nil, err
}

// Fingerprint names the key without giving it away, for the database to
// keep: a key that is not the one a database was written with is noticed.
func (k *Key) Fingerprint() string {
	return hex.EncodeToString(k.Sum("", "fingerprint", 0))[:32]
}

// Sum is HMAC-SHA256 under the key of the game, the purpose and the
// counter, each length-prefixed so that no two inputs run together.
func (k *Key) Sum(game, purpose string, counter uint64) []byte {
	mac := hmac.New(sha256.New, k.b[:])
	var n [8]byte
	for _, s := range []string{game, purpose} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		mac.Write(n[:])
		mac.Write([]byte(s))
	}
	binary.BigEndian.PutUint64(n[:], counter)
	mac.Write(n[:])
	return mac.Sum(nil)
}

// Stream is an endless reader of bytes derived from the key, the game and
// the purpose: Sum with counters 0, 1, 2, … in turn. Two streams of the
// same key and inputs read the same bytes.
func (k *Key) Stream(game, purpose string) io.Reader {
	return &stream{k: k, game: game, purpose: purpose}
}

type stream struct {
	k             *Key
	game, purpose string
	counter       uint64
	buf           []byte
}

func (s *stream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			s.buf = s.k.Sum(s.game, s.purpose, s.counter)
			s.counter++
		}
		c := copy(p[n:], s.buf)
		s.buf = s.buf[c:]
		n += c
	}
	return n, nil
}
