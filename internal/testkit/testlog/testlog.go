// Package testlog gives tests a logger that writes to t.Log, so that what
// the code under test logged shows for failed tests and with -v.
package testlog

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// New returns a logger at level that writes to t.Log, and nowhere once the
// test is over (goroutines still logging then must not make it fail).
func New(t testing.TB, level slog.Level) *slog.Logger {
	w := &writer{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

type writer struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}
