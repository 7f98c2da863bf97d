package watcher_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/oauth"
	"github.com/mafiamail/mafiamail/mail/watcher"
)

// oauthSetup runs a provider and a mail server that checks its tokens,
// offering mechs, and returns a watcher configuration that logs in with a
// Source whose token file holds access, expiring at expiry.
func oauthSetup(t *testing.T, mechs []string, access func(p *oauthtest.Provider) string, expiry time.Time) (*oauthtest.Provider, *mailserver.Server, watcher.Config) {
	t.Helper()
	p := oauthtest.Start(t)
	srv := startServer(t, mailserver.Config{OAuthTokens: p.Check, OAuthMechanisms: mechs})
	src, err := oauth.New(p.Config(p.WriteTokenFile(t, t.TempDir(), access(p), expiry)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.Username, cfg.Password, cfg.OAuth2 = hostAddr, "", src
	return p, srv, cfg
}

func TestOAuth2LoginWithEachMechanism(t *testing.T) {
	for _, mech := range []string{oauth.XOAuth2, "OAUTHBEARER"} {
		t.Run(mech, func(t *testing.T) {
			p, srv, cfg := oauthSetup(t, []string{mech}, (*oauthtest.Provider).Issue, time.Now().Add(time.Hour))
			if _, err := watcher.Check(context.Background(), cfg); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if p.Refreshes() != 0 {
				t.Errorf("%d refreshes of a valid token", p.Refreshes())
			}
			// Run logs in the same way and reads the mailbox.
			rec := &recorder{}
			runWatcher(t, cfg, rec.handle)
			deliver(t, srv, 1)
			waitFor(t, "the message handled", func() bool { return rec.count() == 1 })
		})
	}
}

func TestOAuth2RefreshesAnExpiredToken(t *testing.T) {
	p, _, cfg := oauthSetup(t, nil, (*oauthtest.Provider).Issue, time.Now().Add(-time.Minute))
	if _, err := watcher.Check(context.Background(), cfg); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if p.Refreshes() != 1 {
		t.Errorf("%d refreshes, want 1", p.Refreshes())
	}
}

func TestOAuth2RefusedTokenIsRefreshedOnce(t *testing.T) {
	for _, mech := range []string{oauth.XOAuth2, "OAUTHBEARER"} {
		t.Run(mech, func(t *testing.T) {
			// The token has not expired, but the server refuses it.
			refused := func(p *oauthtest.Provider) string {
				a := p.Issue()
				p.Refuse(a)
				return a
			}
			p, _, cfg := oauthSetup(t, []string{mech}, refused, time.Now().Add(time.Hour))
			if _, err := watcher.Check(context.Background(), cfg); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if p.Refreshes() != 1 {
				t.Errorf("%d refreshes, want 1", p.Refreshes())
			}
		})
	}
}

func TestOAuth2RevokedIsTold(t *testing.T) {
	p, _, cfg := oauthSetup(t, nil, func(*oauthtest.Provider) string { return "" }, time.Time{})
	p.Revoke()
	_, err := watcher.Check(context.Background(), cfg)
	if !oauth.IsRevoked(err) || !strings.Contains(err.Error(), oauth.RevokedMessage) {
		t.Fatalf("Check with a revoked token: %v, want the RevokedError", err)
	}
}

// While the refresh token is revoked the watcher cannot log in and mail
// waits in the mailbox; once the token file is written again by a new
// authorisation, the running watcher logs in and reads it.
func TestOAuth2ResumesWhenTheTokenFileIsRewritten(t *testing.T) {
	p := oauthtest.Start(t)
	srv := startServer(t, mailserver.Config{OAuthTokens: p.Check})
	dir := t.TempDir()
	src, err := oauth.New(p.Config(p.WriteTokenFile(t, dir, "", time.Time{})))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, srv.IMAPAddr())
	cfg.Username, cfg.Password, cfg.OAuth2 = hostAddr, "", src
	p.Revoke()
	rec := &recorder{}
	runWatcher(t, cfg, rec.handle)
	deliver(t, srv, 1)
	waitFor(t, "a refused refresh", func() bool { return p.Refused() >= 1 })
	if rec.count() != 0 {
		t.Fatal("mail was read with a revoked token")
	}
	p.Reauthorise()
	p.WriteTokenFile(t, dir, "", time.Time{})
	waitFor(t, "the message handled", func() bool { return rec.count() == 1 })
}
