// Package cli holds what the project's commands share: how a long-running
// command stops on a signal, how a mistake in the command line is told from
// a failure, the process's logger, and the garbage collector's setting for
// a command that serves for long (gc.go).
package cli

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

// SignalContext is ctx, cancelled by the first SIGINT or SIGTERM. After the
// first signal the signals get their default effect back, so that a second
// one ends the process at once: the transaction in flight finishes on the
// first, and the store is safe against the second too.
func SignalContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// UsageError is a mistake in the command line: the command exits with
// status 2, as flag does.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as a mistake in the command line.
func Usage(err error) error { return UsageError{err} }

// Usagef is a mistake in the command line, described as by fmt.Errorf.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// Flags is a flag set for the command name that reports its errors on
// stderr and returns them rather than exiting.
func Flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// NewLogger makes the process's logger on w: text, or JSON where format
// is "json", at level ("debug" … "error"; anything else is info).
func NewLogger(w io.Writer, format, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// ExitStatus reports err of the command name on stderr and returns the
// process's exit status: 0 for none, a stop by signal or a request for
// help (-h, --help: the flag set has printed the usage already, and what
// was asked for is done), 2 for a usage mistake, 1 for any other failure.
func ExitStatus(name string, err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(UsageError)):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	case errors.Is(err, context.Canceled):
		return 0
	default:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
}
