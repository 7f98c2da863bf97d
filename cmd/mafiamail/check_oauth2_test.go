package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// TestCheckWithOAuth2 logs in to both embedded servers with an access
// token from the token file, as serve would, and names a revoked
// authorisation plainly.
func TestCheckWithOAuth2(t *testing.T) {
	p := oauthtest.Start(t)
	srv, err := mailserver.Start(mailserver.Config{Users: map[string]string{"host": "unused"}, OAuthTokens: p.Check})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	tokenFile := p.WriteTokenFile(t, dir, "", time.Time{})
	path := filepath.Join(dir, "m.toml")
	cfg := fmt.Sprintf(`address = "host@example.org"
referees = ["ref@example.org"]
[imap]
url = "imap://%s"
username = "host@example.org"
auth = "oauth2"
[smtp]
url = "smtp://%s"
username = "host@example.org"
auth = "oauth2"
[oauth2]
provider = "custom"
token_url = %q
scopes = ["mail"]
client_id = %q
token_file = %q
`, srv.IMAPAddr(), srv.SMTPAddr(), p.TokenURL(), oauthtest.ClientID, tokenFile)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"check", "--config", path}, nil, &out, &errOut); code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if strings.Count(out.String(), ": ok, plain") != 2 || p.Refreshes() != 1 {
		t.Fatalf("check output (after %d refreshes, want 1 for both):\n%s", p.Refreshes(), out.String())
	}

	p.Revoke()
	out.Reset()
	if code := run([]string{"check", "--config", path}, nil, &out, &errOut); code != 1 {
		t.Fatalf("check with a revoked token: exit %d\n%s", code, out.String())
	}
	if strings.Count(out.String(), oauth.RevokedMessage) != 2 {
		t.Fatalf("check output does not say the authorisation is gone:\n%s", out.String())
	}
}
