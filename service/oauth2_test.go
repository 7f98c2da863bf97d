package service_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	netmail "net/mail"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
)

// TestOAuth2HostToldOfARevocation runs a host whose IMAP and SMTP accounts
// log in with OAuth2. When the provider revokes its authorisation the
// referee's notice waits in the outbox, since SMTP uses the same
// authorisation; once the token file is written again the running host
// sends it, and the game is as it was.
func TestOAuth2HostToldOfARevocation(t *testing.T) {
	p := oauthtest.Start(t)
	var mu sync.Mutex
	var toReferee []mailserver.Delivery
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org",
		Users: map[string]string{"host": "unused", "referee": "pw"}, OAuthTokens: p.Check,
		OnMessage: func(m mailserver.Delivery) {
			mu.Lock()
			defer mu.Unlock()
			if m.Delivered && strings.EqualFold(m.To[0], "referee@example.org") {
				toReferee = append(toReferee, m)
			}
		}})
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees = "host@example.org", []string{"referee@example.org"}
	cfg.Database = filepath.Join(dir, "games.db")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Auth = "imap://"+srv.IMAPAddr(), "host@example.org", config.AuthOAuth2
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Auth = "smtp://"+srv.SMTPAddr(), "host@example.org", config.AuthOAuth2
	cfg.OAuth2 = config.OAuth2{Provider: "custom", ClientID: oauthtest.ClientID, TokenURL: p.TokenURL(),
		Scopes: []string{"mail"}, TokenFile: p.WriteTokenFile(t, dir, "", time.Time{})}
	svc, err := service.Start(t.Context(), &cfg, service.Config{Clock: host.Clock{Speed: 1, Anchor: time.Now()},
		Log: testlog.New(t, slog.LevelInfo)})
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

	mail := func(to, id, body string) []byte {
		return []byte(fmt.Sprintf("From: Referee <referee@example.org>\r\nTo: %s\r\nSubject: x\r\n"+
			"Message-ID: <%s@example.org>\r\nDate: %s\r\n\r\n%s\r\n", to, id, time.Now().Format(time.RFC1123Z), body))
	}
	answers := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(toReferee)
	}
	replyTo := func(i int) string {
		t.Helper()
		mu.Lock()
		m, err := netmail.ReadMessage(bytes.NewReader(toReferee[i].Data))
		mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		a, err := netmail.ParseAddress(m.Header.Get("Reply-To"))
		if err != nil {
			t.Fatal(err)
		}
		return a.Address
	}
	// A game under way: NEW GAME and its confirmation, read and answered
	// with OAuth2 logins.
	if err := srv.Deliver("referee@example.org", "host@example.org", mail("host@example.org", "new", "NEW GAME club")); err != nil {
		t.Fatal(err)
	}
	mailtest.WaitFor(t, "the answer to NEW GAME", 30*time.Second, 20*time.Millisecond, func() bool { return answers() >= 1 })
	confirm := replyTo(0)
	if err := srv.Deliver("referee@example.org", confirm, mail(confirm, "yes", "")); err != nil {
		t.Fatal(err)
	}
	mailtest.WaitFor(t, "the answer to the confirmation", 30*time.Second, 20*time.Millisecond, func() bool { return answers() >= 2 })
	channel := replyTo(1)

	// The provider withdraws the authorisation: the access tokens stop
	// working and the refresh token is refused.
	p.RefuseAll()
	p.Revoke()
	// The sender may still be in the session it logged in to for the
	// answers above, before the withdrawal, and send an answer in it.
	// Once that session ends, sending needs a login, which is refused.
	sent := answers()
	for i := 0; p.Refused() == 0; i++ {
		if i == 3 {
			t.Fatal("no refused refresh after three messages")
		}
		id := fmt.Sprintf("status%d", i)
		if err := srv.Deliver("referee@example.org", channel, mail(channel, id, "STATUS")); err != nil {
			t.Fatal(err)
		}
		mailtest.WaitFor(t, "a refused refresh, or the answer in the session logged in before", 30*time.Second, 20*time.Millisecond,
			func() bool { return p.Refused() >= 1 || answers() > sent })
		if p.Refused() == 0 {
			sent = answers()
		}
	}
	if answers() != sent {
		t.Fatal("mail went out with a withdrawn authorisation")
	}

	// A new authorisation writes the token file; the running host
	// carries on and the referee hears what happened.
	p.Reauthorise()
	p.WriteTokenFile(t, dir, "", time.Time{})
	told := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range toReferee {
			text := strings.Join(strings.Fields(strings.ReplaceAll(string(m.Data), "=\r\n", "")), " ")
			if strings.Contains(text, "no longer accepts the host's authorisation (OAuth2)") {
				return true
			}
		}
		return false
	}
	mailtest.WaitFor(t, "the referee's notice of the revocation", 60*time.Second, 50*time.Millisecond, told)
	mailtest.WaitFor(t, "the answer to STATUS", 60*time.Second, 50*time.Millisecond, func() bool { return answers() >= 4 })
	if _, ok := svc.Host().Game("club"); !ok {
		t.Error("the game is gone")
	}
}

// TestOAuth2HostRestores: a host whose mailbox logs in with OAuth2 alone
// (no password works) checks its database against the mailbox when serve
// starts, and restores from the mailbox, with the same authorisation as
// its watcher: before, both tried a password, and serve waited for a
// mailbox it could never read.
func TestOAuth2HostRestores(t *testing.T) {
	p := oauthtest.Start(t)
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org",
		Users: map[string]string{"host": "unused"}, AutoCreateUsers: true, OAuthTokens: p.Check})
	dir := t.TempDir()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees = "host@example.org", []string{"referee@example.org"}
	cfg.Database, cfg.KeyFile = filepath.Join(dir, "games.db"), filepath.Join(dir, "mafiamail.key")
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Auth = "imap://"+srv.IMAPAddr(), "host@example.org", config.AuthOAuth2
	cfg.SMTP.URL, cfg.SMTP.Username, cfg.SMTP.Auth = "smtp://"+srv.SMTPAddr(), "host@example.org", config.AuthOAuth2
	cfg.OAuth2 = config.OAuth2{Provider: "custom", ClientID: oauthtest.ClientID, TokenURL: p.TokenURL(),
		Scopes: []string{"mail"}, TokenFile: p.WriteTokenFile(t, dir, "", time.Time{})}
	if err := hostkey.Generate().Write(cfg.KeyFile); err != nil {
		t.Fatal(err)
	}
	raw := "From: Referee <referee@example.org>\r\nTo: host@example.org\r\nSubject: new\r\n" +
		"Message-ID: <new@example.org>\r\nDate: " + time.Now().Format(time.RFC1123Z) + "\r\n\r\nNEW GAME friday\r\n"
	if err := srv.DeliverAt("referee@example.org", "host@example.org", []byte(raw), time.Now()); err != nil {
		t.Fatal(err)
	}
	log := testlog.New(t, slog.LevelInfo)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := service.CheckCurrent(ctx, &cfg, log); err != nil {
		t.Fatalf("serve's check of its database: %v", err)
	}
	rep, err := service.Restore(ctx, &cfg, service.RestoreConfig{Log: log})
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	if rep.Messages != 1 || rep.Replayed != 1 {
		t.Errorf("restore read %d messages and replayed %d; want the NEW GAME read and replayed", rep.Messages, rep.Replayed)
	}
}
