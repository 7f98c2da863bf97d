package service

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// TokenSource is the OAuth2 token source of cfg, shared by the watcher and
// the sender so that one refresh serves both; nil when neither account
// uses OAuth2. h, when set, is told when the provider stops and starts
// again accepting the authorisation, to tell the referees.
func TokenSource(cfg *config.Config, h *host.Host, log *slog.Logger) (*oauth.Source, error) {
	if !cfg.UsesOAuth2() {
		return nil, nil
	}
	o := cfg.OAuth2
	oc := oauth.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		TokenURL: o.TokenURL, DeviceAuthURL: o.DeviceAuthURL, Scopes: o.Scopes,
		TokenFile: o.TokenFile, Logger: log}
	if h != nil {
		oc.OnRevoked = func(err error) {
			// The notice says in its own words what happened; what the
			// provider answered is quoted.
			var re *oauth.RevokedError
			if errors.As(err, &re) {
				err = re.Err
			}
			r := host.Revocation{Error: err.Error(),
				Reading: cfg.IMAP.Auth == config.AuthOAuth2, Sending: cfg.SMTP.Auth == config.AuthOAuth2}
			if err := h.AuthorisationRevoked(context.Background(), r); err != nil {
				log.Error("cannot tell the referees that the host's authorisation was withdrawn", "err", err)
			}
		}
		oc.OnRestored = h.AuthorisationRestored
	}
	return oauth.New(oc)
}

// Bearer is what an account logs in with: src when it uses OAuth2, nil
// (a password) otherwise.
func Bearer(a config.Account, src *oauth.Source) oauth.Bearer {
	if a.Auth != config.AuthOAuth2 || src == nil {
		return nil
	}
	return src
}
