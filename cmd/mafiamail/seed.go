package main

import (
	"io"
	"math/rand/v2"
)

// seededReader is a repeatable random source for a demo's role draw.
func seededReader(seed uint64) io.Reader {
	var key [32]byte
	for i := range 8 {
		key[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(key)
}
