package engine

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// randIntn returns a uniform integer in [0, n) read from r, by rejection so
// that no value is favoured.
func randIntn(r io.Reader, n int) (int, error) {
	if n <= 0 {
		return 0, fmt.Errorf("randIntn(%d)", n)
	}
	limit := ^uint64(0) - (^uint64(0) % uint64(n))
	var b [8]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return 0, fmt.Errorf("read random source: %w", err)
		}
		v := binary.LittleEndian.Uint64(b[:])
		if v < limit {
			return int(v % uint64(n)), nil
		}
	}
}

// draw deals the setup's roles to n seats (S2): seats are taken in a uniformly
// random order and given Inspector(s), then Mafia, then Doctor, Vigilante and
// Townspeople. It returns the role of each seat (index = slot-1), the first
// Mafioso drawn (slot), and a fresh salt for the commitment.
func draw(setup Setup, n int, r io.Reader) (roles []Role, firstMafioso int, salt string, err error) {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j, err := randIntn(r, i+1)
		if err != nil {
			return nil, 0, "", err
		}
		order[i], order[j] = order[j], order[i]
	}
	roles = make([]Role, n)
	k := 0
	for _, rc := range setup.roleCounts() {
		for c := 0; c < rc.Count; c++ {
			roles[order[k]] = rc.Role
			if rc.Role == Mafia && firstMafioso == 0 {
				firstMafioso = order[k] + 1
			}
			k++
		}
	}
	var sb [16]byte
	if _, err := io.ReadFull(r, sb[:]); err != nil {
		return nil, 0, "", fmt.Errorf("read random source: %w", err)
	}
	return roles, firstMafioso, hex.EncodeToString(sb[:]), nil
}

// DrawText is the exact text the commitment hashes: the game, every seat
// with its name and role, and the salt. Anyone can rebuild it from the end
// announcement (W2) and check it against the commitment posted at the start.
func DrawText(game string, names []string, roles []Role, salt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mafiamail draw v1\ngame %s\n", game)
	for i, n := range names {
		var r Role
		if i < len(roles) {
			r = roles[i]
		}
		fmt.Fprintf(&b, "%d %s: %s\n", i+1, n, r)
	}
	fmt.Fprintf(&b, "salt %s\n", salt)
	return b.String()
}

// Commit is the commitment to a draw (S2): the SHA-256 of DrawText, in hex.
func Commit(game string, names []string, roles []Role, salt string) string {
	sum := sha256.Sum256([]byte(DrawText(game, names, roles, salt)))
	return hex.EncodeToString(sum[:])
}

// VerifyDraw reports whether a revealed draw matches its commitment.
func VerifyDraw(commitment, game string, names []string, roles []Role, salt string) bool {
	if len(names) != len(roles) {
		return false
	}
	got := Commit(game, names, roles, salt)
	return subtle.ConstantTimeCompare([]byte(got), []byte(strings.ToLower(commitment))) == 1
}
