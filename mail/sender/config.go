package sender

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailurl"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// Config configures a Sender. URL is required; every other field has a
// default.
type Config struct {
	// URL names the server: "smtps://host[:port]" for TLS from the first
	// byte (port 465 by default), or "smtp://host[:port]" (port 587), which
	// requires STARTTLS unless host is a loopback address ("localhost",
	// 127.0.0.0/8, ::1), where the connection may stay in plain text. The
	// URL carries neither credentials nor a path.
	URL string
	// Username and Password authenticate, when Username is set. The
	// password is never logged.
	Username string
	Password string
	// Auth chooses the mechanism: "plain", "login", or "" for PLAIN where
	// the server offers it and LOGIN otherwise.
	Auth string
	// OAuth2, when set with Username, authenticates with an access token
	// instead of Password: AUTH OAUTHBEARER where the server offers it,
	// else XOAUTH2. A token the server refuses is refreshed and tried once
	// more.
	OAuth2 oauth.Bearer
	// Helo is the name the sender gives in EHLO; default the machine's
	// host name.
	Helo string

	// TLSConfig is used for smtps:// and STARTTLS; nil means the system's
	// roots and the URL's host name. It is cloned, never modified.
	TLSConfig *tls.Config
	// Logger receives what the sender does; default slog.Default().
	Logger *slog.Logger

	// BatchSize is how many messages are claimed from the outbox at a
	// time; default 50.
	BatchSize int
	// Connections is how many SMTP connections the sender uses at once
	// when several messages are due; default 4, at most 32. Each copy of
	// a message is its own transaction, and a server answers each only
	// once the message is safely queued, so one connection leaves most
	// of the time waiting; a few in parallel keep the outbox moving. A
	// connection is opened only when a message is there for it. A server
	// that refuses the extra connections (a per-client limit) is used
	// with those it accepts.
	Connections int
	// MinBackoff and MaxBackoff bound the waits after temporary failures:
	// a message's next attempt after its n-th failure, and the next
	// connection after n failed ones in a row, is MinBackoff doubled n
	// times, at most MaxBackoff, with jitter. Defaults 5 seconds and 30
	// minutes.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// CommandTimeout bounds the wait for the answer to one command, and
	// the dial; default 2 minutes. The answer to the end of DATA may take
	// five times as long: servers scan the message before answering.
	CommandTimeout time.Duration

	// OnFailed, if set, is called once a message has been given up on for
	// good (err is the server's *smtp.SMTPError, or another error that
	// makes sending impossible) or was delivered to only some of its
	// recipients (err is a *RecipientsError). It is called after the result
	// is recorded in the outbox, on Run's goroutine; the host uses it to
	// tell the referee. A host that wants the notice to be enqueued in the
	// same transaction as the failure can do both in its Outbox.MarkFailed
	// instead.
	OnFailed func(msg Message, err error)

	// Budget is how much the account may send; the sender never sends
	// more. It needs a Ledger to count what was sent.
	Budget Budget
	// Ledger, if set, counts what was sent (the budget's count survives
	// restarts) and keeps the limit learned from a provider's refusal
	// while Budget.RecipientsPerDay is 0. The host passes its store,
	// through an adapter.
	Ledger Ledger
	// ProbeEvery and MaxProbe bound the waits while the provider refuses
	// mail for its sending limit: the first probe (one message) comes
	// ProbeEvery after the refusal, or once the budget's window has room
	// when a limit is known, and each refused probe doubles the wait, up
	// to MaxProbe. Defaults a 96th and a 12th of Budget.Day (15 minutes
	// and 2 hours of a real day).
	ProbeEvery time.Duration
	MaxProbe   time.Duration
	// OnHold, if set, is called once when the provider begins refusing
	// mail for its sending limit (every message is then held, none is
	// failed), and OnResume once it takes mail again; both on Run's
	// goroutine. The host tells the referees.
	OnHold   func(Hold)
	OnResume func(Hold)
}

// Defaults of Config.
const (
	DefaultBatchSize      = 50
	DefaultConnections    = 4
	DefaultMinBackoff     = 5 * time.Second
	DefaultMaxBackoff     = 30 * time.Minute
	DefaultCommandTimeout = 2 * time.Minute
)

// MaxConnections bounds Config.Connections: more would look like a flood
// to the server, and gain nothing once the server's disk is the limit.
const MaxConnections = 32

func (c *Config) setDefaults() {
	if c.Helo == "" {
		c.Helo = defaultHelo()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.Connections == 0 {
		c.Connections = DefaultConnections
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.CommandTimeout <= 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	c.Budget.setDefaults()
	if c.ProbeEvery <= 0 {
		c.ProbeEvery = c.Budget.Day / 96
	}
	if c.MaxProbe <= 0 {
		c.MaxProbe = c.Budget.Day / 12
	}
	if c.MaxProbe < c.ProbeEvery {
		c.MaxProbe = c.ProbeEvery
	}
}

// defaultHelo is the machine's name where it looks like a domain name;
// "localhost" otherwise.
func defaultHelo() string {
	h, err := os.Hostname()
	if err != nil || h == "" || strings.ContainsAny(h, " \t\r\n") {
		return "localhost"
	}
	return h
}

func (c *Config) validate() error {
	switch strings.ToLower(c.Auth) {
	case "", "plain", "login":
	default:
		return fmt.Errorf("sender: Auth %q: want \"plain\", \"login\" or \"\"", c.Auth)
	}
	if c.Username == "" && c.Password != "" {
		return errors.New("sender: a Password without a Username")
	}
	if c.Username == "" && c.OAuth2 != nil {
		return errors.New("sender: OAuth2 without a Username to log in as")
	}
	if c.Connections < 1 || c.Connections > MaxConnections {
		return fmt.Errorf("sender: Connections %d: want 1 to %d", c.Connections, MaxConnections)
	}
	if c.Budget.RecipientsPerDay < 0 || c.Budget.MessagesPerMinute < 0 {
		return errors.New("sender: a negative budget")
	}
	if (c.Budget.RecipientsPerDay > 0 || c.Budget.MessagesPerMinute > 0) && c.Ledger == nil {
		return errors.New("sender: a budget needs a Ledger to count what was sent")
	}
	if strings.ContainsAny(c.Helo, " \t\r\n") {
		return fmt.Errorf("sender: Helo %q is not a host name", c.Helo)
	}
	return nil
}

// parseURL applies the connection policy of package mailurl.
func parseURL(raw string) (mailurl.Endpoint, error) {
	ep, err := mailurl.Parse(raw, mailurl.SMTP)
	if err != nil {
		return ep, fmt.Errorf("sender: %w", err)
	}
	return ep, nil
}
