package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/loops"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/store"
)

// cmdServe hosts games on the configured account, or on the embedded servers.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flags("serve", stderr)
	cfgPath := fs.String("config", "mafiamail.toml", "configuration file")
	embedded := fs.Bool("embedded", false, "run the embedded IMAP and SMTP servers on loopback and host games on them")
	dbPath := fs.String("db", "", "with --embedded: the database (default mafiamail.db)")
	speed := fs.Float64("speed", 1, "with --embedded: how much faster than real time game time runs")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	var cfg *config.Config
	if *embedded {
		c, srv, err := embeddedConfig(*dbPath, *speed)
		if err != nil {
			return err
		}
		defer srv.Close()
		cfg = c
		fmt.Fprintf(stdout, `Embedded mail servers are running on loopback:
  IMAP  %s   (plain text, no TLS)
  SMTP  %s   (plain text, no TLS)
Every address @%s is a mailbox; log in with the local part as user name and
the password %q. The referee is %s: send "NEW GAME name" to %s.
`, srv.IMAPAddr(), srv.SMTPAddr(), srv.Domain(), embeddedPassword, cfg.Referees[0], cfg.Address)
	} else {
		c, err := config.Load(*cfgPath)
		if err != nil {
			return err
		}
		cfg = c
	}
	log := newLogger(stderr, cfg.Log.Format, cfg.Log.Level)
	clock, err := serveClock(cfg.Database, cfg.Speed, time.Now())
	if err != nil {
		return err
	}
	rt, err := startHost(ctx, cfg, clock, log)
	if err != nil {
		return err
	}
	defer rt.Close()
	return rt.Run(ctx)
}

const embeddedPassword = "mafia"

// embeddedConfig starts the embedded servers and makes a configuration for them.
func embeddedConfig(db string, speed float64) (*config.Config, *mailserver.Server, error) {
	srv, err := mailserver.Start(mailserver.Options{Domain: "example.org", AutoCreateUsers: true,
		AutoCreatePassword: embeddedPassword, Users: map[string]string{"host": embeddedPassword, "referee": embeddedPassword}})
	if err != nil {
		return nil, nil, fmt.Errorf("start embedded mail servers: %w", err)
	}
	c := config.Defaults()
	c.Address = "host@example.org"
	c.Referees = []string{"referee@example.org"}
	if db != "" {
		c.Database = db
	}
	c.Speed = speed
	c.IMAP.URL, c.IMAP.Username, c.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", embeddedPassword
	c.SMTP.URL, c.SMTP.Username, c.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", embeddedPassword
	return &c, srv, nil
}

// hostRuntime is a running host: its store, the rules, the watcher that
// feeds it and the sender that drains its outbox.
type hostRuntime struct {
	st    *store.Store
	host  *host.Host
	watch *watcher.Watcher
	send  *sender.Sender
	log   *slog.Logger
}

func startHost(ctx context.Context, cfg *config.Config, clock host.Clock, log *slog.Logger) (*hostRuntime, error) {
	return startHostWith(ctx, cfg, clock, log, nil)
}

// startHostWith is startHost with a random source for the role draw (nil:
// crypto/rand).
func startHostWith(ctx context.Context, cfg *config.Config, clock host.Clock, log *slog.Logger, draw io.Reader) (*hostRuntime, error) {
	st, err := store.Open(ctx, cfg.Database, store.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	h, err := host.New(ctx, host.Options{
		Address: cfg.Address, Referees: cfg.Referees, AuthServID: cfg.Auth.AuthservID,
		MaxMessageBytes: int(cfg.Limits.MaxMessageBytes), MaxCommandLines: cfg.Limits.MaxCommandLines,
		PerSenderPerHour: cfg.Limits.PerSenderPerHour, Clock: clock, Rand: draw, Store: st, Log: log,
		RecipientsPerDay: cfg.SMTP.RecipientsPerDay, SendingDay: sendingBudget(cfg).Day,
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	rt := &hostRuntime{st: st, host: h, log: log}
	rt.watch, err = watcher.New(watcher.Config{
		URL: cfg.IMAP.URL, Username: cfg.IMAP.Username, Password: cfg.IMAP.Password,
		Mailbox: cfg.IMAP.Mailbox, MoveTo: cfg.IMAP.MoveTo, TLSConfig: tlsConfig(cfg.IMAP.Account),
		MinBackoff: 100 * time.Millisecond, Logger: log,
		CommandTimeout: time.Duration(cfg.IMAP.Timeout), IdleRefresh: time.Duration(cfg.IMAP.IdleRefresh),
		MaxMessageBytes: cfg.Limits.MaxMessageBytes,
	}, func(ctx context.Context, m watcher.Message) error {
		// The transaction in flight finishes even when a signal stops the
		// host: its mail is then flagged \Seen, or left for the next start.
		ctx = context.WithoutCancel(ctx)
		if m.HeaderOnly {
			return h.HandleOversized(ctx, m.Mailbox, m.UIDValidity, m.UID, m.Raw, int(m.Size))
		}
		return h.HandleMessage(ctx, m.Mailbox, m.UIDValidity, m.UID, m.Raw)
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	rt.send, err = sender.New(sender.Config{
		URL: cfg.SMTP.URL, Username: cfg.SMTP.Username, Password: cfg.SMTP.Password,
		TLSConfig: tlsConfig(cfg.SMTP.Account), Helo: heloName(cfg.Address), Logger: log,
		CommandTimeout: time.Duration(cfg.SMTP.Timeout),
		Connections:    cfg.SMTP.Connections,
		// The budget is counted in the store; its windows are the host's
		// day and minute, which the speed setting shortens.
		Ledger: st, Budget: sendingBudget(cfg),
		OnHold: func(hold sender.Hold) {
			if err := h.SendingHeld(context.Background(), host.SendingHold{Reply: hold.Reply,
				Sent: hold.SentInWindow, Learned: hold.Learned, Blocked: hold.Blocked}); err != nil {
				log.Error("cannot tell the referees that mail waits for the sending limit", "err", err)
			}
		},
		OnResume: func(sender.Hold) {
			if err := h.SendingResumed(context.Background()); err != nil {
				log.Error("cannot record that mail flows again", "err", err)
			}
		},
		// A message refused for good is reported by the outbox in the
		// transaction that marks it failed; this is for the messages that
		// reached only some of their recipients.
		OnFailed: func(m store.OutMessage, err error) {
			var partial *sender.RecipientsError
			if !errors.As(err, &partial) {
				return
			}
			if ferr := h.DeliveryFailed(context.Background(), m, err); ferr != nil {
				log.Error("cannot tell the referee of a failed delivery", "message_id", m.MessageID, "err", ferr)
			}
		},
	}, h.Outbox(), time.Now)
	if err != nil {
		st.Close()
		return nil, err
	}
	return rt, nil
}

// sendingBudget is the configured sending budget, its windows in real
// time: a day and a minute of the host's clock.
func sendingBudget(cfg *config.Config) sender.Budget {
	speed := max(cfg.Speed, 1)
	return sender.Budget{RecipientsPerDay: cfg.SMTP.RecipientsPerDay, MessagesPerMinute: cfg.SMTP.MessagesPerMinute,
		Day: time.Duration(float64(24*time.Hour) / speed), Minute: time.Duration(float64(time.Minute) / speed)}
}

func tlsConfig(a config.Account) *tls.Config {
	if !a.InsecureSkipVerify {
		return nil
	}
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for by the configuration, for test servers
}

func heloName(addr string) string {
	_, domain, _ := strings.Cut(addr, "@")
	if domain == "" || net.ParseIP(domain) != nil {
		return "localhost"
	}
	return domain
}

// Run runs the watcher, the sender and the game clock until ctx ends or one
// of them fails. Every committed transaction that queued mail wakes the
// sender.
func (rt *hostRuntime) Run(ctx context.Context) error {
	return loops.All(ctx, map[string]func(context.Context) error{
		"watcher": rt.watch.Run, "sender": rt.send.Run, "clock": rt.host.RunClock,
		"outbox": rt.send.KickOn(rt.st.OutboxSignal()),
	})
}

// Close closes the store.
func (rt *hostRuntime) Close() error { return rt.st.Close() }
