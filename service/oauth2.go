package service

import (
	"log/slog"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/mail/oauth"
)

// TokenSource is the OAuth2 token source of cfg, shared by the watcher and
// the sender so that one refresh serves both; nil when neither account
// uses OAuth2.
func TokenSource(cfg *config.Config, log *slog.Logger) (*oauth.Source, error) {
	if !cfg.UsesOAuth2() {
		return nil, nil
	}
	o := cfg.OAuth2
	return oauth.New(oauth.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		TokenURL: o.TokenURL, DeviceAuthURL: o.DeviceAuthURL, Scopes: o.Scopes,
		TokenFile: o.TokenFile, Logger: log})
}

// Bearer is what an account logs in with: src when it uses OAuth2, nil
// (a password) otherwise.
func Bearer(a config.Account, src *oauth.Source) oauth.Bearer {
	if a.Auth != config.AuthOAuth2 || src == nil {
		return nil
	}
	return src
}
