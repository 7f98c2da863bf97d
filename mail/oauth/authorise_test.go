package oauth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// TestAuthoriseWritesTheTokenFile runs the device authorisation: the code
// is shown, the user approves, and the token file (mode 0600) holds a
// refresh token the Source then logs in with.
func TestAuthoriseWritesTheTokenFile(t *testing.T) {
	p := oauthtest.Start(t)
	path := filepath.Join(t.TempDir(), "token.json")
	s := newSource(t, p, path)
	var shown oauth.DeviceCode
	err := s.Authorise(context.Background(), func(c oauth.DeviceCode) {
		shown = c
		p.Approve()
	})
	if err != nil {
		t.Fatal(err)
	}
	if shown.Code != oauthtest.UserCode || shown.URL == "" {
		t.Errorf("shown %+v", shown)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi, err)
	}
	if tok, err := newSource(t, p, path).Token(context.Background()); err != nil || !p.Check("", tok) {
		t.Errorf("a Source on the new file: %q, %v", tok, err)
	}
}
