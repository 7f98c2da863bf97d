// Command mafiamail-bench measures the host: it plays games by mail and
// times each command from the player's hand-over to SMTP until the
// confirmation is in their mailbox, beside a bare relay (the same watcher,
// sender and store inbox and outbox, no game logic) measured alike.
//
//	mafiamail-bench [--games 1,10,100] [--players 25] [--commands N] [--backlog N] [--stack embedded|postfix]
//
// It is a command of its own so that the product binary, mafiamail, holds
// neither the relay nor the real mail servers' harness. The host and the
// relay run as child processes of this binary (mafiamail-bench child ...),
// the host exactly as `mafiamail serve` runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	var err error
	name := "mafiamail-bench"
	if len(args) > 0 && args[0] == "child" { // the bench's host and relay processes
		name += " child"
		err = cmdChild(ctx, args[1:], stderr)
	} else {
		err = cmdBench(ctx, args, stdout, stderr)
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return 2
		}
		if errors.Is(err, context.Canceled) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

// usageError is a mistake in the command line.
type usageError struct{ error }

func flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// newLogger makes a child's logger, as mafiamail's: text or JSON on stderr.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
