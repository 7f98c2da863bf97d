package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// OAuth2 is how the host obtains access tokens for IMAP and SMTP when an
// account has auth = "oauth2": the provider's endpoints, the client the
// host is registered as, and the file that keeps the refresh token.
type OAuth2 struct {
	// Provider is google, microsoft or custom; google and microsoft fill
	// in the endpoints and scopes, which the keys below may still replace
	// (a Microsoft tenant's own endpoints, say).
	Provider        string   `toml:"provider"`
	ClientID        string   `toml:"client_id"`
	ClientSecret    string   `toml:"client_secret"`
	ClientSecretEnv string   `toml:"client_secret_env"`
	TokenURL        string   `toml:"token_url"`
	DeviceAuthURL   string   `toml:"device_auth_url"`
	Scopes          []string `toml:"scopes"`
	// TokenFile keeps the refresh token (mode 0600). A running host reads
	// it again when it changes.
	TokenFile string `toml:"token_file"`
}

// The accounts' auth values.
const (
	AuthPassword = "password"
	AuthOAuth2   = "oauth2"
)

// oauth2Presets are the endpoints and scopes of the providers the host
// knows.
var oauth2Presets = map[string]OAuth2{
	"google": {
		TokenURL:      "https://oauth2.googleapis.com/token",
		DeviceAuthURL: "https://oauth2.googleapis.com/device/code",
		Scopes:        []string{"https://mail.google.com/"},
	},
	"microsoft": {
		TokenURL:      "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		DeviceAuthURL: "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode",
		Scopes: []string{"https://outlook.office.com/IMAP.AccessAsUser.All",
			"https://outlook.office.com/SMTP.Send", "offline_access"},
	},
}

// UsesOAuth2 says whether an account logs in with OAuth2.
func (c *Config) UsesOAuth2() bool {
	return c.IMAP.Auth == AuthOAuth2 || c.SMTP.Auth == AuthOAuth2
}

// checkOAuth2 fills in the provider's preset and checks the section; bad
// reports an error at a key.
func checkOAuth2(cfg *Config, lookupEnv func(string) (string, bool), bad func(key, format string, args ...any) error) []error {
	o := &cfg.OAuth2
	if !cfg.UsesOAuth2() {
		if o.Provider != "" || o.ClientID != "" || o.TokenFile != "" {
			return []error{bad("oauth2", "is set, but neither [imap] nor [smtp] has auth = \"oauth2\"")}
		}
		return nil
	}
	var errs []error
	switch p, ok := oauth2Presets[o.Provider]; {
	case ok:
		if o.TokenURL == "" {
			o.TokenURL = p.TokenURL
		}
		if o.DeviceAuthURL == "" {
			o.DeviceAuthURL = p.DeviceAuthURL
		}
		if o.Scopes == nil {
			o.Scopes = p.Scopes
		}
	case o.Provider == "custom":
		if o.TokenURL == "" {
			errs = append(errs, bad("oauth2.token_url", "is missing: provider \"custom\" names its token endpoint"))
		}
		if len(o.Scopes) == 0 {
			errs = append(errs, bad("oauth2.scopes", "is missing: provider \"custom\" names the scopes IMAP and SMTP need"))
		}
	case o.Provider == "":
		errs = append(errs, bad("oauth2.provider", "is missing: google, microsoft or custom"))
	default:
		errs = append(errs, bad("oauth2.provider", "must be google, microsoft or custom, not %q", o.Provider))
	}
	for key, u := range map[string]string{"oauth2.token_url": o.TokenURL, "oauth2.device_auth_url": o.DeviceAuthURL} {
		if u != "" {
			if err := checkEndpoint(u); err != nil {
				errs = append(errs, bad(key, "%v", err))
			}
		}
	}
	if o.ClientID == "" {
		errs = append(errs, bad("oauth2.client_id", "is missing: the client ID the provider gave when the host was registered"))
	}
	switch {
	case o.ClientSecret != "" && o.ClientSecretEnv != "":
		errs = append(errs, bad("oauth2.client_secret_env", "give client_secret or client_secret_env, not both"))
	case o.ClientSecretEnv != "":
		v, ok := lookupEnv(o.ClientSecretEnv)
		if !ok {
			errs = append(errs, bad("oauth2.client_secret_env", "environment variable %s is not set", o.ClientSecretEnv))
		}
		o.ClientSecret = v
	}
	if o.TokenFile == "" {
		errs = append(errs, bad("oauth2.token_file", "is missing: the file that keeps the refresh token, e.g. \"/var/lib/mafiamail/oauth2-token.json\""))
	}
	return errs
}

// checkAccountAuth checks an account's auth key and what goes with it.
func checkAccountAuth(section string, a *Account, bad func(key, format string, args ...any) error) []error {
	switch a.Auth {
	case "", AuthPassword:
		return nil
	case AuthOAuth2:
		var errs []error
		if a.Password != "" || a.PasswordEnv != "" {
			errs = append(errs, bad(section+".password", "is not used with auth = \"oauth2\": leave it out"))
		}
		if a.Username == "" {
			errs = append(errs, bad(section+".username", "is missing: the account's address, which OAuth2 logs in as"))
		}
		return errs
	}
	return []error{bad(section+".auth", "must be \"password\" or \"oauth2\", not %q", a.Auth)}
}

// checkEndpoint accepts https URLs, and http on loopback for a local
// test provider.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", raw)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme == "http" && (strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback())) {
		return nil
	}
	return fmt.Errorf("%q must be https (http only on loopback)", raw)
}
