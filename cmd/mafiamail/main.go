// Command mafiamail hosts games of Mafia played by e-mail.
//
//	mafiamail demo [--setup classic|mafia150] [--seed N] [--out DIR]
//	mafiamail serve [--config mafiamail.toml] [--embedded]
//	mafiamail check --config mafiamail.toml
//	mafiamail parse [--config FILE] [--db FILE] [message.eml]
//	mafiamail games list|show|export|backup --db FILE ...
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

const usage = `mafiamail hosts games of Mafia played by e-mail.

Usage:
  mafiamail demo  [--setup classic|mafia150] [--seed N] [--out DIR]
                  play a whole game with bot players on built-in mail servers
  mafiamail serve [--config mafiamail.toml] [--embedded]
                  host games on a real mail account (or on built-in servers)
  mafiamail check --config mafiamail.toml
                  check the configuration and log in to IMAP and SMTP
  mafiamail parse [--config FILE | --db FILE] [message.eml]
                  show what the host makes of one message (stdin if no file)
  mafiamail games list   --db FILE
  mafiamail games show   --db FILE GAME
  mafiamail games export --db FILE GAME --out DIR
  mafiamail games backup --db FILE DEST
                  look after games while serve runs
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	// The first SIGINT or SIGTERM stops taking mail and lets the transaction
	// in flight finish; after it the signals get their default effect back,
	// so a second one ends the process at once (safe too: see the store).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop()
	}()
	var err error
	switch args[0] {
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(ctx, args[1:], stdout, stderr)
	case "parse":
		err = cmdParse(ctx, args[1:], stdin, stdout)
	case "games":
		err = cmdGames(ctx, args[1:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mafiamail: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "mafiamail %s: %v\n", args[0], err)
			return 2
		}
		if errors.Is(err, context.Canceled) {
			return 0
		}
		fmt.Fprintf(stderr, "mafiamail %s: %v\n", args[0], err)
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

// newLogger makes the process's logger: text or JSON on stderr.
func newLogger(w io.Writer, format, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
