package oauth

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"golang.org/x/oauth2"
)

// Config configures a Source.
type Config struct {
	// ClientID and ClientSecret identify the host to the provider; the
	// secret may be empty for providers that issue none (public clients).
	ClientID     string
	ClientSecret string
	// TokenURL is the provider's token endpoint; DeviceAuthURL its device
	// authorisation endpoint, used when the host is authorised.
	TokenURL      string
	DeviceAuthURL string
	Scopes        []string
	// TokenFile holds the refresh token as JSON. It is read again whenever
	// it changes, so a new authorisation reaches a running host, and
	// written (mode 0600) when the provider rotates the refresh token.
	TokenFile string
	// HTTPClient talks to the token endpoint; nil means
	// http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives refreshes and failures; default slog.Default().
	Logger *slog.Logger
	// OnRevoked, when set, is called when the provider refuses the refresh
	// token for good (with the *RevokedError), and OnRestored when a token
	// is obtained again after that. They run on the goroutine that asked
	// for the token, outside the Source's lock.
	OnRevoked  func(error)
	OnRestored func()
}

// Source gives access tokens, refreshing them before they expire. It is
// safe for concurrent use: one refresh serves every connection waiting.
type Source struct {
	cfg Config
	oc  oauth2.Config
	log *slog.Logger

	mu    sync.Mutex
	tok   *oauth2.Token
	stamp fileStamp
	// revoked is the RevokedError of the last refresh, kept until the
	// token file changes: asking again would only be refused again.
	revoked error
	// lapsed is set from a revocation until a token is obtained again.
	lapsed bool
}

// New checks cfg and returns a Source. The token file is read at the
// first Token, so that a host may start before it is authorised.
func New(cfg Config) (*Source, error) {
	switch {
	case cfg.ClientID == "":
		return nil, errors.New("oauth: ClientID is required")
	case cfg.TokenURL == "":
		return nil, errors.New("oauth: TokenURL is required")
	case cfg.TokenFile == "":
		return nil, errors.New("oauth: TokenFile is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Source{
		cfg: cfg,
		oc: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Scopes: cfg.Scopes,
			Endpoint: oauth2.Endpoint{TokenURL: cfg.TokenURL, DeviceAuthURL: cfg.DeviceAuthURL}},
		log: log.With("component", "oauth2", "token_file", cfg.TokenFile),
	}, nil
}

// Token returns a valid access token, refreshed if it expires within
// seconds. A refresh token the provider refuses for good gives a
// *RevokedError until the token file is written again.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	wasLapsed := s.lapsed
	tok, err := s.tokenLocked(ctx)
	if err == nil {
		s.lapsed = false
	} else if IsRevoked(err) {
		s.lapsed = true
	}
	s.mu.Unlock()
	switch {
	case err == nil && wasLapsed && s.cfg.OnRestored != nil:
		s.cfg.OnRestored()
	case err != nil && !wasLapsed && IsRevoked(err) && s.cfg.OnRevoked != nil:
		s.cfg.OnRevoked(err)
	}
	return tok, err
}

func (s *Source) tokenLocked(ctx context.Context) (string, error) {
	if err := s.reloadLocked(); err != nil {
		return "", err
	}
	if s.revoked != nil {
		return "", s.revoked
	}
	if s.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient)
	}
	// oauth2's token source returns the token as it is while it is valid
	// and refreshes it otherwise, keeping the old refresh token when the
	// provider sends no new one.
	tok, err := s.oc.TokenSource(ctx, s.tok).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode == "invalid_grant" {
			s.revoked = &RevokedError{Err: err}
			s.log.Error(RevokedMessage, "err", err)
			return "", s.revoked
		}
		return "", fmt.Errorf("refresh the access token: %w", err)
	}
	if tok.AccessToken != s.tok.AccessToken {
		s.log.Debug("refreshed the access token", "expiry", tok.Expiry)
	}
	if tok.RefreshToken != s.tok.RefreshToken {
		// The provider rotated the refresh token: the old one may stop
		// working, so the new one must survive a restart.
		if stamp, err := writeTokenFile(s.cfg.TokenFile, tok); err != nil {
			s.log.Error("cannot keep the new refresh token", "err", err)
		} else {
			s.stamp = stamp
			s.log.Info("stored the provider's new refresh token")
		}
	}
	s.tok = tok
	return tok.AccessToken, nil
}

// Invalidate says that the server refused token: the next Token refreshes
// it. A token already replaced is left alone, so that connections refused
// together refresh once.
func (s *Source) Invalidate(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tok != nil && s.tok.AccessToken == token {
		t := *s.tok
		t.AccessToken = ""
		s.tok = &t
	}
}

// reloadLocked reads the token file when it changed since the Source last
// read or wrote it.
func (s *Source) reloadLocked() error {
	data, err := os.ReadFile(s.cfg.TokenFile)
	if errors.Is(err, fs.ErrNotExist) {
		if s.tok != nil {
			// Removed while running: the token in memory still works.
			return nil
		}
		return fmt.Errorf("the host is not authorised yet: the token file %s does not exist (run `mafiamail init`)", s.cfg.TokenFile)
	}
	if err != nil {
		return fmt.Errorf("read the token file: %w", err)
	}
	stamp := stampOf(data)
	if s.tok != nil && stamp == s.stamp {
		return nil
	}
	tok, err := readTokenFile(s.cfg.TokenFile, data)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(s.cfg.TokenFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
		s.log.Warn("the token file may be read by others: make it mode 0600", "mode", fi.Mode().Perm())
	}
	if s.tok != nil {
		s.log.Info("read the token file again: it changed")
	}
	s.tok, s.stamp, s.revoked = tok, stamp, nil
	return nil
}
