//go:build integration

package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/internal/testkit/binary"
)

// mafiamailBench is the bench's command, whose child subcommand runs the
// host and the relay.
var mafiamailBench = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail-bench")

// runBench runs mafiamail-bench with args and returns its exit status and
// what it printed.
func runBench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	bin := mafiamailBench.Path(t)
	cmd := exec.Command(bin, append(args, "--bin", bin)...)
	binary.DieWithParent(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("mafiamail-bench: %v", err)
	return 0, "", ""
}

// The command line runs the bench and prints the table; the CPU profile
// is the host process's.
func TestBenchCommandLine(t *testing.T) {
	t.Parallel()
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	code, stdout, stderr := runBench(t, "--games", "1", "--players", "11", "--commands", "5", "--backlog", "0",
		"--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "commands/s") {
		t.Errorf("no table in:\n%s", stdout)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
}

// -v shows the host's and the relay's logs as they run, from their
// first line to their last, and they run to the end.
func TestBenchVerbose(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runBench(t, "-v", "--games", "1", "--players", "11", "--commands", "20", "--backlog", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The host logs every message it reads: the games' set-up, the
	// warm-up and the measured commands.
	if n := strings.Count(stderr, "inbound message"); n < 20 {
		t.Errorf("-v shows %d of the host's messages:\n%s", n, stderr)
	}
	if !strings.Contains(stdout, "commands/s") {
		t.Errorf("no table in:\n%s", stdout)
	}
}
