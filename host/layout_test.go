package host

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestLayoutPoolLosesNoStep: workers that go when idle and steps queued
// as they go, at every moment: every step is laid out, a queued step
// always has a worker, and no more workers run than the pool allows.
func TestLayoutPoolLosesNoStep(t *testing.T) {
	t.Parallel()
	p := newLayoutPool()
	p.max, p.idle = 2, 50*time.Microsecond
	steps := make([]*besideStep, 3000)
	for i := range steps {
		steps[i] = &besideStep{done: make(chan struct{})}
	}
	// A step left without a worker blocks the queue: the steps are
	// queued on a goroutine of their own, so that the test can tell.
	queued := make(chan string, 1)
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, st := range steps {
			p.submit(st)
			p.mu.Lock()
			workers, waiting := p.workers, len(p.jobs)
			p.mu.Unlock()
			if workers > p.max || (waiting > 0 && workers < 1) {
				queued <- "a step was queued with the wrong number of workers running"
				return
			}
			if rng.IntN(4) == 0 {
				// Long enough, now and then, for the workers to go idle.
				time.Sleep(time.Duration(rng.IntN(100)) * time.Microsecond)
			}
		}
		queued <- ""
	}()
	timeout := time.After(30 * time.Second)
	select {
	case msg := <-queued:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-timeout:
		t.Fatal("the steps could not all be queued: one was left without a worker")
	}
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
