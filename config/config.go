// Package config reads mafiamail's TOML configuration and checks it, with
// errors that name the key and the line a referee has to fix.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// Config is the whole configuration of a host.
type Config struct {
	// Address is the host's own address; games live on its plus-addresses.
	Address string `toml:"address"`
	// Referees may create games (NEW GAME).
	Referees []string `toml:"referees"`
	// Database is the SQLite file.
	Database string `toml:"database"`
	// KeyFile is the host key (internal/hostkey), from which the role
	// draws and the tokens derive: with the configuration it is what to
	// back up. Load makes it KeyPath of the configuration's path unless
	// the file names one.
	KeyFile string `toml:"key_file"`
	// Language is the host's default language: of its mail about no game,
	// and of every game whose referee sets none (SETUP language=fr). A tag
	// such as "de", or the language's name; English when unset.
	Language string `toml:"language"`
	// Speed makes game time run faster than real time (1 in production).
	Speed  float64 `toml:"speed"`
	Log    Log     `toml:"log"`
	IMAP   IMAP    `toml:"imap"`
	SMTP   SMTP    `toml:"smtp"`
	Auth   Auth    `toml:"auth"`
	Limits Limits  `toml:"limits"`
	OAuth2 OAuth2  `toml:"oauth2"`
}

// Log chooses the log format and level.
type Log struct {
	Format string `toml:"format"` // text or json
	Level  string `toml:"level"`  // debug, info, warn, error
}

// Account is a mail account: a URL and credentials.
type Account struct {
	URL         string `toml:"url"`
	Username    string `toml:"username"`
	Password    string `toml:"password"`
	PasswordEnv string `toml:"password_env"`
	// Auth is how the account logs in: "password" (the default) or
	// "oauth2", with an access token obtained as [oauth2] says.
	Auth string `toml:"auth"`
	// InsecureSkipVerify accepts any TLS certificate (local test servers only).
	InsecureSkipVerify bool `toml:"insecure_skip_verify"`
	// Timeout bounds the wait for the server's answer to one command; a
	// connection that stays silent longer is given up and dialed again.
	// Zero means the client's default (IMAP 1 minute, SMTP 2 minutes).
	Timeout Duration `toml:"timeout"`
}

// Duration is a length of time written as Go writes one: "90s", "4m",
// "1h30m".
type Duration time.Duration

// UnmarshalText reads a duration such as "90s".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"90s\" or \"4m\"", b)
	}
	*d = Duration(v)
	return nil
}

// IMAP is the account the host reads.
type IMAP struct {
	Account
	Mailbox string `toml:"mailbox"`
	// MoveTo, if set, is the folder processed mail is moved to.
	MoveTo string `toml:"move_to"`
	// SentFolder is the folder where the provider keeps a copy of the
	// mail the host sent (Gmail, Outlook.com and Fastmail do); restore
	// looks there for the mail a lost database had sent, so as not to send
	// it again. Empty means the folder marked \Sent (IMAP SPECIAL-USE).
	SentFolder string `toml:"sent_folder"`
	// IdleRefresh is how long the watcher waits in IDLE before it checks
	// the connection with NOOP: the longest a connection that hangs
	// without closing (a stalled network) can go unnoticed, plus Timeout.
	// Zero means 4 minutes.
	IdleRefresh Duration `toml:"idle_refresh"`
	// ArrivalSlack is how long after its arrival time (INTERNALDATE) a
	// message may take to show in the mailbox: delivery, and the
	// difference between the mail server's clock and this machine's. A
	// deadline is applied this long after it at the earliest, once the
	// mail that arrived before it is read (docs/arrival.md). Zero means 2
	// seconds.
	ArrivalSlack Duration `toml:"arrival_slack"`
}

// SMTP is the account the host sends through.
type SMTP struct {
	Account
	// Connections is how many SMTP connections the host sends over at
	// once when several messages are due (1 to 32). Zero means the
	// sender's default, 4.
	Connections int `toml:"connections"`
	// RecipientsPerDay is the most recipients the host sends to in any
	// rolling 24 hours of its clock (the speed setting scales it like
	// every other duration); every copy counts. Zero means the limit the
	// host learns from the provider's first refusal, if any. Set it to
	// the provider's figure (mafiamail check names it for the providers
	// it knows).
	RecipientsPerDay int `toml:"recipients_per_day"`
	// MessagesPerMinute is the most messages the host sends in any
	// minute of its clock; zero means no limit.
	MessagesPerMinute int `toml:"messages_per_minute"`
}

// maxSMTPConnections is the most connections the sender takes
// (sender.MaxConnections).
const maxSMTPConnections = 32

// Auth configures sender authentication.
type Auth struct {
	// AuthservID is the authserv-id of the receiving MTA whose
	// Authentication-Results are trusted; empty trusts none and relies on
	// tokens and From alone.
	AuthservID string `toml:"authserv_id"`
}

// Limits protect the host from floods and huge mail.
type Limits struct {
	MaxMessageBytes int64 `toml:"max_message_bytes"`
	MaxCommandLines int   `toml:"max_command_lines"`
	// PerSenderPerHour is how many messages one address may send an hour.
	PerSenderPerHour int `toml:"per_sender_per_hour"`
	// KeepRawMail is how long inbound mail is kept whole after its game
	// ended; then its header and outcome are kept, the body dropped.
	KeepRawMail Duration `toml:"keep_raw_mail"`
	// MaxPostBytes is the longest post relayed, counted after quotes and
	// signatures are taken away: every reader gets a copy of it.
	MaxPostBytes int `toml:"max_post_bytes"`
}

// Defaults are the values of keys a file leaves out.
func Defaults() Config {
	return Config{
		Database: "mafiamail.db",
		Speed:    1,
		Log:      Log{Format: "text", Level: "info"},
		IMAP:     IMAP{Mailbox: "INBOX"},
		Limits: Limits{MaxMessageBytes: 10 << 20, MaxCommandLines: 50, PerSenderPerHour: 120, MaxPostBytes: 32 << 10,
			KeepRawMail: Duration(30 * 24 * time.Hour)},
	}
}

// Error is a configuration error at a key.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key == "" {
		return fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
}

// Load reads and checks a configuration file. Passwords named by
// password_env are read from the environment.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read configuration: %w", err)
	}
	cfg, err := Parse(data, path, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if cfg.KeyFile == "" {
		cfg.KeyFile = KeyPath(path)
	}
	return cfg, nil
}

// KeyPath is where the host key of the configuration file at path lives
// unless it names another: beside it, with the extension .key
// (mafiamail.toml: mafiamail.key).
func KeyPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".key"
}

// Parse reads and checks a configuration; name is used in errors and
// lookupEnv resolves password_env.
func Parse(data []byte, name string, lookupEnv func(string) (string, bool)) (*Config, error) {
	cfg := Defaults()
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) && len(strict.Errors) > 0 {
			var errs []error
			for i := range strict.Errors {
				de := &strict.Errors[i]
				line, _ := de.Position()
				errs = append(errs, &Error{File: name, Line: line, Key: strings.Join(de.Key(), "."), Msg: "unknown key"})
			}
			return nil, errors.Join(errs...)
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, &Error{File: name, Line: line, Key: strings.Join(de.Key(), "."), Msg: de.Error()}
		}
		return nil, &Error{File: name, Msg: err.Error()}
	}
	lines := keyLines(data)
	bad := func(key, format string, args ...any) error {
		return &Error{File: name, Line: lines[key], Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	var errs []error
	if err := checkAddress(cfg.Address); err != nil {
		errs = append(errs, bad("address", "%v", err))
	}
	if len(cfg.Referees) == 0 {
		errs = append(errs, bad("referees", "name at least one referee address"))
	}
	for _, r := range cfg.Referees {
		if _, err := mail.ParseAddress(r); err != nil {
			errs = append(errs, bad("referees", "%q is not an address", r))
		}
	}
	if cfg.Database == "" {
		errs = append(errs, bad("database", "must name the SQLite file"))
	}
	if cfg.Language != "" {
		if tag, ok := lang.Match(cfg.Language); ok {
			cfg.Language = tag
		} else {
			errs = append(errs, bad("language", "must be one of %s, not %q", strings.Join(lang.Tags(), ", "), cfg.Language))
		}
	}
	if cfg.Speed < 1 || cfg.Speed > 1e6 {
		errs = append(errs, bad("speed", "must be between 1 and 1000000, not %v", cfg.Speed))
	}
	if cfg.Log.Format != "text" && cfg.Log.Format != "json" {
		errs = append(errs, bad("log.format", "must be text or json, not %q", cfg.Log.Format))
	}
	switch cfg.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, bad("log.level", "must be debug, info, warn or error, not %q", cfg.Log.Level))
	}
	for _, a := range []struct {
		section string
		acct    *Account
		schemes mailurl.Schemes
	}{{"imap", &cfg.IMAP.Account, mailurl.IMAP}, {"smtp", &cfg.SMTP.Account, mailurl.SMTP}} {
		if err := checkURL(a.acct.URL, a.schemes); err != nil {
			errs = append(errs, bad(a.section+".url", "%v", err))
		}
		errs = append(errs, checkAccountAuth(a.section, a.acct, bad)...)
		switch {
		case a.acct.Auth == AuthOAuth2:
			// Checked by checkAccountAuth: no password, a username.
		case a.acct.Password != "" && a.acct.PasswordEnv != "":
			errs = append(errs, bad(a.section+".password_env", "give password or password_env, not both"))
		case a.acct.PasswordEnv != "":
			v, ok := lookupEnv(a.acct.PasswordEnv)
			if !ok {
				errs = append(errs, bad(a.section+".password_env", "environment variable %s is not set", a.acct.PasswordEnv))
			}
			a.acct.Password = v
		}
		switch {
		case a.acct.Username != "", a.acct.Auth == AuthOAuth2:
		case a.section == "smtp" && a.acct.Password == "" && a.acct.PasswordEnv == "":
			// A mail server on the host's own machine or network (a local
			// Postfix) may relay for it without authentication.
		case a.section == "smtp":
			errs = append(errs, bad(a.section+".username", "is missing: a password is given"))
		default:
			errs = append(errs, bad(a.section+".username", "is missing"))
		}
		if t := time.Duration(a.acct.Timeout); t != 0 && (t < time.Second || t > time.Hour) {
			errs = append(errs, bad(a.section+".timeout", "must be between 1s and 1h, not %v", t))
		}
	}
	errs = append(errs, checkOAuth2(&cfg, lookupEnv, bad)...)
	if r := time.Duration(cfg.IMAP.IdleRefresh); r != 0 && (r < time.Second || r > 29*time.Minute) {
		// RFC 2177: a server may end an IDLE after 30 minutes.
		errs = append(errs, bad("imap.idle_refresh", "must be between 1s and 29m, not %v", r))
	}
	if d := time.Duration(cfg.IMAP.ArrivalSlack); d < 0 || d > 5*time.Minute {
		errs = append(errs, bad("imap.arrival_slack", "must be between 0 and 5m, not %v", d))
	}
	if n := cfg.SMTP.Connections; n < 0 || n > maxSMTPConnections {
		errs = append(errs, bad("smtp.connections", "must be between 1 and %d (0 or left out: 4), not %d", maxSMTPConnections, n))
	}
	if n := cfg.SMTP.RecipientsPerDay; n < 0 {
		errs = append(errs, bad("smtp.recipients_per_day", "must be 0 (learn it) or more, not %d", n))
	}
	if n := cfg.SMTP.MessagesPerMinute; n < 0 {
		errs = append(errs, bad("smtp.messages_per_minute", "must be 0 (no limit) or more, not %d", n))
	}
	if cfg.IMAP.Mailbox == "" {
		errs = append(errs, bad("imap.mailbox", "must name a mailbox"))
	}
	if cfg.Limits.MaxMessageBytes < 64<<10 {
		errs = append(errs, bad("limits.max_message_bytes", "must be at least 65536"))
	}
	if cfg.Limits.MaxCommandLines < 1 {
		errs = append(errs, bad("limits.max_command_lines", "must be at least 1"))
	}
	if cfg.Limits.PerSenderPerHour < 1 {
		errs = append(errs, bad("limits.per_sender_per_hour", "must be at least 1"))
	}
	if d := time.Duration(cfg.Limits.KeepRawMail); d < time.Hour {
		errs = append(errs, bad("limits.keep_raw_mail", "must be at least 1h, not %v", d))
	}
	if cfg.Limits.MaxPostBytes < 1024 || int64(cfg.Limits.MaxPostBytes) > cfg.Limits.MaxMessageBytes {
		errs = append(errs, bad("limits.max_post_bytes", "must be at least 1024 and at most limits.max_message_bytes"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &cfg, nil
}

// checkAddress checks the host address: a bare address with no plus tag,
// since the host makes its own tags.
func checkAddress(a string) error {
	if a == "" {
		return fmt.Errorf("is missing: the host's own address, e.g. mafia@example.org")
	}
	p, err := mail.ParseAddress(a)
	if err != nil || p.Address != a {
		return fmt.Errorf("%q is not a bare address", a)
	}
	local, _, _ := strings.Cut(a, "@")
	if strings.Contains(local, "+") {
		return fmt.Errorf("%q must not have a +tag: the host adds its own", a)
	}
	return nil
}

func checkURL(raw string, schemes mailurl.Schemes) error {
	if raw == "" {
		return fmt.Errorf("is missing (e.g. %s://mail.example.org)", schemes.TLS)
	}
	_, err := mailurl.Parse(raw, schemes)
	return err
}

var (
	tableLine = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)
	keyLine   = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`)
)

// keyLines maps each "table.key" of a TOML file to its line, so that value
// errors found after decoding can point at the line too.
func keyLines(data []byte) map[string]int {
	out := map[string]int{}
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		if m := tableLine.FindStringSubmatch(line); m != nil {
			table = m[1] + "."
			continue
		}
		if m := keyLine.FindStringSubmatch(line); m != nil {
			if _, seen := out[table+m[1]]; !seen {
				out[table+m[1]] = i + 1
			}
		}
	}
	return out
}
