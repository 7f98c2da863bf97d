package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
)

// cmdCheck validates the configuration and logs in to IMAP and SMTP,
// saying exactly what fails.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("check", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "configuration %s: ok (host %s, %d referee(s), database %s)\n",
		*cfgPath, cfg.Address, len(cfg.Referees), cfg.Database)
	return checkAccounts(ctx, cfg, stdout)
}

// checkAccounts logs in to both servers and reports each.
func checkAccounts(ctx context.Context, cfg *config.Config, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	quiet := newLogger(io.Discard, "text", "error")
	var errs []error
	res, err := watcher.Check(ctx, watcher.Config{URL: cfg.IMAP.URL, Username: cfg.IMAP.Username,
		Password: cfg.IMAP.Password, Mailbox: cfg.IMAP.Mailbox, TLSConfig: service.TLSConfig(cfg.IMAP.Account),
		CommandTimeout: 20 * time.Second, Logger: quiet})
	if err != nil {
		fmt.Fprintf(w, "IMAP %s as %s: FAILED: %v\n", cfg.IMAP.URL, cfg.IMAP.Username, err)
		errs = append(errs, fmt.Errorf("IMAP: %w", err))
	} else {
		idle := "with IDLE (mail is seen at once)"
		if !res.IDLE {
			idle = "without IDLE (the mailbox is polled)"
		}
		fmt.Fprintf(w, "IMAP %s as %s: ok, %s, mailbox %s holds %d messages, %s\n",
			cfg.IMAP.URL, cfg.IMAP.Username, res.Security, cfg.IMAP.Mailbox, res.Messages, idle)
	}
	sec, err := sender.Check(ctx, sender.Config{URL: cfg.SMTP.URL, Username: cfg.SMTP.Username,
		Password: cfg.SMTP.Password, TLSConfig: service.TLSConfig(cfg.SMTP.Account), Helo: service.HeloName(cfg.Address),
		CommandTimeout: 20 * time.Second, Logger: quiet})
	if err != nil {
		fmt.Fprintf(w, "SMTP %s as %s: FAILED: %v\n", cfg.SMTP.URL, cfg.SMTP.Username, err)
		errs = append(errs, fmt.Errorf("SMTP: %w", err))
	} else {
		fmt.Fprintf(w, "SMTP %s as %s: ok, %s\n", cfg.SMTP.URL, cfg.SMTP.Username, sec)
	}
	return errors.Join(errs...)
}
