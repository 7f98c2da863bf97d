package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
)

// cmdCheck validates the configuration and logs in to IMAP and SMTP,
// saying exactly what fails.
func cmdCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("check", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
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
	quiet := cli.NewLogger(io.Discard, "text", "error")
	// The same token source as serve: check logs in as the host does.
	tokens, err := service.TokenSource(cfg, nil, quiet)
	if err != nil {
		return err
	}
	var errs []error
	res, err := watcher.Check(ctx, watcher.Config{URL: cfg.IMAP.URL, Username: cfg.IMAP.Username,
		Password: cfg.IMAP.Password, OAuth2: service.Bearer(cfg.IMAP.Account, tokens), Mailbox: cfg.IMAP.Mailbox, TLSConfig: service.TLSConfig(cfg.IMAP.Account),
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
		Password: cfg.SMTP.Password, OAuth2: service.Bearer(cfg.SMTP.Account, tokens), TLSConfig: service.TLSConfig(cfg.SMTP.Account), Helo: service.HeloName(cfg.Address),
		CommandTimeout: 20 * time.Second, Logger: quiet})
	if err != nil {
		fmt.Fprintf(w, "SMTP %s as %s: FAILED: %v\n", cfg.SMTP.URL, cfg.SMTP.Username, err)
		errs = append(errs, fmt.Errorf("SMTP: %w", err))
	} else {
		fmt.Fprintf(w, "SMTP %s as %s: ok, %s\n", cfg.SMTP.URL, cfg.SMTP.Username, sec)
	}
	checkBudget(cfg, w)
	return errors.Join(errs...)
}

// checkBudget names the provider's documented sending limit when the SMTP
// host is one the host knows, and suggests it when the budget is unset.
func checkBudget(cfg *config.Config, w io.Writer) {
	set := cfg.SMTP.RecipientsPerDay
	p, ok := sender.KnownProvider(cfg.SMTP.URL)
	switch {
	case !ok && set == 0:
		fmt.Fprintf(w, "sending limit: not set; the host learns it from the provider's first refusal (set [smtp] recipients_per_day to the provider's figure to stay within it from the start)\n")
	case !ok:
		fmt.Fprintf(w, "sending limit: %d recipients a day, as configured\n", set)
	case p.RecipientsPerDay == 0:
		fmt.Fprintf(w, "sending limit: %s documents no single figure (%s); [smtp] recipients_per_day is %s\n", p.Name, p.Note, budgetWord(set))
	case set == 0:
		fmt.Fprintf(w, "sending limit: %s documents %d recipients a day (%s); [smtp] recipients_per_day is not set: set it to %d so that the host stays within it\n",
			p.Name, p.RecipientsPerDay, p.Note, p.RecipientsPerDay)
	case set > p.RecipientsPerDay:
		fmt.Fprintf(w, "sending limit: %d recipients a day, more than the %d %s documents (%s): the provider may refuse mail, which then waits\n",
			set, p.RecipientsPerDay, p.Name, p.Note)
	default:
		fmt.Fprintf(w, "sending limit: %d recipients a day; %s documents %d (%s)\n", set, p.Name, p.RecipientsPerDay, p.Note)
	}
	if ok && p.MessagesPerMinute > 0 && cfg.SMTP.MessagesPerMinute == 0 {
		fmt.Fprintf(w, "sending rate: %s documents %d messages a minute; set [smtp] messages_per_minute to %d\n", p.Name, p.MessagesPerMinute, p.MessagesPerMinute)
	}
}

func budgetWord(n int) string {
	if n == 0 {
		return "not set"
	}
	return fmt.Sprint(n)
}
