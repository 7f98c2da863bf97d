//go:build integration

package e2e

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/binary"
)

// mafiamail is the command under test, built once for every suite here.
var mafiamail = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail")

func TestMain(m *testing.M) { binary.RunTests(m, mafiamail, mafiamailBench) }

// seedEnv names the environment variable that reruns a randomized suite
// with the seed a failed run logged.
const seedEnv = "MAFIAMAIL_SEED"

// testSeed is the seed of a randomized suite: MAFIAMAIL_SEED where it is
// set, the clock otherwise. It is logged, so that a failure can be
// replayed; the timing of a real system still differs from run to run, so a
// replay repeats the suite's choices, not every interleaving.
func testSeed(t *testing.T) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q is not a seed: %v", seedEnv, v, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun with %s=%d)", seed, seedEnv, seed)
	return seed
}
