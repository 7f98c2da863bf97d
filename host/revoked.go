package host

import (
	"context"
	"fmt"
	"time"

	"github.com/mafiamail/mafiamail/mail/compose"
)

// Revocation is what the host is told when the mail provider no longer
// accepts its OAuth2 authorisation.
type Revocation struct {
	// Error is the provider's answer.
	Error string
	// Reading and Sending say which of IMAP and SMTP log in with the
	// authorisation.
	Reading, Sending bool
}

// AuthorisationRevoked tells the referee of every game under way, once
// until AuthorisationRestored, that the host can no longer log in to its
// mailbox. The notices wait in the outbox, first in line: when SMTP uses
// the same authorisation they go once it works again, which is all a
// host without a working login can do. The games keep their state.
func (h *Host) AuthorisationRevoked(ctx context.Context, r Revocation) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.revokedSince.IsZero() {
		return nil
	}
	since := h.clock.real()
	number := h.revocations + 1
	err := h.transact(ctx, "revoked", func(w *work) error {
		for _, g := range h.refereedGames() {
			msg, err := h.mail.AuthorisationRevoked(compose.Revoked{State: g.state, Dir: g.dir(), Since: since,
				Error: r.Error, Reading: r.Reading, Sending: r.Sending, Number: number, Now: w.now})
			if err != nil {
				return &failure{fmt.Errorf("compose the revoked authorisation notice: %w", err)}
			}
			w.out = append(w.out, msg)
		}
		return nil
	})
	if err != nil {
		return err
	}
	h.revokedSince, h.revocations = since, number
	h.log.Error("the mail provider no longer accepts the host's authorisation; the referees are told",
		"err", r.Error, "imap", r.Reading, "smtp", r.Sending)
	return nil
}

// AuthorisationRestored records that the provider accepts the host's
// authorisation again: a later revocation is told anew.
func (h *Host) AuthorisationRestored() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.revokedSince.IsZero() {
		h.log.Info("the mail provider accepts the host's authorisation again")
	}
	h.revokedSince = time.Time{}
}
