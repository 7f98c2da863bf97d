package mailserver

import (
	"errors"
	"slices"
	"strings"

	"github.com/emersion/go-sasl"

	"github.com/mafiamail/mafiamail/mail/oauth"
)

// errOAuthRefused is what the token checks return inside the SASL
// exchange; the protocol's own failure reply replaces it.
var errOAuthRefused = errors.New("mailserver: token refused")

// mechanisms are the SASL mechanisms offered on IMAP and SMTP.
func (s *Server) mechanisms() []string {
	if s.opts.OAuthTokens == nil {
		return []string{sasl.Plain}
	}
	if s.opts.OAuthMechanisms != nil {
		return append([]string{sasl.Plain}, s.opts.OAuthMechanisms...)
	}
	return []string{sasl.Plain, oauth.XOAuth2, sasl.OAuthBearer}
}

// offers says whether mech is one of the mechanisms offered.
func (s *Server) offers(mech string) bool {
	return slices.Contains(s.mechanisms(), mech)
}

// saslServer returns the server side of mech. login is called with the
// user once one logged in; every failure is reported as fail, the
// protocol's "authentication failed".
func (s *Server) saslServer(mech string, login func(*user) error, fail error) (sasl.Server, bool) {
	mech = strings.ToUpper(mech)
	if !s.offers(mech) {
		return nil, false
	}
	var srv sasl.Server
	switch {
	case mech == sasl.Plain:
		srv = sasl.NewPlainServer(func(identity, username, password string) error {
			if identity != "" && identity != username {
				return fail
			}
			u, ok := s.authenticate(username, password)
			if !ok {
				return fail
			}
			return login(u)
		})
	case mech == oauth.XOAuth2:
		srv = oauth.NewXOAuth2Server(func(username, token string) error {
			u, ok := s.tokenUser(username, token)
			if !ok {
				return errOAuthRefused
			}
			return login(u)
		})
	case mech == sasl.OAuthBearer:
		srv = sasl.NewOAuthBearerServer(func(o sasl.OAuthBearerOptions) *sasl.OAuthBearerError {
			u, ok := s.tokenUser(o.Username, o.Token)
			if ok && login(u) == nil {
				return nil
			}
			return &sasl.OAuthBearerError{Status: "invalid_token", Schemes: "bearer"}
		})
	default:
		return nil, false
	}
	return failAs{srv, fail}, true
}

// tokenUser finds the user an access token logs in, if the hook accepts
// it.
func (s *Server) tokenUser(username, token string) (*user, bool) {
	name, ok := s.loginName(username)
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	u, ok := s.users[name]
	s.mu.Unlock()
	if !ok || !s.opts.OAuthTokens(username, token) {
		return nil, false
	}
	return u, true
}

// failAs reports every error of a SASL exchange as fail.
type failAs struct {
	sasl.Server
	fail error
}

func (f failAs) Next(resp []byte) ([]byte, bool, error) {
	c, done, err := f.Server.Next(resp)
	if err != nil {
		err = f.fail
	}
	return c, done, err
}
