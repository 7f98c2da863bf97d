package main

import (
	"math"
	"runtime"
	"testing"
	"time"
)

// The machine's busy share counts user, nice, system, irq, softirq and
// steal as busy, idle and iowait as not, and leaves guest time out (it is
// in user already).
func TestMachineBusyShare(t *testing.T) {
	a, err := parseCPUTimes("cpu  100 10 50 800 40 0 0 0 7 0\n")
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseCPUTimes("cpu  160 10 90 880 60 5 5 0 30 0\n")
	if err != nil {
		t.Fatal(err)
	}
	// busy: +60 user, +40 system, +5 irq, +5 softirq = 110; all: 110 + 80
	// idle + 20 iowait = 210.
	if got, want := busyShare(a, b), 110.0/210; got != want {
		t.Errorf("busy share %v, want %v", got, want)
	}
	if got := busyShare(b, a); got != 0 {
		t.Errorf("a window running backwards: %v, want 0 (unknown)", got)
	}
	if got := busyShare(a, a); got != 0 {
		t.Errorf("an empty window: %v, want 0 (unknown)", got)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5", "cpu 1 2 x 4 5", "intr 1 2 3 4 5"} {
		if _, err := parseCPUTimes(bad); err == nil {
			t.Errorf("%q read as the machine's cpu line", bad)
		}
	}
	if percent(0) != "-" || percent(0.834) != "83%" {
		t.Errorf("percent: %q, %q", percent(0), percent(0.834))
	}
}

// On Linux the window reads /proc/stat, and a window in which this
// goroutine spins is busy.
func TestMachineWindow(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/stat is Linux's")
	}
	start := time.Now()
	w := startMachineWindow()
	if !w.ok {
		t.Fatal("no /proc/stat")
	}
	// /proc/stat counts in ticks of 10 ms: spin until one has passed.
	share, sum := 0.0, 0
	for deadline := time.Now().Add(10 * time.Second); share == 0 && time.Now().Before(deadline); {
		for i := range 1_000_000 {
			sum += i & 1
		}
		share = w.share()
	}
	busy, elapsed := w.busyNanos(), time.Since(start)
	t.Logf("busy share %.2f, busy %v in %v after spinning (%d)", share, time.Duration(busy), elapsed, sum)
	if share <= 0 || share > 1 {
		t.Errorf("busy share %v, want within (0, 1]", share)
	}
	// A busy window has whole ticks of 10 ms in it, one at least.
	if tick := float64(10 * time.Millisecond); busy < tick || math.Mod(busy, tick) != 0 {
		t.Errorf("busy %v, want whole ticks of 10 ms", time.Duration(busy))
	}
}
