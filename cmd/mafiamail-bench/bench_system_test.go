//go:build integration

package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
)

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
// twice, so that medians and ranges are shown.
func TestBenchSmoke(t *testing.T) {
	exe := benchBinary.Path(t) // before the clock starts: a build may take minutes on a loaded machine
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := benchOptions{games: []int{1}, players: 11, commands: 20, backlog: 50, inFlight: 4, runs: 2,
		stack: stackEmbedded, exe: exe, progress: io.Discard, logTo: io.Discard}
	res, err := runBench(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkBench(t, res, o)
}
