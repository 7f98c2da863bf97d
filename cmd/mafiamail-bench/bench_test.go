package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/internal/testkit/binary"
)

// benchBinary is the bench's own command, whose child subcommand runs the
// host and the relay: built once for the package.
var benchBinary = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail-bench")

func TestMain(m *testing.M) { binary.RunTests(m, benchBinary) }

// The command line runs the bench and prints the table; the CPU profile
// is the host process's.
func TestBenchCommandLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if code := run([]string{"--games", "1", "--players", "11", "--commands", "5", "--backlog", "0",
		"--cpuprofile", prof, "--bin", benchBinary.Path(t)}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "commands/s") {
		t.Errorf("no table in:\n%s", stdout.String())
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
	for _, bad := range [][]string{{"--games", "x"}, {"--runs", "0"}, {"--stack", "exim"}} {
		if code := run(bad, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
