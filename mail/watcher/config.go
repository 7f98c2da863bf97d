package watcher

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/mail/mailurl"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// Config configures a Watcher. URL, Username and Password (or OAuth2) are
// required; every other field has a default.
type Config struct {
	// URL names the server: "imaps://host[:port]" for implicit TLS (port
	// 993 by default), or "imap://host[:port]" (port 143), which requires
	// STARTTLS unless host is a loopback address ("localhost", 127.0.0.0/8,
	// ::1); there the connection stays in plain text, as the embedded
	// server has no certificate. The URL carries neither credentials nor a
	// path: see Username, Password and Mailbox.
	URL string
	// Username and Password log in. The password is never logged.
	Username string
	Password string
	// Auth chooses the login method: "plain" (AUTHENTICATE PLAIN), "login"
	// (the LOGIN command), or "" for PLAIN where the server offers it and
	// LOGIN otherwise.
	Auth string
	// OAuth2, when set, logs in with an access token instead of Password:
	// AUTHENTICATE OAUTHBEARER where the server offers it, else XOAUTH2.
	// A token the server refuses is refreshed and tried once more.
	OAuth2 oauth.Bearer

	// Mailbox is the folder to watch; default "INBOX".
	Mailbox string
	// MoveTo, if set, is a folder that processed mail is moved to (after
	// \Seen is set). It is created if it does not exist. Servers without
	// MOVE get COPY, STORE \Deleted and EXPUNGE (UID EXPUNGE with UIDPLUS;
	// without it, a plain EXPUNGE, which also removes any other message
	// flagged \Deleted in the mailbox).
	MoveTo string

	// IdleRefresh is how long the watcher stays in IDLE before it leaves
	// it, sends NOOP to check the connection, and looks for unseen mail
	// again; default 4 minutes.
	IdleRefresh time.Duration
	// PollInterval is how often the mailbox is searched for unseen mail
	// where IDLE is not used; default 1 minute.
	PollInterval time.Duration
	// DisableIdle polls even when the server offers IDLE, for servers or
	// networks where IDLE does not work well.
	DisableIdle bool

	// MinBackoff and MaxBackoff bound the waits between reconnections and
	// between retries of a message whose handler failed: the wait starts
	// at MinBackoff and doubles up to MaxBackoff, with jitter. Defaults 1
	// second and 5 minutes.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// CommandTimeout bounds the wait for the answer to one command (and the
	// dial); a command that gets no answer ends the connection. Fetching a
	// batch of message bodies may take several times as long. Default 1
	// minute.
	CommandTimeout time.Duration

	// BatchSize is how many messages one FETCH asks for; default 50.
	BatchSize int
	// MaxBatchBytes bounds the total size of the bodies one FETCH asks
	// for (a single larger message is still fetched alone); default 32 MiB.
	MaxBatchBytes int64
	// MaxMessageBytes, if positive, is the size above which a message is
	// not fetched whole: the Handler gets its header alone (HeaderOnly),
	// which is enough to refuse it and tell its sender, and a huge message
	// costs neither the time nor the memory of its body.
	MaxMessageBytes int64

	// TLSConfig is used for imaps:// and STARTTLS; nil means the system's
	// roots and the URL's host name. It is cloned, never modified.
	TLSConfig *tls.Config
	// Logger receives what the watcher does; default slog.Default().
	Logger *slog.Logger
	// Triage, if set, is given the routing fields of each new message's
	// header (From, To, Cc, Delivered-To, X-Original-To, as the server
	// returns BODY[HEADER.FIELDS]) and says whether it may be mail for a
	// game. Mail it refuses is set aside: handed over only once no other
	// mail waits, and left out of the watermark.
	Triage func(header []byte) bool
	// Barrier, if set, returns the next moment (wall clock) by which the
	// handler needs every earlier message: the next deadline that the
	// order of mail decides; zero for none. Mail that arrived after it
	// is handed over only once the mail that arrived before it has been,
	// and the watermark has passed it.
	// It is called while the handler works too, and should not wait for
	// it: mail picked then is handed over only if Barrier returns the
	// same once the handler is done.
	Barrier func() time.Time
	// OnWatermark, if set, is called on Run's goroutine each time the
	// watermark rises: every message that reached the mailbox before it,
	// set-aside mail apart, has been handled. Within a live connection it
	// follows the mail closely; the watcher searches again ArrivalSlack
	// and a second after each Barrier to move it past the barrier.
	OnWatermark func(time.Time)
	// ArrivalSlack is how long after its INTERNALDATE a message may take to
	// show in a search: delivery, and the difference between the server's
	// clock and the host's; default 2 seconds.
	ArrivalSlack time.Duration
	// FloodSize is how many set-aside messages make a flood, which is
	// logged (and reported to OnFlood) once rather than message by message;
	// default 100. A flood ends once its mail is handled and none has come
	// for FloodQuiet (default 1 minute).
	FloodSize  int
	FloodQuiet time.Duration
	// OnFlood, if set, is called on Run's goroutine once a flood has ended.
	OnFlood func(Flood)
	// OnCaughtUp, if set, is called on Run's goroutine each time every
	// unseen message has been offered to the handler and the watcher is
	// about to wait for new mail. It must not block long.
	OnCaughtUp func(Stats)
}

// Defaults of Config.
const (
	DefaultMailbox        = "INBOX"
	DefaultIdleRefresh    = 4 * time.Minute
	DefaultPollInterval   = time.Minute
	DefaultMinBackoff     = time.Second
	DefaultMaxBackoff     = 5 * time.Minute
	DefaultCommandTimeout = time.Minute
	DefaultBatchSize      = 50
	DefaultMaxBatchBytes  = 32 << 20
	DefaultArrivalSlack   = 2 * time.Second
	DefaultFloodSize      = 100
	DefaultFloodQuiet     = time.Minute
)

func (c *Config) setDefaults() {
	if c.Mailbox == "" {
		c.Mailbox = DefaultMailbox
	}
	if c.IdleRefresh <= 0 {
		c.IdleRefresh = DefaultIdleRefresh
	}
	if c.PollInterval <= 0 {
		c.PollInterval = DefaultPollInterval
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
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.ArrivalSlack <= 0 {
		c.ArrivalSlack = DefaultArrivalSlack
	}
	if c.FloodSize <= 0 {
		c.FloodSize = DefaultFloodSize
	}
	if c.FloodQuiet <= 0 {
		c.FloodQuiet = DefaultFloodQuiet
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// parseURL applies the connection policy of package mailurl.
func parseURL(raw string) (mailurl.Endpoint, error) {
	ep, err := mailurl.Parse(raw, mailurl.IMAP)
	if err != nil {
		return ep, fmt.Errorf("watcher: %w", err)
	}
	return ep, nil
}

// validate checks what New cannot fix with a default.
func (c *Config) validate() error {
	if c.Username == "" {
		return errors.New("watcher: Username is required")
	}
	if c.Password == "" && c.OAuth2 == nil {
		return errors.New("watcher: Password (or OAuth2) is required")
	}
	switch strings.ToLower(c.Auth) {
	case "", "plain", "login":
	default:
		return fmt.Errorf("watcher: Auth %q: want \"plain\", \"login\" or \"\"", c.Auth)
	}
	if c.MoveTo != "" && strings.EqualFold(c.MoveTo, c.Mailbox) {
		return fmt.Errorf("watcher: MoveTo %q is the watched mailbox", c.MoveTo)
	}
	return nil
}
