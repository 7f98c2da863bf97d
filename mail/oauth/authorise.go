package oauth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// DeviceCode is what the user needs to authorise the host: the page to
// open and the code to type there, before Expires.
type DeviceCode struct {
	URL, Code string
	Expires   time.Time
}

// Authorise runs the provider's device authorisation (RFC 8628): it asks
// for a code, hands it to show, waits until the user has entered it, and
// writes the token file. A running host that reads the same file takes
// the new authorisation from there.
func (s *Source) Authorise(ctx context.Context, show func(DeviceCode)) error {
	if s.cfg.DeviceAuthURL == "" {
		return errors.New("oauth: the provider's device authorisation endpoint is not configured")
	}
	if s.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, s.cfg.HTTPClient)
	}
	da, err := s.oc.DeviceAuth(ctx)
	if err != nil {
		return fmt.Errorf("ask the provider for a device code: %w", err)
	}
	show(DeviceCode{URL: da.VerificationURI, Code: da.UserCode, Expires: da.Expiry})
	tok, err := s.oc.DeviceAccessToken(ctx, da)
	if err != nil {
		return fmt.Errorf("wait for the authorisation: %w", err)
	}
	if tok.RefreshToken == "" {
		// Microsoft sends one only for the offline_access scope.
		return errors.New("the provider sent no refresh token: the host could log in for an hour only (check the scopes)")
	}
	stamp, err := writeTokenFile(s.cfg.TokenFile, tok)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.tok, s.stamp, s.revoked = tok, stamp, nil
	s.mu.Unlock()
	s.log.Info("the host is authorised; the token file is written")
	return nil
}
