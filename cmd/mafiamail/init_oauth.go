package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/mail/provider"
)

// registerHelp says where a referee registers the app whose client ID
// the host signs in with: the providers issue none to programs they do
// not know.
var registerHelp = map[string]string{
	"google": "Google Cloud console → APIs & Services → Credentials → Create credentials → OAuth client ID, " +
		"application type \"TVs and Limited Input devices\" (enable the Gmail API first)",
	"microsoft": "Microsoft Entra admin center → App registrations → New registration; under Authentication " +
		"allow public client flows; under API permissions add IMAP.AccessAsUser.All, SMTP.Send and offline_access",
}

// initOAuth2 fills in the accounts' OAuth2 sign-in and the [oauth2]
// section from the flags, asking for the client ID.
func initOAuth2(o initOptions, s provider.Settings, cfg *config.Config, in *asker, w io.Writer) error {
	name := o.oauthProvider
	if name == "" {
		name = s.OAuth
	}
	if name == "" {
		name = "custom"
	}
	if help, ok := registerHelp[name]; ok && o.clientID == "" {
		fmt.Fprintf(w, "The host needs the client ID of an app you register with the provider: %s.\n", help)
	}
	id, err := in.ask(o.clientID, "Client ID: ")
	if err != nil {
		return err
	}
	tokenFile := o.tokenFile
	if tokenFile == "" {
		tokenFile = filepath.Join(filepath.Dir(o.out), "mafiamail-token.json")
	}
	if tokenFile, err = filepath.Abs(tokenFile); err != nil {
		return err
	}
	var scopes []string
	for _, sc := range strings.Split(o.scopes, ",") {
		if sc = strings.TrimSpace(sc); sc != "" {
			scopes = append(scopes, sc)
		}
	}
	cfg.IMAP.Auth, cfg.SMTP.Auth = config.AuthOAuth2, config.AuthOAuth2
	cfg.IMAP.Password, cfg.SMTP.Password = "", ""
	cfg.OAuth2 = config.OAuth2{Provider: name, ClientID: id, ClientSecretEnv: o.clientSecretEnv,
		TokenURL: o.tokenURL, DeviceAuthURL: o.deviceURL, Scopes: scopes, TokenFile: tokenFile}
	return nil
}
