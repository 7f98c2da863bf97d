package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
)

// cmdServe hosts games on the configured account, or on the embedded servers.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("serve", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	embedded := fs.Bool("embedded", false, "run the embedded IMAP and SMTP servers on loopback and host games on them")
	dbPath := fs.String("db", "", "with --embedded: the database (default mafiamail.db)")
	speed := fs.Float64("speed", 1, "with --embedded: how much faster than real time game time runs")
	perDay := fs.Int("recipients-per-day", 0, "with --embedded: a sending budget, as a small mailbox has, to see the host plan for it (0: none)")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	var cfg *config.Config
	if *embedded {
		c, srv, pw, err := embeddedConfig(*dbPath, *speed)
		if err != nil {
			return err
		}
		defer srv.Close()
		c.SMTP.RecipientsPerDay = *perDay
		cfg = c
		fmt.Fprintf(stdout, `Embedded mail servers are running on loopback:
  IMAP  %s   (plain text, no TLS)
  SMTP  %s   (plain text, no TLS)
Every address @%s is a mailbox; log in with the local part as user name and
the password %q, to read and to send: the host takes only mail sent by the
mailbox in its From. The referee is %s: send "NEW GAME name" to %s.
The referee's mailbox has a password of its own, made for this run: %s
The host's mailbox (%s), which holds every command players send, has one
too, for the host alone: %s
This is for demos and play on this machine, not for hosting over a network.
`, srv.IMAPAddr(), srv.SMTPAddr(), srv.Domain(), embeddedPassword, cfg.Referees[0], cfg.Address,
			pw.referee, cfg.Address, pw.host)
	} else {
		c, err := config.Load(*cfgPath)
		if err != nil {
			return err
		}
		cfg = c
	}
	cli.TuneServerGC(os.Getenv)
	err := service.Serve(ctx, cfg, cli.NewLogger(stderr, cfg.Log.Format, cfg.Log.Level))
	if behind := (*service.BehindMailbox)(nil); errors.As(err, &behind) {
		return fmt.Errorf("%w:\n\n%s\nthen start serve again (docs/hosting.md, \"Backing up and restoring\")", err, behind.Commands(*cfgPath))
	}
	return err
}

// embeddedPassword is the players' password on the embedded servers:
// simple, so that anyone at the table can set up a mail client.
const embeddedPassword = "mafia"

// embeddedPasswords are the passwords of the two mailboxes the players
// must not open: the host's, whose INBOX holds every player's night
// actions, and the referee's. Each run makes new ones.
type embeddedPasswords struct {
	host, referee string
}

// newEmbeddedPasswords makes the passwords of a run from crypto/rand.
func newEmbeddedPasswords() (embeddedPasswords, error) {
	var pw embeddedPasswords
	for _, p := range []*string{&pw.host, &pw.referee} {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			return pw, fmt.Errorf("make a password for the embedded servers: %w", err)
		}
		*p = base64.RawURLEncoding.EncodeToString(b)
	}
	return pw, nil
}

// embeddedConfig starts the embedded servers and makes a configuration for
// them: every mailbox takes the players' password but the host's and the
// referee's, which take the passwords returned.
func embeddedConfig(db string, speed float64) (*config.Config, *mailserver.Server, embeddedPasswords, error) {
	pw, err := newEmbeddedPasswords()
	if err != nil {
		return nil, nil, pw, err
	}
	srv, err := mailserver.Start(mailserver.Config{Domain: "example.org", AutoCreateUsers: true, AuthResults: true,
		AutoCreatePassword: embeddedPassword, Users: map[string]string{"host": pw.host, "referee": pw.referee}})
	if err != nil {
		return nil, nil, pw, fmt.Errorf("start embedded mail servers: %w", err)
	}
	if db == "" {
		db = config.Defaults().Database
	}
	c := service.Embedded(srv, pw.host, db)
	c.Speed = speed
	return &c, srv, pw, nil
}
