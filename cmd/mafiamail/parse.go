package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// cmdParse prints what the host makes of one message, as JSON: the route,
// the sender, the verdict and the commands and discussion found. With a
// database it knows the game's tokens, as the running host does.
func cmdParse(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := cli.Flags("parse", os.Stderr)
	cfgPath := fs.String("config", "", "configuration file (host address, authserv-id, database)")
	dbPath := fs.String("db", "", "database to look tokens up in (default: the configuration's)")
	address := fs.String("address", "", "the host's address, if there is no configuration")
	authserv := fs.String("authserv-id", "", "trusted authserv-id, if there is no configuration")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	cfg := inbound.Config{HostAddress: *address, AuthServID: *authserv}
	if *cfgPath != "" {
		c, err := config.Load(*cfgPath)
		if err != nil {
			return err
		}
		cfg = inbound.Config{HostAddress: c.Address, AuthServID: c.Auth.AuthservID,
			MaxSize: int(c.Limits.MaxMessageBytes), MaxCommands: c.Limits.MaxCommandLines}
		if *dbPath == "" {
			*dbPath = c.Database
		}
	}
	if cfg.HostAddress == "" {
		return cli.Usagef("give --config or --address")
	}
	var raw []byte
	var err error
	switch fs.NArg() {
	case 0:
		raw, err = io.ReadAll(stdin)
	case 1:
		raw, err = os.ReadFile(fs.Arg(0))
	default:
		return cli.Usagef("one message at a time")
	}
	if err != nil {
		return fmt.Errorf("read message: %w", err)
	}
	var dir inbound.Directory = noDirectory{}
	if *dbPath != "" {
		st, err := openDatabase(ctx, *dbPath)
		if err != nil {
			return err
		}
		defer st.Close()
		dir = host.Directory{Store: st}
	}
	out, err := inbound.Inspect(raw, cfg, dir).JSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// noDirectory knows no tokens: every participant's channel is refused.
type noDirectory struct{}

func (noDirectory) Participant(string, string) (inbound.Participant, bool) {
	return inbound.Participant{}, false
}
