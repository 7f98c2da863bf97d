//go:build integration

package service_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/gametable"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
)

// TestRestoreFromLitestream replicates the host's database with Litestream
// to a file replica while the host runs (modernc.org/sqlite in WAL mode,
// as serve has it), stops the replication before the game's last turns,
// loses the database, restores the replica with `litestream restore`, and
// has `restore` replay only the tail the replica missed: every event comes
// back as the host had it. It skips where the litestream binary is absent
// (.ci/run installs it).
func TestRestoreFromLitestream(t *testing.T) {
	bin, err := exec.LookPath("litestream")
	if err != nil {
		t.Skip("no litestream binary: go install github.com/benbjohnson/litestream/cmd/litestream@v0.5.18")
	}
	seed := testseed.Seed(t)
	tb := newTable(t, seed)
	tb.Start()
	tb.SignUp(nil)
	tb.Begin()

	dir := t.TempDir()
	replica := filepath.Join(dir, "replica")
	yml := filepath.Join(dir, "litestream.yml")
	conf := fmt.Sprintf("dbs:\n  - path: %s\n    monitor-interval: 100ms\n    replica:\n      type: file\n      path: %s\n      sync-interval: 100ms\n",
		tb.Cfg.Database, replica)
	if err := os.WriteFile(yml, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ls := exec.Command(bin, "replicate", "-config", yml)
	ls.Stdout, ls.Stderr = os.Stderr, os.Stderr
	if err := ls.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		ls.Process.Signal(syscall.SIGTERM)
		ls.Wait()
	}
	defer stop()

	turns := 10 + int(seed%10)
	for i := 0; i < turns && tb.Game().Phase != engine.EndedPhase; i++ {
		tb.Advance(time.Duration(5+tb.Rng.IntN(40)) * time.Minute)
		tb.Turn()
	}
	// Litestream syncs every 100ms; give it time to have the turns above,
	// then stop it: what comes after is the tail the replica misses.
	time.Sleep(2 * time.Second)
	stop()
	tail := 0
	for i := 0; i < 3 && tb.Game().Phase != engine.EndedPhase; i++ {
		tb.Advance(time.Duration(5+tb.Rng.IntN(40)) * time.Minute)
		tb.Turn()
		tail++
	}
	tb.Advance(time.Hour)
	tb.Drain()
	want, wantOut := gametable.EventLogs(t, tb.Svc.Store()), outbox(t, tb.Svc.Store())
	tb.Stop()

	restored := filepath.Join(dir, "from-replica.db")
	out, err := exec.Command(bin, "restore", "-config", yml, "-o", restored, tb.Cfg.Database).CombinedOutput()
	if err != nil {
		t.Fatalf("litestream restore: %v\n%s", err, out)
	}
	rep := tb.restoreAndCompare(want, wantOut, restored)
	t.Logf("the replica had %d of %d messages; %d replayed (the tail was %d turns)", rep.Known, tb.Sent, rep.Replayed, tail)
	if rep.Known == 0 || rep.Replayed > tail {
		t.Errorf("restore from the replica: %d known, %d replayed, want the %d turns after the replication stopped at most", rep.Known, rep.Replayed, tail)
	}
}
