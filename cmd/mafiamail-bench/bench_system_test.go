//go:build integration

package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
)

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
			systems := map[string]figures{"host": sr.host, "relay": sr.relay}
			if o.baseline != "" {
				systems["baseline host"] = sr.baseline
			}
			for name, f := range systems {
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
			if b.host.time <= 0 || b.relay.time <= 0 || (o.baseline != "") != (b.baseline.time > 0) {
				t.Errorf("backlog times: host %v, relay %v, baseline host %v", b.host.time, b.relay.time, b.baseline.time)
			}
			if b.host.cpu <= 0 || b.relay.cpu <= 0 || (o.baseline != "") != (b.baseline.cpu > 0) {
				t.Errorf("backlog CPU: host %v, relay %v, baseline host %v", b.host.cpu, b.relay.cpu, b.baseline.cpu)
			}
		}
	}
	var out bytes.Buffer
	res.print(&out, o)
	want := []string{"p99", "commands/s", "CPU/command", "peak RSS", "live heap", "host/relay", "one mail hop", "p50 less two hops"}
	if o.backlog > 0 {
		want = append(want, "backlog of", "CPU/message")
	}
	if o.runs > 1 {
		want = append(want, "median of")
	}
	if o.baseline != "" {
		want = append(want, "host/baseline")
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

// The bench runs through a real Postfix and Dovecot: the players are
// plus-addresses of one Dovecot user, and confirmations are seen by IDLE.
func TestBenchPostfix(t *testing.T) {
	mailstack.Require(t)
	exe := benchBinary.Path(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	o := benchOptions{games: []int{2}, players: 11, commands: 20, backlog: 200, inFlight: 8, runs: 1,
		stack: stackPostfix, exe: exe, progress: io.Discard, logTo: io.Discard}
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkBench(t, res, o)
}

// The bench runs end to end at a small scale on the embedded servers,
// twice, so that medians and ranges are shown, with the same binary
// standing in for an earlier build's (--baseline).
func TestBenchSmoke(t *testing.T) {
	exe := benchBinary.Path(t) // before the clock starts: a build may take minutes on a loaded machine
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := benchOptions{games: []int{1}, players: 11, commands: 20, backlog: 50, inFlight: 4, runs: 2,
		stack: stackEmbedded, exe: exe, baseline: exe, progress: io.Discard, logTo: io.Discard}
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkBench(t, res, o)
}

// The day load runs end to end at a small scale on the embedded servers,
// with one game at day and one at night: every vote, unvote, lock and
// night action is answered with a confirmation, every post
// reaches every reader the host sends it to at once and no one twice, the
// relay delivers exactly the copies the bench names, digests are composed
// for the digest readers, and the table shows the day's figures.
func TestBenchDaySmoke(t *testing.T) {
	exe := benchBinary.Path(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := benchOptions{games: []int{2}, players: 11, commands: 100, inFlight: 11, runs: 1, stack: stackEmbedded,
		load: loadDay, digestEvery: 2 * time.Second, exe: exe, progress: io.Discard, logTo: io.Discard}
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sr := res.scales[0][0]
	for name, f := range map[string]figures{"host": sr.host, "relay": sr.relay} {
		if f.commands != o.commands || len(f.latencies) != o.commands || f.errors != 0 {
			t.Errorf("%s: %d messages, %d with their first effect, %d errors; want %d, all", name, f.commands, len(f.latencies), f.errors, o.commands)
		}
		n := 0
		for _, l := range f.byOp {
			n += len(l)
		}
		night := len(f.byOp[opKill]) + len(f.byOp[opInspect])
		if n != len(f.latencies) || len(f.byOp[opPost]) == 0 || len(f.byOp[opVote]) == 0 || night == 0 {
			t.Errorf("%s: latencies by kind %v, want every message once, posts, votes and night actions among them", name, f.byOp)
		}
		if f.shortPosts != 0 || f.longPosts != 0 {
			t.Errorf("%s: %d posts missed readers, %d reached a reader twice or one they should not", name, f.shortPosts, f.longPosts)
		}
		if f.deliveries < f.fanout || f.deliveriesPerSecond() <= 0 {
			t.Errorf("%s: %d deliveries (%.0f/s), want at least the %d copies and answers of the messages", name, f.deliveries, f.deliveriesPerSecond(), f.fanout)
		}
	}
	if sr.relay.deliveries != sr.relay.fanout {
		t.Errorf("relay: %d deliveries, want exactly the %d copies named", sr.relay.deliveries, sr.relay.fanout)
	}
	// A short load may end before the games' first digests: those after
	// its last copy are counted apart.
	if h, r := sr.host.digests+sr.host.lateDigests, sr.relay.digests+sr.relay.lateDigests; h == 0 || r != 0 {
		t.Errorf("digests: host %d, relay %d; want some from the host and none from the relay", h, r)
	}
	// The stack alone is measured in each system's phase.
	if sr.host.stackRate <= 0 || sr.relay.stackRate <= 0 {
		t.Errorf("stack rate %v in the host's phase, %v in the relay's; want both", sr.host.stackRate, sr.relay.stackRate)
	}
	// The machine's busy share and busy time of each window, where
	// /proc/stat tells them.
	if _, ok := readCPUTimes(); ok {
		for name, v := range map[string]float64{"host": sr.host.machineBusy, "relay": sr.relay.machineBusy,
			"stack alone (host)": sr.host.stackBusy, "stack alone (relay)": sr.relay.stackBusy} {
			if v <= 0 || v > 1 {
				t.Errorf("%s: machine busy %v, want within (0, 1]", name, v)
			}
		}
		for name, v := range map[string]float64{"host": sr.host.machineCPUPerDelivery(), "relay": sr.relay.machineCPUPerDelivery(),
			"stack alone (host)": sr.host.stackCPU, "stack alone (relay)": sr.relay.stackCPU} {
			if v <= 0 {
				t.Errorf("%s: the machine's CPU a delivery %v, want some", name, v)
			}
		}
	}
	var out bytes.Buffer
	res.print(&out, o)
	for _, w := range []string{"deliveries/s", "p50 vote/unvote/lock", "p50 night action", "copies/thread post", "digests", "machine busy",
		"machine CPU/delivery", "stack alone", "in the host's phase", "in the relay's phase", "host/stack", "relay/stack", dayMix} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("the table lacks %q:\n%s", w, out.String())
		}
	}
	if t.Failed() {
		t.Logf("table:\n%s", out.String())
	}
}
