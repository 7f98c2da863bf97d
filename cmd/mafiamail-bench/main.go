// Command mafiamail-bench measures the host: it plays games by mail and
// times each command from the player's hand-over to SMTP until the
// confirmation is in their mailbox, beside a bare relay (the same watcher,
// sender and store inbox and outbox, no game logic) measured alike.
//
//	mafiamail-bench [--games 1,10,100] [--players 25] [--commands N] [--backlog N] [--stack embedded|postfix]
//		[--load status|day] [--digest-every 10s]
//
// The load is STATUS in each player's private channel, or, with --load
// day, a Day's mix of thread posts, votes, unvotes, locks and mafia-list
// posts, with a few players taking digests (day.go), whose figures add
// the deliveries per second to every mailbox and the stack's own rate.
//
// It is a command of its own so that the product binary, mafiamail, holds
// neither the relay nor the real mail servers' harness. The host and the
// relay run as child processes of this binary (mafiamail-bench child ...),
// the host exactly as `mafiamail serve` runs it.
package main

import (
	"context"
	"io"
	"os"

	"github.com/mafiamail/mafiamail/internal/cli"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := cli.SignalContext(context.Background())
	defer stop()
	if len(args) > 0 && args[0] == "child" { // the bench's host and relay processes
		return cli.ExitStatus("mafiamail-bench child", cmdChild(ctx, args[1:], stderr), stderr)
	}
	return cli.ExitStatus("mafiamail-bench", cmdBench(ctx, args, stdout, stderr), stderr)
}
