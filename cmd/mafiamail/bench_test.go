package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The bench runs end to end at a small scale: both systems answer every
// command with a confirmation and work off the backlog. Only that is
// checked; the figures are for reading, not for asserting.
func TestBenchSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const commands, backlog = 20, 50
	o := benchOptions{games: []int{1}, players: 11, commands: commands, backlog: backlog, inFlight: 4,
		progress: io.Discard, logTo: io.Discard}
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.scales) != 1 {
		t.Fatalf("%d scales, want 1", len(res.scales))
	}
	for name, f := range map[string]figures{"host": res.scales[0].host, "relay": res.scales[0].relay} {
		if f.commands != commands || len(f.latencies) != commands || f.errors != 0 {
			t.Errorf("%s: %d commands, %d confirmed, %d errors; want %d confirmed", name, f.commands, len(f.latencies), f.errors, commands)
		}
		for _, l := range f.latencies {
			if l <= 0 {
				t.Errorf("%s: a latency of %v", name, l)
			}
		}
		if f.peakHeap == 0 {
			t.Errorf("%s: no heap sampled", name)
		}
	}
	if res.backlogHost <= 0 || res.backlogRelay <= 0 {
		t.Errorf("backlog times: host %v, relay %v", res.backlogHost, res.backlogRelay)
	}
	var out bytes.Buffer
	res.print(&out, o)
	for _, want := range []string{"p99", "commands/s", "peak RSS", "host/relay", "backlog of 50"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}

// The command line runs the bench and prints the table.
func TestBenchCommandLine(t *testing.T) {
	var stdout, stderr bytes.Buffer
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	if code := run([]string{"bench", "--games", "1", "--players", "11", "--commands", "5", "--backlog", "0",
		"--cpuprofile", prof}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "commands/s") {
		t.Errorf("no table in:\n%s", stdout.String())
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no CPU profile written: %v", err)
	}
	if code := run([]string{"bench", "--games", "x"}, nil, &stdout, &stderr); code != 2 {
		t.Errorf("--games x: exit %d, want 2", code)
	}
}
