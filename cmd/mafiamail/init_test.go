package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
)

// init, run by a script against the embedded mail servers: the answers
// come from flags and from standard input; it signs in, proves
// plus-addressing with a real message (which it then deletes), learns the
// server's authserv-id from that message, and writes a configuration that
// check accepts and that serve runs a game with.
func TestInitWritesAConfigurationServeRuns(t *testing.T) {
	var mu sync.Mutex
	var toReferee int
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", AuthResults: true, AutoCreateUsers: true,
		AutoCreatePassword: "refpw", Users: map[string]string{"host": "s3cret \"pw\""},
		OnMessage: func(m mailserver.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			for _, to := range m.To {
				if to == "ref@example.org" && m.Delivered {
					toReferee++
				}
			}
		}})
	dir := t.TempDir()
	out := filepath.Join(dir, "mafiamail.toml")
	db := filepath.Join(dir, "games.db")
	// The address and the referee come as typed answers, the password as
	// the next line: no terminal, so it is read as a line.
	stdin := strings.NewReader("host@example.org\nref@example.org\ns3cret \"pw\"\n")
	var stdout, stderr bytes.Buffer
	code := run([]string{"init", "--imap", "imap://" + srv.IMAPAddr(), "--smtp", "smtp://" + srv.SMTPAddr(),
		"--imap-username", "host", "--smtp-username", "host", "--database", db, "--out", out, "--wait", "30s"},
		stdin, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("init said:\n%s", stdout.String())
	for _, want := range []string{"plus-addressing works", `Authentication-Results as "example.org"`, "Wrote " + out} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("init did not say %q", want)
		}
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the configuration file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	// The test message is gone: the host would read it as mail to it.
	if n := inboxCount(t, srv, "host", `s3cret "pw"`); n != 0 {
		t.Errorf("the host's mailbox holds %d messages after init, want none", n)
	}
	cfg, err := config.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Address != "host@example.org" || len(cfg.Referees) != 1 || cfg.Referees[0] != "ref@example.org" ||
		cfg.Auth.AuthservID != "example.org" || cfg.IMAP.Password != `s3cret "pw"` || cfg.Database != db {
		t.Fatalf("the configuration read back: %+v", cfg)
	}
	// The host key sits beside the configuration, readable by its owner
	// alone, and the configuration finds it there.
	if cfg.KeyFile != filepath.Join(dir, "mafiamail.key") {
		t.Errorf("the configuration's key file is %q", cfg.KeyFile)
	}
	if fi, err := os.Stat(cfg.KeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v; want mode 0600", err)
	}
	checkAndServe(t, srv, out, cfg, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return toReferee > 0
	})
}

// checkAndServe runs check on the configuration file out, then serve with
// cfg, and sends NEW GAME from the referee through srv as a mail client
// would: the game must be created, and answered must hold.
func checkAndServe(t *testing.T, srv *mailserver.Server, out string, cfg *config.Config, answered func() bool) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "--config", out}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	svc, err := service.Start(t.Context(), cfg, service.Config{Clock: host.Clock{Speed: 1, Anchor: time.Now()},
		Log: testlog.New(t, slog.LevelWarn)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	defer func() {
		cancel()
		<-done
		svc.Close()
	}()
	c, err := smtp.Dial(srv.SMTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Auth(sasl.NewPlainClient("", "ref", "refpw")); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMail("ref@example.org", []string{"host@example.org"}, strings.NewReader(
		"From: ref@example.org\r\nTo: host@example.org\r\nSubject: new\r\nMessage-ID: <new@example.org>\r\n\r\nNEW GAME friday\r\n")); err != nil {
		t.Fatal(err)
	}
	c.Quit()
	mailtest.WaitFor(t, "the game and its answer", 30*time.Second, 20*time.Millisecond, func() bool {
		_, ok := svc.Host().Game("friday")
		return ok && answered()
	})
}

// Without a terminal and without an answer, init says which flag to give.
func TestInitNeedsItsAnswers(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"init", "--out", filepath.Join(t.TempDir(), "x.toml")}, strings.NewReader(""), &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "give it with its flag") {
		t.Errorf("init with no answers: exit %d, %s", code, stderr.String())
	}
}

func inboxCount(t *testing.T, srv *mailserver.Server, user, pass string) uint32 {
	t.Helper()
	c, err := imapclient.DialInsecure(srv.IMAPAddr(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Login(user, pass).Wait(); err != nil {
		t.Fatal(err)
	}
	sel, err := c.Select("INBOX", nil).Wait()
	if err != nil {
		t.Fatal(err)
	}
	return sel.NumMessages
}

// init for a mailbox that takes only OAuth2, against the embedded servers
// and a local OAuth2 provider: it runs the device authorisation, keeps the
// token in a file of its own, signs in with it to test the mailbox, and
// writes a configuration that check accepts and serve runs with.
func TestInitAuthorisesWithOAuth2(t *testing.T) {
	p := oauthtest.Start(t)
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", AuthResults: true, AutoCreateUsers: true,
		AutoCreatePassword: "refpw", OAuthTokens: p.Check, Users: map[string]string{"host": "no password works"}})
	dir := t.TempDir()
	out, tokenFile := filepath.Join(dir, "mafiamail.toml"), filepath.Join(dir, "token.json")
	p.Approve() // the user enters the code as soon as it is shown
	var stdout, stderr bytes.Buffer
	code := run([]string{"init", "--address", "host@example.org", "--referee", "ref@example.org",
		"--imap", "imap://" + srv.IMAPAddr(), "--smtp", "smtp://" + srv.SMTPAddr(),
		"--sign-in", "oauth2", "--oauth-provider", "custom", "--oauth-client-id", oauthtest.ClientID,
		"--oauth-token-url", p.TokenURL(), "--oauth-device-url", p.DeviceAuthURL(), "--oauth-scopes", "mail",
		"--token-file", tokenFile, "--database", filepath.Join(dir, "games.db"), "--out", out, "--wait", "30s"},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	t.Logf("init said:\n%s", stdout.String())
	for _, want := range []string{"enter the code " + oauthtest.UserCode, "Authorised", "plus-addressing works"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("init did not say %q", want)
		}
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the token file: %v; want mode 0600", err)
	}
	cfg, err := config.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IMAP.Auth != config.AuthOAuth2 || cfg.SMTP.Auth != config.AuthOAuth2 || cfg.IMAP.Password != "" ||
		cfg.OAuth2.TokenFile != tokenFile || cfg.OAuth2.ClientID != oauthtest.ClientID {
		t.Fatalf("the configuration read back: %+v", cfg)
	}
	checkAndServe(t, srv, out, cfg, func() bool { return true })
}
