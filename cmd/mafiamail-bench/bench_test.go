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

func TestMain(m *testing.M) {
	code := m.Run()
	benchBinary.Remove()
	os.Exit(code)
}

// checkBench checks what every bench run must give, whatever the stack:
// both systems answer every command with a confirmation, the host's and
// the relay's own processes report their memory, the backlog is worked
// off, and the table shows the figures and their ratios. The figures
// themselves are for reading, not for asserting.
func checkBench(t *testing.T, res *benchResult, o benchOptions) {
	t.Helper()
	if len(res.scales) != len(o.games) {
		t.Fatalf("%d scales, want %d", len(res.scales), len(o.games))
	}
	for _, runs := range res.scales {
		if len(runs) != o.runs {
			t.Fatalf("%d runs of a scale, want %d", len(runs), o.runs)
		}
		for _, sr := range runs {
			for name, f := range map[string]figures{"host": sr.host, "relay": sr.relay} {
				if f.commands != o.commands || len(f.latencies) != o.commands || f.errors != 0 {
					t.Errorf("%s: %d commands, %d confirmed, %d errors; want %d confirmed", name, f.commands, len(f.latencies), f.errors, o.commands)
				}
				for _, l := range f.latencies {
					if l <= 0 {
						t.Errorf("%s: a latency of %v", name, l)
					}
				}
				if f.peakRSS == 0 || f.peakHeap == 0 || f.liveHeap == 0 || f.hop <= 0 {
					t.Errorf("%s: peak RSS %d, peak heap %d, live heap %d, hop %v; want all > 0", name, f.peakRSS, f.peakHeap, f.liveHeap, f.hop)
				}
				if f.peakRSS < f.liveHeap {
					t.Errorf("%s: peak RSS %d below the live heap %d", name, f.peakRSS, f.liveHeap)
				}
			}
		}
	}
	if o.backlog > 0 {
		if len(res.backlog) != o.runs {
			t.Fatalf("%d backlog runs, want %d", len(res.backlog), o.runs)
		}
		for _, b := range res.backlog {
			if b.host <= 0 || b.relay <= 0 {
				t.Errorf("backlog times: host %v, relay %v", b.host, b.relay)
			}
		}
	}
	var out bytes.Buffer
	res.print(&out, o)
	want := []string{"p99", "commands/s", "CPU/command", "peak RSS", "live heap", "host/relay", "one mail hop", "p50 less two hops"}
	if o.backlog > 0 {
		want = append(want, "backlog of")
	}
	if o.runs > 1 {
		want = append(want, "median of")
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the table lacks %q:\n%s", w, out.String())
		}
	}
	// A ratio for every figure: four columns in every row of the table.
	for _, line := range strings.Split(out.String(), "\n") {
		for _, row := range benchRows {
			if strings.HasPrefix(strings.TrimSpace(line), row.name+" ") && strings.HasSuffix(strings.TrimSpace(line), " -") {
				t.Errorf("no ratio in %q", line)
			}
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", out.String())
	}
}

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
