package reply

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the processor time the calling thread has used: unlike the
// wall clock, it does not grow while other processes have the machine.
func threadCPU(t *testing.T) time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSplitIsLinear: four times the text costs about four times the work,
// not sixteen, on the thread, hostile and quote-marker texts of the
// benchmark. The margin is wide, for a loaded machine.
func TestSplitIsLinear(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing")
	}
	if p := Split(hostile(1 << 16)); p.Cut != "" || p.Quoted != "" {
		t.Fatalf("the hostile text is not all the author's: cut %q", p.Cut)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cost := func(s string) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			start := threadCPU(t)
			for range 4 {
				Split(s)
			}
			best = min(best, threadCPU(t)-start)
		}
		return best
	}
	for name, gen := range map[string]func(int) string{"thread": thread, "hostile": hostile, "quote markers": quoteMarkers} {
		small, large := cost(gen(128<<10)), cost(gen(512<<10))
		t.Logf("%s: 128 KiB %v, 512 KiB %v (four runs each)", name, small, large)
		if large > 10*small && large > 20*time.Millisecond {
			t.Errorf("%s: 128 KiB took %v, 512 KiB %v: more than linear", name, small, large)
		}
	}
}
