// Package hostrun runs a host for end-to-end tests exactly as `mafiamail
// serve` runs it: started by service.Start from a configuration, running in
// the background until the test stops it or ends. Tests differ only in the
// configuration and the clock they pass, never in how the host is wired.
package hostrun

import (
	"context"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// stopWait bounds how long a stop may take; it only matters when something
// is broken, and a healthy host stops in a fraction of a second.
const stopWait = 90 * time.Second

// Runtime is a running host.
type Runtime struct {
	svc    *service.Service
	cancel context.CancelFunc
	done   chan struct{}
	err    error // what Run returned; read after done is closed
}

// Start starts the host of cfg with o and runs it until Stop or the end of
// the test, whichever comes first.
func Start(t testing.TB, cfg *config.Config, o service.Config) *Runtime {
	t.Helper()
	svc, err := service.Start(context.Background(), cfg, o)
	if err != nil {
		t.Fatalf("start the host: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &Runtime{svc: svc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rt.done)
		rt.err = svc.Run(ctx)
	}()
	t.Cleanup(func() { rt.Stop(t) })
	return rt
}

// Stop ends the host as a signal ends serve: every loop returns, and only
// then the store closes. It reports whatever failed meanwhile. Stopping a
// stopped runtime does nothing.
func (rt *Runtime) Stop(t testing.TB) {
	t.Helper()
	if rt.cancel == nil {
		return
	}
	rt.cancel()
	rt.cancel = nil
	select {
	case <-rt.done:
	case <-time.After(stopWait):
		t.Fatalf("the host did not stop within %v", stopWait)
	}
	if rt.err != nil {
		t.Errorf("host runtime: %v", rt.err)
	}
	if err := rt.svc.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
}

// Host is the running rules.
func (rt *Runtime) Host() *host.Host { return rt.svc.Host() }

// Store is the host's database.
func (rt *Runtime) Store() *store.Store { return rt.svc.Store() }

// Watcher is the IMAP watcher that feeds the host, for its statistics.
func (rt *Runtime) Watcher() *watcher.Watcher { return rt.svc.Watcher() }
