package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/emersion/go-message"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// cmdParse prints what the host makes of one message, as JSON: the route,
// the sender, the verdict and the commands and discussion found. With a
// database it knows the game's tokens, as the running host does.
func cmdParse(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := cli.Flags("parse", stderr)
	cfgPath := fs.String("config", "", "configuration file (host address, authserv-id, database)")
	dbPath := fs.String("db", "", "the host's database, to look tokens up in (default: the configuration's); "+
		"without --config or --address it tells the host's address too: a recipient host+GAME…@domain of the message "+
		"(To, Cc, Delivered-To, X-Original-To) whose GAME is a game of the database makes it host@domain")
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
	if cfg.HostAddress == "" && *dbPath == "" {
		return cli.Usagef("give --config, --address or --db: the host's address is needed to tell where the message went")
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
		if cfg.HostAddress == "" {
			route, err := gameRoute(ctx, raw, st)
			if err != nil {
				return err
			}
			if route.Kind == "" {
				return cli.Usagef("no recipient of the message (To, Cc, Delivered-To, X-Original-To) is the address of a game in %s "+
					"(host+GAME…@domain): give the host's address with --address, or --config", *dbPath)
			}
			cfg.HostAddress = route.host
			fmt.Fprintf(stderr, "mafiamail parse: the host's address is %s, as %s %s names game %s\n",
				route.host, route.Header, route.Address, route.Game)
		}
	}
	out, err := inbound.Inspect(raw, cfg, dir).JSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// hostRoute is a route found for a host address guessed from a recipient.
type hostRoute struct {
	inbound.Route
	host string
}

// gameRoute finds the host's address in the message's recipients: the
// first address host+TAG@domain (in To, Cc, Delivered-To, X-Original-To,
// the fields the host routes by) whose tag, read as the host reads it
// with host@domain as its address, names a game the database holds. Its
// Kind is "" when no recipient does.
func gameRoute(ctx context.Context, raw []byte, st *store.Store) (hostRoute, error) {
	th, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil {
		return hostRoute{}, fmt.Errorf("read the message's header: %w", err)
	}
	h := gomail.Header{Header: message.Header{Header: th}}
	for _, field := range []string{"To", "Cc", "Delivered-To", "X-Original-To"} {
		for _, v := range h.Values(field) {
			// Anything that looks like an address is a candidate: the
			// route below, read as the host reads it, decides.
			for _, word := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(" \t,;<>\"()", r) }) {
				at := strings.LastIndexByte(word, '@')
				plus := strings.IndexByte(word, '+')
				if plus <= 0 || at < plus {
					continue
				}
				candidate := word[:plus] + word[at:]
				r := inbound.FindRoute(h, candidate)
				if r.Game == "" {
					continue
				}
				_, err := st.Game(ctx, r.Game)
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return hostRoute{}, err
				}
				return hostRoute{Route: r, host: candidate}, nil
			}
		}
	}
	return hostRoute{}, nil
}

// noDirectory knows no tokens: every participant's channel is refused.
type noDirectory struct{}

func (noDirectory) Participant(string, string) (inbound.Participant, bool) {
	return inbound.Participant{}, false
}
