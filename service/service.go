// Package service wires a running host: the store, the rules (host), the
// IMAP watcher that feeds them, the SMTP sender that drains the outbox, the
// game clock, and the outbox signal that wakes the sender after every
// commit that queued mail. `mafiamail serve`, `mafiamail demo`, the bench's
// host process and every end-to-end test start a host through [Start], so
// that what is tested is what runs.
package service

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/loops"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// Config is what a host needs beyond its configuration file.
type Config struct {
	// Clock is the game clock (see [GameClock] for serve's).
	Clock host.Clock
	// Log receives everything the host logs.
	Log *slog.Logger
	// Draw is the random source of the role draw; nil means Key's, or
	// crypto/rand without a key. Demos and tests pass a seeded one to
	// repeat a game.
	Draw io.Reader
	// Key is the host key (see [LoadKey]): the role draws and every token
	// derive from it, so that a host restored from a backup, or from none,
	// and replaying its mailbox decides the same again. Nil makes them
	// from crypto/rand, as a host without a configuration file (serve
	// --embedded, demo) does.
	Key *hostkey.Key
	// TuneHost and TuneWatcher, when set, may change the host's and the
	// watcher's settings that Start has made from the configuration, just
	// before it builds them. They are for tests that need a shorter wait
	// than the product's (a mail grace, a backoff) or to watch what the
	// host is told, and for a demo whose game time it moves itself (no
	// arrival order, as for a clock a test moves); serve leaves them nil.
	TuneHost    func(*host.Config)
	TuneWatcher func(*watcher.Config)
}

// Service is a started host: its store, the rules, the watcher that feeds
// them and the sender that drains the outbox. Run runs it; Close closes the
// store once Run has returned.
type Service struct {
	st    *store.Store
	host  *host.Host
	watch *watcher.Watcher
	send  *sender.Sender
	log   *slog.Logger
}

// Start opens the store of cfg and wires the host on it to the configured
// IMAP and SMTP accounts. Nothing runs until Run.
func Start(ctx context.Context, cfg *config.Config, o Config) (*Service, error) {
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	st, err := store.Open(ctx, cfg.Database, store.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	if o.Key != nil {
		recorded, err := st.UseKey(ctx, o.Key, time.Now())
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("%w: restore the key file that was backed up with the configuration, or restore a database written with this key", err)
		}
		if recorded {
			log.Info("the database now records the host key's fingerprint", "fingerprint", o.Key.Fingerprint())
		}
	}
	hc := host.Config{
		Address: cfg.Address, Referees: cfg.Referees, AuthServID: cfg.Auth.AuthservID,
		MaxMessageBytes: int(cfg.Limits.MaxMessageBytes), MaxCommandLines: cfg.Limits.MaxCommandLines,
		PerSenderPerHour: cfg.Limits.PerSenderPerHour, MaxPostBytes: cfg.Limits.MaxPostBytes,
		KeepRawMail: time.Duration(cfg.Limits.KeepRawMail), Language: cfg.Language,
		Clock: o.Clock, Rand: o.Draw, Key: o.Key, Store: st, Log: log,
		ArrivalOrder:     true,
		RecipientsPerDay: cfg.SMTP.RecipientsPerDay, SendingDay: SendingBudget(cfg).Day,
	}
	if o.TuneHost != nil {
		o.TuneHost(&hc)
	}
	h, err := host.New(ctx, hc)
	if err != nil {
		st.Close()
		return nil, err
	}
	s := &Service{st: st, host: h, log: log}
	tokens, err := TokenSource(cfg, h, log)
	if err != nil {
		st.Close()
		return nil, err
	}
	wc := watcherConfig(cfg, log)
	wc.OAuth2 = Bearer(cfg.IMAP.Account, tokens)
	// Commands count at their mail's arrival; deadlines wait for the mail
	// that arrived before them (docs/arrival.md).
	wc.Triage, wc.Barrier, wc.ArrivalSlack = h.Triage, h.Barrier, time.Duration(cfg.IMAP.ArrivalSlack)
	wc.OnWatermark = func(t time.Time) { h.Advance(context.WithoutCancel(ctx), t) }
	wc.OnFlood = func(f watcher.Flood) {
		if err := h.ReportFlood(context.WithoutCancel(ctx), f.Messages, f.First, f.Last); err != nil {
			log.Error("cannot tell the referees of a flood", "messages", f.Messages, "err", err)
		}
	}
	if o.TuneWatcher != nil {
		o.TuneWatcher(&wc)
	}
	s.watch, err = watcher.NewGroup(wc, func(ctx context.Context, ms []watcher.Fetched) []error {
		// The messages of a group are committed together, with one
		// fsync (a group commit). The transaction in flight finishes even
		// when a signal stops the host: its mail is then flagged \Seen,
		// or left for the next start.
		mail := make([]host.Mail, len(ms))
		for i, m := range ms {
			mail[i] = host.Mail{Mailbox: m.Mailbox, UIDValidity: m.UIDValidity, UID: m.UID,
				Raw: m.Raw, Size: int(m.Size), Arrived: m.Arrived, Quiet: m.Flood}
		}
		return h.HandleBatch(context.WithoutCancel(ctx), mail)
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	s.send, err = sender.New(sender.Config{
		URL: cfg.SMTP.URL, Username: cfg.SMTP.Username, Password: cfg.SMTP.Password,
		OAuth2:    Bearer(cfg.SMTP.Account, tokens),
		TLSConfig: TLSConfig(cfg.SMTP.Account), Helo: HeloName(cfg.Address), Logger: log,
		CommandTimeout: time.Duration(cfg.SMTP.Timeout),
		Connections:    cfg.SMTP.Connections,
		// The budget is counted in the store; its windows are the host's
		// day and minute, which the speed setting shortens.
		Ledger: sendstore.Ledger(st), Budget: SendingBudget(cfg),
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
		OnFailed: func(m sender.Message, err error) {
			var partial *sender.RecipientsError
			if !errors.As(err, &partial) {
				return
			}
			if ferr := h.DeliveryFailed(context.Background(), sendstore.OutMessage(m), err); ferr != nil {
				log.Error("cannot tell the referee of a failed delivery", "message_id", m.MessageID, "err", ferr)
			}
		},
	}, sendstore.Outbox(h.Outbox()), time.Now)
	if err != nil {
		st.Close()
		return nil, err
	}
	return s, nil
}

// SendingBudget is the configured sending budget, its windows in real
// time: a day and a minute of the host's clock.
func SendingBudget(cfg *config.Config) sender.Budget {
	speed := max(cfg.Speed, 1)
	return sender.Budget{RecipientsPerDay: cfg.SMTP.RecipientsPerDay, MessagesPerMinute: cfg.SMTP.MessagesPerMinute,
		Day: time.Duration(float64(24*time.Hour) / speed), Minute: time.Duration(float64(time.Minute) / speed)}
}

// TLSConfig is the TLS configuration an account asks for: nil, the
// system's defaults, unless it accepts any certificate (test servers).
func TLSConfig(a config.Account) *tls.Config {
	if !a.InsecureSkipVerify {
		return nil
	}
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for by the configuration, for test servers
}

// HeloName is the name the sender greets SMTP servers with: the domain of
// the host's address, or localhost where that is no name.
func HeloName(addr string) string {
	_, domain, _ := strings.Cut(addr, "@")
	if domain == "" || net.ParseIP(domain) != nil {
		return "localhost"
	}
	return domain
}

// Run runs the watcher, the sender and the game clock until ctx ends or one
// of them fails. Every committed transaction that queued mail wakes the
// sender.
func (s *Service) Run(ctx context.Context) error {
	return loops.All(ctx, map[string]func(context.Context) error{
		"watcher": s.watch.Run, "sender": s.send.Run, "clock": s.host.RunClock,
		"outbox": s.send.KickOn(s.st.OutboxSignal()),
	})
}

// Close closes the store. Call it after Run has returned.
func (s *Service) Close() error { return s.st.Close() }

// Host is the running rules: the games as the host holds them.
func (s *Service) Host() *host.Host { return s.host }

// Store is the host's database.
func (s *Service) Store() *store.Store { return s.st }

// Serve is `mafiamail serve` once the configuration is read: it starts the
// host on the game clock kept beside the database (see [GameClock]), runs it
// until ctx ends or a part of it fails, and closes the store.
func Serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	clock, err := GameClock(cfg.Database, cfg.Speed, time.Now())
	if err != nil {
		return err
	}
	key, err := LoadKey(cfg, log)
	if err != nil {
		return err
	}
	// A database older than its mailbox (an old backup copied in place)
	// would never read the mail a host had read since: it is refused,
	// with the restore that brings it up to date.
	if err := CheckCurrent(ctx, cfg, log); err != nil {
		return err
	}
	s, err := Start(ctx, cfg, Config{Clock: clock, Log: log, Key: key})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}

// Watcher is the IMAP watcher that feeds the host, for its statistics.
func (s *Service) Watcher() *watcher.Watcher { return s.watch }

// Embedded is the configuration `serve --embedded` makes for the embedded
// mail servers srv: the host is host@DOMAIN, logging in with password, the
// referee referee@DOMAIN, and the database is db.
func Embedded(srv *mailserver.Server, password, db string) config.Config {
	c := config.Defaults()
	c.Address = "host@" + srv.Domain()
	c.Referees = []string{"referee@" + srv.Domain()}
	c.Database = db
	c.IMAP.URL, c.IMAP.Username, c.IMAP.Password = "imap://"+srv.IMAPAddr(), "host", password
	// The embedded server runs in this process: one clock, and mail is in
	// the mailbox the moment it is delivered.
	c.IMAP.ArrivalSlack = config.Duration(100 * time.Millisecond)
	c.SMTP.URL, c.SMTP.Username, c.SMTP.Password = "smtp://"+srv.SMTPAddr(), "host", password
	// The host trusts what the server says of who logged in to send, when
	// it says anything: mail that claims a From its sender did not log in
	// as is refused, as behind a provider that signs its mail.
	c.Auth.AuthservID = srv.AuthServID()
	return c
}

// LoadKey reads the host key that cfg names (config.Config.KeyFile), nil
// when it names none. A host whose configuration predates the key gets one
// made on its first start, and says so: from then on the key is to be
// backed up with the configuration.
func LoadKey(cfg *config.Config, log *slog.Logger) (*hostkey.Key, error) {
	if cfg.KeyFile == "" {
		return nil, nil
	}
	key, created, err := hostkey.LoadOrCreate(cfg.KeyFile)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		// A configuration folder the host may only read (systemd's
		// ProtectSystem): the host runs on as it did before it had a key,
		// but a lost database could not be replayed into the same games.
		log.Error("there is no host key and none can be made beside the configuration: the host runs without one, and a restore could not replay its games; run mafiamail init or write one with key_file",
			"key_file", cfg.KeyFile, "err", err)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if created {
		log.Warn("made a new host key: back it up with the configuration, it is what a restore needs", "key_file", cfg.KeyFile)
	}
	return key, nil
}
