// Command mafiamail hosts games of Mafia played by e-mail.
//
//	mafiamail demo [--setup classic|mafia150] [--seed N] [--language en|de|fr|es]
//	               [--digest DURATION] [--out DIR] [--speed X] [--timeout DURATION] [-v]
//	mafiamail init [--address ADDR] [--referee ADDR] [--out FILE] ...
//	mafiamail serve [--config mafiamail.toml] [--embedded]
//	mafiamail check --config mafiamail.toml
//	mafiamail restore [--config mafiamail.toml] [BACKUP]
//	mafiamail parse [--config FILE] [--db FILE] [message.eml]
//	mafiamail games list|show|export|archive|backup --db FILE ...
//	mafiamail version
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mafiamail/mafiamail/internal/cli"
)

const usage = `mafiamail hosts games of Mafia played by e-mail.

Usage:
  mafiamail demo  [--setup classic|mafia150] [--seed N] [--language en|de|fr|es]
                  [--digest DURATION] [--out DIR] [--speed X] [--timeout DURATION] [-v]
                  play a whole game with bot players on built-in mail servers;
                  --seed N plays the same game again (the seed is printed first);
                  --language: the game's and the bots'; --digest: the thread in
                  digests (mafia150: 2h); --out writes every mailbox, the game's
                  log and its archive (DIR/archive); --speed X runs game time
                  X times faster than real time instead of stepping it (the game
                  is then not repeatable); -v logs what the host does
  mafiamail init  [--address ADDR] [--referee ADDR] [--out mafiamail.toml] ...
                  set up a mailbox: find its servers, sign in, test it, write the configuration
  mafiamail serve [--config mafiamail.toml] [--embedded]
                  host games on a real mail account (or on built-in servers)
  mafiamail check --config mafiamail.toml
                  check the configuration and log in to IMAP and SMTP
  mafiamail restore [--config mafiamail.toml] [BACKUP]
                  bring back a lost database: from BACKUP (games backup made
                  it) or from nothing, replaying every message of the mailbox
                  it had not applied; needs the configuration's host key
  mafiamail parse [--config FILE | --db FILE] [message.eml]
                  show what the host makes of one message (stdin if no file)
  mafiamail games list   --db FILE
  mafiamail games show   --db FILE GAME
  mafiamail games export --db FILE GAME --out DIR
  mafiamail games archive --db FILE GAME --out DIR
  mafiamail games backup --db FILE DEST
                  look after games while serve runs
  mafiamail version
                  print the version and the commit this binary was built from
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
	ctx, stop := cli.SignalContext(context.Background())
	defer stop()
	var err error
	switch args[0] {
	case "demo":
		err = cmdDemo(ctx, args[1:], stdout, stderr)
	case "init":
		err = cmdInit(ctx, args[1:], stdin, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "check":
		err = cmdCheck(ctx, args[1:], stdout, stderr)
	case "restore":
		err = cmdRestore(ctx, args[1:], stdout, stderr)
	case "parse":
		err = cmdParse(ctx, args[1:], stdin, stdout, stderr)
	case "games":
		err = cmdGames(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		err = cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "mafiamail: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cli.ExitStatus("mafiamail "+args[0], err, stderr)
}
