package host

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestLayoutPoolLosesNoStep: workers that go when idle and steps queued
// as they go, at every moment: every step is laid out, and no more
// workers run than the pool allows.
func TestLayoutPoolLosesNoStep(t *testing.T) {
	defer func(d time.Duration) { layoutIdle = d }(layoutIdle)
	layoutIdle = 50 * time.Microsecond
	p := newLayoutPool()
	p.max = 2
	rng := rand.New(rand.NewPCG(1, 2))
	var steps []*besideStep
	for range 3000 {
		st := &besideStep{done: make(chan struct{})}
		steps = append(steps, st)
		p.submit(st)
		p.mu.Lock()
		if p.workers > p.max || p.workers < 1 {
			t.Fatalf("%d workers after a step was queued, want 1 to %d", p.workers, p.max)
		}
		p.mu.Unlock()
		if rng.IntN(4) == 0 {
			// Long enough, now and then, for the workers to go idle.
			time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
		}
	}
	timeout := time.After(30 * time.Second)
	for i, st := range steps {
		select {
		case <-st.done:
		case <-timeout:
			t.Fatalf("step %d of %d was never laid out", i, len(steps))
		}
	}
	// Idle, the workers go.
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := p.workers
		p.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d workers stay with nothing to do", n)
		}
		time.Sleep(time.Millisecond)
	}
}
