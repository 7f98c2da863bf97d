package sender_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/oauth"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/store"
)

// oauthSetup runs a provider and a mail server that checks its tokens,
// offering mechs and refusing unauthenticated mail, and returns a sender
// configuration that logs in with a Source whose token file holds
// access, expiring at expiry.
func oauthSetup(t *testing.T, mechs []string, access func(p *oauthtest.Provider) string, expiry time.Time, got *deliveries) (*oauthtest.Provider, sender.Config) {
	t.Helper()
	p := oauthtest.Start(t)
	srv := startServer(t, mailserver.Config{Users: map[string]string{"host": "unused-password"}, AutoCreateUsers: true,
		RequireAuth: true, OAuthTokens: p.Check, OAuthMechanisms: mechs, OnMessage: got.add})
	src, err := oauth.New(p.Config(p.WriteTokenFile(t, t.TempDir(), access(p), expiry)))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.OAuth2 = "host@example.org", src
	return p, cfg
}

func TestOAuth2SendsWithEachMechanism(t *testing.T) {
	for _, mech := range []string{oauth.XOAuth2, "OAUTHBEARER"} {
		t.Run(mech, func(t *testing.T) {
			var got deliveries
			p, cfg := oauthSetup(t, []string{mech}, (*oauthtest.Provider).Issue, time.Now().Add(time.Hour), &got)
			if _, err := sender.Check(context.Background(), cfg); err != nil {
				t.Fatalf("Check: %v", err)
			}
			ob := &memOutbox{}
			ob.add(outMsg(1, "player1@example.org"))
			runSender(t, cfg, ob)
			waitFor(t, "the message sent", func() bool { return ob.count(store.OutSent) == 1 })
			if all := got.all(); len(all) != 1 || all[0].Auth != "host" {
				t.Errorf("deliveries %+v, want one, authenticated as host", all)
			}
			if p.Refreshes() != 0 {
				t.Errorf("%d refreshes of a valid token", p.Refreshes())
			}
		})
	}
}

func TestOAuth2RefreshesAnExpiredToken(t *testing.T) {
	var got deliveries
	p, cfg := oauthSetup(t, nil, (*oauthtest.Provider).Issue, time.Now().Add(-time.Minute), &got)
	if _, err := sender.Check(context.Background(), cfg); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if p.Refreshes() != 1 {
		t.Errorf("%d refreshes, want 1", p.Refreshes())
	}
}

func TestOAuth2RefusedTokenIsRefreshedOnce(t *testing.T) {
	for _, mech := range []string{oauth.XOAuth2, "OAUTHBEARER"} {
		t.Run(mech, func(t *testing.T) {
			refused := func(p *oauthtest.Provider) string {
				a := p.Issue()
				p.Refuse(a)
				return a
			}
			var got deliveries
			p, cfg := oauthSetup(t, []string{mech}, refused, time.Now().Add(time.Hour), &got)
			if _, err := sender.Check(context.Background(), cfg); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if p.Refreshes() != 1 {
				t.Errorf("%d refreshes, want 1", p.Refreshes())
			}
		})
	}
}

func TestOAuth2RevokedIsTold(t *testing.T) {
	var got deliveries
	p, cfg := oauthSetup(t, nil, func(*oauthtest.Provider) string { return "" }, time.Time{}, &got)
	p.Revoke()
	_, err := sender.Check(context.Background(), cfg)
	if !oauth.IsRevoked(err) || !strings.Contains(err.Error(), oauth.RevokedMessage) {
		t.Fatalf("Check with a revoked token: %v, want the RevokedError", err)
	}
}

// While the refresh token is revoked mail waits; once the token file is
// written again by a new authorisation, the running sender sends it.
func TestOAuth2ResumesWhenTheTokenFileIsRewritten(t *testing.T) {
	var got deliveries
	p := oauthtest.Start(t)
	srv := startServer(t, mailserver.Config{Users: map[string]string{"host": "unused-password"}, AutoCreateUsers: true,
		RequireAuth: true, OAuthTokens: p.Check, OnMessage: got.add})
	dir := t.TempDir()
	src, err := oauth.New(p.Config(p.WriteTokenFile(t, dir, "", time.Time{})))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, srv.SMTPAddr())
	cfg.Username, cfg.OAuth2 = "host@example.org", src
	p.Revoke()
	ob := &memOutbox{}
	ob.add(outMsg(1, "player1@example.org"))
	s := runSender(t, cfg, ob)
	waitFor(t, "a failed connection", func() bool { return s.Stats().ConnectFailures > 0 })
	if ob.count(store.OutSent) != 0 || len(got.all()) != 0 {
		t.Fatal("mail went out with a revoked token")
	}
	p.Reauthorise()
	p.WriteTokenFile(t, dir, "", time.Time{})
	waitFor(t, "the message sent", func() bool { return ob.count(store.OutSent) == 1 })
}
