package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/internal/cli"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	mailoauth "github.com/mafiamail/mafiamail/mail/oauth"
	"github.com/mafiamail/mafiamail/mail/provider"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
)

// initOptions are init's answers, each from its flag or asked for.
type initOptions struct {
	address, referees         string
	imapURL, smtpURL          string
	imapUser, smtpUser        string
	passwordEnv               string
	database, out, autoconfig string
	force                     bool
	wait                      time.Duration
	// OAuth2 (see initOAuth2).
	signIn, oauthProvider, clientID, clientSecretEnv string
	tokenURL, deviceURL, scopes, tokenFile           string
}

// cmdInit sets up a host for a mailbox: it finds the servers from the
// address, signs in, proves with a real message that plus-addressing
// works and learns the receiving server's authserv-id from it, and writes
// a configuration that check accepts. Every question has a flag, so that
// a script can run it without a terminal.
func cmdInit(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := cli.Flags("init", stderr)
	var o initOptions
	fs.StringVar(&o.address, "address", "", "the host's own mailbox (a mailbox of its own: the host reads everything in it)")
	fs.StringVar(&o.referees, "referee", "", "the referees' addresses, comma-separated: who may create games")
	fs.StringVar(&o.imapURL, "imap", "", "IMAP server URL (imaps://host:993); found from the address when left out")
	fs.StringVar(&o.smtpURL, "smtp", "", "SMTP server URL (smtps://host:465 or smtp://host:587); found from the address when left out")
	fs.StringVar(&o.imapUser, "imap-username", "", "IMAP user name (default: as the provider says, usually the address)")
	fs.StringVar(&o.smtpUser, "smtp-username", "", "SMTP user name (default: as the provider says, usually the address)")
	fs.StringVar(&o.passwordEnv, "password-env", "", "read the password from this environment variable, and have the configuration do the same")
	fs.StringVar(&o.database, "database", "games.db", "the database file the configuration names")
	fs.StringVar(&o.out, "out", "mafiamail.toml", "the configuration file to write")
	fs.StringVar(&o.autoconfig, "autoconfig", "", "an autoconfig file URL to read the servers from, before the usual places")
	fs.BoolVar(&o.force, "force", false, "overwrite the configuration file if it exists")
	fs.DurationVar(&o.wait, "wait", 2*time.Minute, "how long to wait for the test message to arrive")
	fs.StringVar(&o.signIn, "sign-in", "", "password or oauth2 (default: as the provider wants)")
	fs.StringVar(&o.oauthProvider, "oauth-provider", "", "with OAuth2: google, microsoft or custom (default: as the provider is)")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "with OAuth2: the client ID of the app you registered with the provider")
	fs.StringVar(&o.clientSecretEnv, "oauth-client-secret-env", "", "with OAuth2: the environment variable holding the app's client secret, if it has one")
	fs.StringVar(&o.tokenURL, "oauth-token-url", "", "with OAuth2 and a custom provider: its token endpoint")
	fs.StringVar(&o.deviceURL, "oauth-device-url", "", "with OAuth2 and a custom provider: its device authorisation endpoint")
	fs.StringVar(&o.scopes, "oauth-scopes", "", "with OAuth2 and a custom provider: the scopes, comma-separated")
	fs.StringVar(&o.tokenFile, "token-file", "", "with OAuth2: where the authorisation is kept (default: mafiamail-token.json beside --out)")
	if err := parseFlags(fs, args); err != nil {
		return cli.Usage(err)
	}
	if fs.NArg() > 0 {
		return cli.Usagef("init takes no arguments, only flags")
	}
	if _, err := os.Stat(o.out); err == nil && !o.force {
		return fmt.Errorf("%s exists already: give --out another file, or --force to replace it", o.out)
	}
	in := newAsker(stdin, stdout)
	return runInit(ctx, o, in, stdout)
}

func runInit(ctx context.Context, o initOptions, in *asker, w io.Writer) error {
	var err error
	if o.address, err = in.ask(o.address, "The host's own address (a mailbox for the host alone, e.g. mafia@example.org): "); err != nil {
		return err
	}
	if o.referees, err = in.ask(o.referees, "Your address, as the referee who creates games (several: comma-separated): "); err != nil {
		return err
	}
	_, domain, _ := strings.Cut(o.address, "@")
	settings := provider.Settings{Name: domain, IMAP: o.imapURL, SMTP: o.smtpURL, IMAPUsername: o.address, SMTPUsername: o.address,
		SignIn: provider.Password, Source: "given"}
	if o.imapURL == "" || o.smtpURL == "" {
		l := provider.Lookup{}
		if o.autoconfig != "" {
			l.URLs = func(domain, address string) []string {
				return append([]string{o.autoconfig}, provider.AutoconfigURLs(domain, address)...)
			}
		}
		found, err := l.Find(ctx, o.address)
		switch {
		case err == nil:
			fmt.Fprintf(w, "Found the servers of %s (%s): IMAP %s, SMTP %s\n", found.Name, found.Source, found.IMAP, found.SMTP)
			if o.imapURL != "" {
				found.IMAP = o.imapURL
			}
			if o.smtpURL != "" {
				found.SMTP = o.smtpURL
			}
			settings = found
		case errors.Is(err, provider.ErrNotFound):
			fmt.Fprintf(w, "The servers could not be found: %v\n", err)
			if settings.IMAP, err = in.ask(o.imapURL, "IMAP server (imaps://host:993): "); err != nil {
				return err
			}
			if settings.SMTP, err = in.ask(o.smtpURL, "SMTP server (smtps://host:465 or smtp://host:587): "); err != nil {
				return err
			}
		default:
			return err
		}
	}
	if o.imapUser != "" {
		settings.IMAPUsername = o.imapUser
	}
	if o.smtpUser != "" {
		settings.SMTPUsername = o.smtpUser
	}
	if o.signIn != "" {
		if o.signIn != provider.Password && o.signIn != provider.OAuth2 {
			return cli.Usagef("--sign-in is password or oauth2, not %q", o.signIn)
		}
		settings.SignIn = o.signIn
	}
	oauth := settings.SignIn == provider.OAuth2
	var password string
	switch {
	case oauth:
		fmt.Fprintf(w, "%s takes no passwords from programs: the host signs in with OAuth2.\n", settings.Name)
	case settings.SignIn == provider.AppPassword:
		fmt.Fprintf(w, "%s wants an app password for programs, not your own: make one at %s\n", settings.Name, settings.AppPasswordHelp)
		fallthrough
	default:
		if password, err = in.password(o.passwordEnv, "Password for "+settings.IMAPUsername+" (not shown): "); err != nil {
			return err
		}
	}

	cfg := config.Defaults()
	cfg.Address, cfg.Database = strings.ToLower(strings.TrimSpace(o.address)), o.database
	for _, r := range strings.Split(o.referees, ",") {
		if r = strings.TrimSpace(r); r != "" {
			cfg.Referees = append(cfg.Referees, r)
		}
	}
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = settings.IMAP, settings.IMAPUsername, password
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Password = settings.SMTP, settings.SMTPUsername, password
	if p, ok := sender.KnownProvider(cfg.SMTP.URL); ok {
		cfg.SMTP.RecipientsPerDay, cfg.SMTP.MessagesPerMinute = p.RecipientsPerDay, p.MessagesPerMinute
	}
	if oauth {
		if err := initOAuth2(o, settings, &cfg, in, w); err != nil {
			return err
		}
	}
	// The configuration is read back as serve will read it, presets and
	// all, before anything is tried with it.
	lookupEnv := func(name string) (string, bool) {
		if name == o.passwordEnv && password != "" {
			return password, true
		}
		return os.LookupEnv(name)
	}
	read, err := config.Parse([]byte(configText(&cfg, settings, o.passwordEnv)), o.out, lookupEnv)
	if err != nil {
		return fmt.Errorf("the configuration made from the answers is not accepted: %w", err)
	}
	quiet := cli.NewLogger(io.Discard, "text", "error")
	tokens, err := service.TokenSource(read, nil, quiet)
	if err != nil {
		return err
	}
	if oauth {
		fmt.Fprintln(w, "Authorise the host: sign in to the host's mailbox in a browser, on any device.")
		err := tokens.Authorise(ctx, func(dc mailoauth.DeviceCode) {
			fmt.Fprintf(w, "Open %s and enter the code %s (before %s). Waiting…\n", dc.URL, dc.Code, dc.Expires.Format("15:04 MST"))
		})
		if err != nil {
			return fmt.Errorf("the authorisation did not complete: %w", err)
		}
		fmt.Fprintf(w, "Authorised; the authorisation is kept in %s (readable by you alone).\n", cfg.OAuth2.TokenFile)
	}
	if err := checkAccounts(ctx, read, w); err != nil {
		return fmt.Errorf("signing in failed, nothing was written: %w", err)
	}
	probe, err := roundTrip(ctx, read, tokens, o.wait)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "A test message to %s arrived in %s: plus-addressing works.\n", probe.to, probe.took.Round(time.Millisecond))
	if probe.authservID != "" {
		cfg.Auth.AuthservID = probe.authservID
		fmt.Fprintf(w, "The receiving server writes Authentication-Results as %q: the host will trust it.\n", probe.authservID)
	} else {
		fmt.Fprintln(w, "The message carried no Authentication-Results the host could trust: sign-ups and new games will be confirmed by a reply.")
	}
	text := configText(&cfg, settings, o.passwordEnv)
	if err := os.WriteFile(o.out, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	if _, err := config.Parse([]byte(text), o.out, lookupEnv); err != nil {
		return fmt.Errorf("the configuration written to %s is not accepted: %w", o.out, err)
	}
	keyFile := config.KeyPath(o.out)
	if _, created, err := hostkey.LoadOrCreate(keyFile); err != nil {
		return err
	} else if created {
		fmt.Fprintf(w, "Wrote the host key %s (readable by you alone): back it up with the configuration.\n", keyFile)
	}
	fmt.Fprintf(w, "Wrote %s (readable by you alone). Next: mafiamail serve --config %s, then send NEW GAME name to %s.\n",
		o.out, o.out, cfg.Address)
	return nil
}

// probeResult is what the test message showed.
type probeResult struct {
	to         string
	took       time.Duration
	authservID string
}

// roundTrip sends a message from the host's address to a plus-address of
// it and reads it back: it arrives only where plus-addressing works, and
// its topmost Authentication-Results names the receiving server.
func roundTrip(ctx context.Context, cfg *config.Config, tokens *mailoauth.Source, wait time.Duration) (probeResult, error) {
	local, domain, _ := strings.Cut(cfg.Address, "@")
	tag := make([]byte, 6)
	rand.Read(tag)
	to := local + "+setup" + hex.EncodeToString(tag) + "@" + domain
	id := "<setup." + hex.EncodeToString(tag) + "@" + domain + ">"
	raw := fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: mafiamail setup check\r\nMessage-ID: %s\r\nDate: %s\r\n"+
		"Auto-Submitted: auto-generated\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"+
		"This message checks that the mailbox takes plus-addresses. It is deleted once read.\r\n",
		cfg.Address, to, id, time.Now().Format(time.RFC1123Z))
	quiet := cli.NewLogger(io.Discard, "text", "error")
	start := time.Now()
	if err := sender.SendOne(ctx, sender.Config{URL: cfg.SMTP.URL, Username: cfg.SMTP.Username, Password: cfg.SMTP.Password,
		OAuth2:    service.Bearer(cfg.SMTP.Account, tokens),
		TLSConfig: service.TLSConfig(cfg.SMTP.Account), Helo: service.HeloName(cfg.Address), CommandTimeout: 30 * time.Second,
		Logger: quiet}, cfg.Address, []string{to}, []byte(raw)); err != nil {
		return probeResult{}, fmt.Errorf("send the test message to %s: %w", to, err)
	}
	found, err := watcher.FindAndRemove(ctx, watcher.Config{URL: cfg.IMAP.URL, Username: cfg.IMAP.Username,
		Password: cfg.IMAP.Password, OAuth2: service.Bearer(cfg.IMAP.Account, tokens), Mailbox: cfg.IMAP.Mailbox, TLSConfig: service.TLSConfig(cfg.IMAP.Account),
		CommandTimeout: 30 * time.Second, Logger: quiet}, id, wait)
	if errors.Is(err, watcher.ErrNotArrived) {
		return probeResult{}, fmt.Errorf("the test message to %s did not reach %s of %s within %v: the mailbox may not take "+
			"plus-addresses (mail to name+anything@domain), or a filter moved it; the host needs them", to, cfg.IMAP.Mailbox, cfg.IMAP.Username, wait)
	}
	if err != nil {
		return probeResult{}, fmt.Errorf("read the test message back: %w", err)
	}
	return probeResult{to: to, took: time.Since(start), authservID: trustedAuthserv(found.Header, cfg.Address)}, nil
}

// asker asks questions on a terminal or reads the answers from a script.
type asker struct {
	in  *bufio.Reader
	fd  int
	tty bool
	out io.Writer
}

func newAsker(stdin io.Reader, out io.Writer) *asker {
	a := &asker{in: bufio.NewReader(stdin), out: out, fd: -1}
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		a.fd, a.tty = int(f.Fd()), true
	}
	return a
}

// ask returns given when set, else the next line answered to question.
func (a *asker) ask(given, question string) (string, error) {
	if given != "" {
		return given, nil
	}
	fmt.Fprint(a.out, question)
	line, err := a.in.ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "" {
		if err != nil {
			return "", fmt.Errorf("no answer to %q: give it with its flag (see mafiamail init --help)", strings.TrimSpace(question))
		}
		return a.ask(given, question)
	}
	return line, nil
}

// password reads the password from the environment variable env, or asks
// for it without echo on a terminal (a script's line otherwise).
func (a *asker) password(env, question string) (string, error) {
	if env != "" {
		if p := os.Getenv(env); p != "" {
			return p, nil
		}
		return "", fmt.Errorf("--password-env %s: the variable is not set", env)
	}
	if !a.tty {
		return a.ask("", question)
	}
	fmt.Fprint(a.out, question)
	p, err := term.ReadPassword(a.fd)
	fmt.Fprintln(a.out)
	if err != nil {
		return "", fmt.Errorf("read the password: %w", err)
	}
	if len(p) == 0 {
		return "", errors.New("no password given")
	}
	return string(p), nil
}
