// Package oauth gives the watcher and the sender OAuth2 access tokens for
// IMAP and SMTP, and the SASL mechanisms that carry them (XOAUTH2 and
// OAUTHBEARER): some providers accept nothing else from other programs.
package oauth

import (
	"errors"
	"fmt"
)

// RevokedMessage is what the host says when the provider no longer
// accepts its refresh token: only a new authorisation helps.
const RevokedMessage = "the mail provider no longer accepts the host's authorisation: run `mafiamail init` again"

// RevokedError is returned when the token endpoint answers invalid_grant:
// the refresh token was revoked, expired or never valid. Retrying does not
// help; the host waits until the token file is written again.
type RevokedError struct {
	// Err is the token endpoint's answer.
	Err error
}

func (e *RevokedError) Error() string { return fmt.Sprintf("%s (%v)", RevokedMessage, e.Err) }

func (e *RevokedError) Unwrap() error { return e.Err }

// IsRevoked reports whether err says the host's authorisation is gone.
func IsRevoked(err error) bool {
	var r *RevokedError
	return errors.As(err, &r)
}
