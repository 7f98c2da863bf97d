// Package testseed gives a randomized test its seed, and the way to run it
// again with the same one.
package testseed

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// Env names the environment variable that reruns a randomized test with
// the seed a failed run logged.
const Env = "MAFIAMAIL_SEED"

// Seed returns the seed of a randomized test: Env where it is set, the
// clock otherwise. It logs it, so that a failure can be replayed with
// Env=N; the timing of servers and goroutines still differs from run to
// run, so a replay repeats the test's choices, not every interleaving.
func Seed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(Env); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not a seed: %v", Env, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun with %s=%d)", seed, Env, seed)
	return seed
}
