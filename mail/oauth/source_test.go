package oauth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/oauthtest"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

func newSource(t *testing.T, p *oauthtest.Provider, tokenFile string) *oauth.Source {
	t.Helper()
	s, err := oauth.New(p.Config(tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSourceRefreshesAnExpiredToken(t *testing.T) {
	p := oauthtest.Start(t)
	old := p.Issue()
	s := newSource(t, p, p.WriteTokenFile(t, t.TempDir(), old, time.Now().Add(-time.Minute)))
	tok, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if tok == old || !p.Check("", tok) || p.Refreshes() != 1 {
		t.Errorf("token %q after %d refreshes; want a new valid one after 1", tok, p.Refreshes())
	}
	// Valid for an hour: no further refresh.
	if again, _ := s.Token(context.Background()); again != tok || p.Refreshes() != 1 {
		t.Errorf("second Token %q after %d refreshes; want %q, still 1", again, p.Refreshes(), tok)
	}
}

func TestSourceInvalidateRefreshesOnce(t *testing.T) {
	p := oauthtest.Start(t)
	access := p.Issue()
	s := newSource(t, p, p.WriteTokenFile(t, t.TempDir(), access, time.Now().Add(time.Hour)))
	if tok, _ := s.Token(context.Background()); tok != access {
		t.Fatalf("Token = %q, want the stored %q", tok, access)
	}
	s.Invalidate(access)
	s.Invalidate(access)
	tok, err := s.Token(context.Background())
	if err != nil || tok == access || p.Refreshes() != 1 {
		t.Errorf("after Invalidate: %q, %v, %d refreshes; want a new token after 1", tok, err, p.Refreshes())
	}
	// A stale refusal does not throw the new token away.
	s.Invalidate(access)
	if again, _ := s.Token(context.Background()); again != tok {
		t.Errorf("a stale Invalidate replaced the token")
	}
}

func TestSourceKeepsARotatedRefreshToken(t *testing.T) {
	p := oauthtest.Start(t)
	p.Rotate()
	path := p.WriteTokenFile(t, t.TempDir(), "", time.Time{})
	os.Chmod(path, 0o644)
	s := newSource(t, p, path)
	if _, err := s.Token(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"`+p.RefreshToken()+`"`) || p.RefreshToken() == "refresh-0" {
		t.Errorf("the token file does not hold the new refresh token %q:\n%s", p.RefreshToken(), data)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	// A new Source (a restart) logs in with the file as written.
	if _, err := newSource(t, p, path).Token(context.Background()); err != nil {
		t.Errorf("after a restart: %v", err)
	}
}

func TestSourceRevokedUntilTheFileChanges(t *testing.T) {
	p := oauthtest.Start(t)
	dir := t.TempDir()
	s := newSource(t, p, p.WriteTokenFile(t, dir, "", time.Time{}))
	p.Revoke()
	_, err := s.Token(context.Background())
	var re *oauth.RevokedError
	if !errors.As(err, &re) || !oauth.IsRevoked(err) {
		t.Fatalf("Token after revocation: %v, want a RevokedError", err)
	}
	if !strings.Contains(err.Error(), "the mail provider no longer accepts the host's authorisation: run `mafiamail init` again") {
		t.Errorf("message %q does not say what to do", err)
	}
	if _, err := s.Token(context.Background()); !oauth.IsRevoked(err) {
		t.Errorf("second Token: %v, want the RevokedError still", err)
	}

	// A new authorisation rewrites the file; the running Source takes it,
	// even when the new file has the old one's size and modification time
	// (a rewrite within the file system's clock tick).
	path := filepath.Join(dir, "token.json")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	p.Reauthorise()
	p.WriteTokenFile(t, dir, "", time.Time{})
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(path); err != nil || after.Size() != before.Size() {
		t.Fatalf("the rewritten file's size changed (%v), so the test shows nothing", err)
	}
	if tok, err := s.Token(context.Background()); err != nil || !p.Check("", tok) {
		t.Errorf("after the token file was rewritten: %q, %v", tok, err)
	}
}

func TestSourceWithoutTokenFile(t *testing.T) {
	p := oauthtest.Start(t)
	_, err := newSource(t, p, t.TempDir()+"/none.json").Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not authorised yet") {
		t.Errorf("Token without a file: %v", err)
	}
}

func TestSourceTellsRevocationAndRestorationOnce(t *testing.T) {
	p := oauthtest.Start(t)
	dir := t.TempDir()
	cfg := p.Config(p.WriteTokenFile(t, dir, "", time.Time{}))
	var revoked []error
	restored := 0
	cfg.OnRevoked = func(err error) { revoked = append(revoked, err) }
	cfg.OnRestored = func() { restored++ }
	s, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tok := mustToken(t, s, true)
	p.Revoke()
	s.Invalidate(tok)
	s.Token(context.Background())
	s.Token(context.Background())
	if len(revoked) != 1 || !oauth.IsRevoked(revoked[0]) || restored != 0 {
		t.Fatalf("told %v revoked, %d restored; want one revocation", revoked, restored)
	}
	p.Reauthorise()
	time.Sleep(10 * time.Millisecond)
	p.WriteTokenFile(t, dir, "", time.Time{})
	mustToken(t, s, true)
	mustToken(t, s, true)
	if len(revoked) != 1 || restored != 1 {
		t.Errorf("told %d revoked, %d restored; want 1 and 1", len(revoked), restored)
	}
}

// mustToken returns the Source's token, failing the test unless it is as
// expected.
func mustToken(t *testing.T, s *oauth.Source, want bool) string {
	t.Helper()
	tok, err := s.Token(context.Background())
	if (err == nil) != want {
		t.Fatalf("Token: %q, %v", tok, err)
	}
	return tok
}
