// Package oauthtest is a mail provider's OAuth2 token endpoint for tests:
// it refreshes access tokens, may rotate the refresh token, and can
// refuse an access token early or revoke the refresh token, as real
// providers do. Check is the embedded mail server's token hook
// (mailserver.Config.OAuthTokens).
package oauthtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mafiamail/mafiamail/mail/oauth"
)

// ClientID is the client the provider knows.
const ClientID = "mafiamail-test"

// Provider is a token endpoint and the access tokens it issued.
type Provider struct {
	srv *httptest.Server

	mu sync.Mutex
	// refresh is the refresh token it accepts; "" once revoked.
	refresh string
	access  map[string]bool
	serial  int
	// rotate issues a new refresh token with every refresh.
	rotate    bool
	expiresIn time.Duration
	refreshes int
	refused   int
	// approved is set once the user entered the device code.
	approved bool
}

// Start runs a provider for the length of the test. Its refresh token
// is "refresh-0"; each access token it issues lasts an hour.
func Start(t *testing.T) *Provider {
	p := &Provider{refresh: "refresh-0", access: map[string]bool{}, expiresIn: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("/token", p.token)
	mux.HandleFunc("/device", p.device)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// TokenURL is the token endpoint.
func (p *Provider) TokenURL() string { return p.srv.URL + "/token" }

// DeviceAuthURL is the device authorisation endpoint.
func (p *Provider) DeviceAuthURL() string { return p.srv.URL + "/device" }

// UserCode is the code the device authorisation shows.
const UserCode = "WDJB-MJHT"

// Approve is the user entering the device code: the next poll gets a new
// refresh token.
func (p *Provider) Approve() {
	p.mu.Lock()
	p.approved = true
	p.mu.Unlock()
}

// Rotate makes every refresh issue a new refresh token.
func (p *Provider) Rotate() {
	p.mu.Lock()
	p.rotate = true
	p.mu.Unlock()
}

// Issue returns a valid access token without a refresh, as the
// authorisation does.
func (p *Provider) Issue() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issueLocked()
}

func (p *Provider) issueLocked() string {
	p.serial++
	a := fmt.Sprintf("access-%d", p.serial)
	p.access[a] = true
	return a
}

// Refuse makes the servers refuse an access token before its expiry.
func (p *Provider) Refuse(access string) {
	p.mu.Lock()
	delete(p.access, access)
	p.mu.Unlock()
}

// RefuseAll makes the servers refuse every access token issued so far.
func (p *Provider) RefuseAll() {
	p.mu.Lock()
	clear(p.access)
	p.mu.Unlock()
}

// Revoke makes the refresh token invalid: refreshes get invalid_grant.
func (p *Provider) Revoke() {
	p.mu.Lock()
	p.refresh = ""
	p.mu.Unlock()
}

// Reauthorise issues a new refresh token, as a new authorisation does.
func (p *Provider) Reauthorise() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serial++
	p.refresh = fmt.Sprintf("refresh-%d", p.serial)
	return p.refresh
}

// RefreshToken is the refresh token the provider accepts now.
func (p *Provider) RefreshToken() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refresh
}

// Refreshes counts the refresh requests it answered with a token.
func (p *Provider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshes
}

// Refused counts the refresh requests it answered with invalid_grant.
func (p *Provider) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// Check says whether token is an access token the provider issued and
// still accepts.
func (p *Provider) Check(_, token string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.access[token]
}

// WriteTokenFile writes a token file in dir holding the provider's refresh
// token and access, expiring at expiry, and returns its path.
func (p *Provider) WriteTokenFile(t *testing.T, dir, access string, expiry time.Time) string {
	t.Helper()
	path := filepath.Join(dir, "token.json")
	tok := &oauth2.Token{AccessToken: access, TokenType: "Bearer", RefreshToken: p.RefreshToken(), Expiry: expiry}
	if err := oauth.WriteTokenFile(path, tok); err != nil {
		t.Fatal(err)
	}
	return path
}

// Config is a Source configuration for this provider and token file.
func (p *Provider) Config(tokenFile string) oauth.Config {
	return oauth.Config{ClientID: ClientID, TokenURL: p.TokenURL(), DeviceAuthURL: p.DeviceAuthURL(),
		TokenFile: tokenFile, Scopes: []string{"mail"}}
}

// device starts a device authorisation; the client then polls the token
// endpoint every second.
func (p *Provider) device(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"device_code": "device-1", "user_code": UserCode,
		"verification_uri": "https://login.example.org/device", "expires_in": 900, "interval": 1})
}

func (p *Provider) token(w http.ResponseWriter, r *http.Request) {
	if r.ParseForm() == nil && r.Form.Get("grant_type") == "urn:ietf:params:oauth:grant-type:device_code" {
		p.deviceToken(w)
		return
	}
	if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "refresh_token" {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refresh == "" || r.Form.Get("refresh_token") != p.refresh {
		p.refused++
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant", "error_description": "Token has been expired or revoked."})
		return
	}
	p.refreshes++
	out := map[string]any{"access_token": p.issueLocked(), "token_type": "Bearer", "expires_in": int(p.expiresIn.Seconds())}
	if p.rotate {
		p.serial++
		p.refresh = fmt.Sprintf("refresh-%d", p.serial)
		out["refresh_token"] = p.refresh
	}
	writeJSON(w, http.StatusOK, out)
}

func (p *Provider) deviceToken(w http.ResponseWriter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.approved {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "authorization_pending"})
		return
	}
	p.approved = false
	p.serial++
	p.refresh = fmt.Sprintf("refresh-%d", p.serial)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": p.issueLocked(), "token_type": "Bearer",
		"expires_in": int(p.expiresIn.Seconds()), "refresh_token": p.refresh})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
