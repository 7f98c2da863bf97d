// Package provider finds how to reach a mailbox from its address alone, as
// mail clients do: the servers and ports, the user names, how to sign in,
// and what the provider is known to stamp and to allow. It knows the common
// providers, recognises their hosted domains by MX record, and otherwise
// reads the domain's autoconfig file and its RFC 6186 SRV records.
package provider

import (
	"errors"
	"strings"
)

// Sign-in methods.
const (
	// Password: the account's own password.
	Password = "password"
	// AppPassword: a password made for one program in the provider's
	// settings (where AppPasswordHelp says); the account's own is refused.
	AppPassword = "app-password"
	// OAuth2: the provider takes no password from programs; the host signs
	// in with a token from OAuth (the preset named in Settings.OAuth).
	OAuth2 = "oauth2"
)

// Settings is how to reach one mailbox.
type Settings struct {
	// Name is the provider as its users know it ("Gmail"), or the domain.
	Name string
	// IMAP and SMTP are server URLs as the configuration takes them:
	// imaps://host:993, smtps://host:465, or imap:// and smtp:// with
	// STARTTLS.
	IMAP, SMTP string
	// IMAPUsername and SMTPUsername are the user names to sign in with.
	IMAPUsername, SMTPUsername string
	// SignIn is Password, AppPassword or OAuth2; OAuth names the OAuth
	// preset ("google", "microsoft") for OAuth2, and AppPasswordHelp says
	// where an app password is made, in the provider's own words.
	SignIn          string
	OAuth           string
	AppPasswordHelp string
	// AuthservID is the authserv-id the provider writes in
	// Authentication-Results, when it is known; empty: learn it from a
	// message that arrived.
	AuthservID string
	// Source says how the settings were found: "known provider",
	// "known provider, by MX record", the autoconfig URL, or "SRV records".
	Source string
}

// ErrNotFound: no known provider, autoconfig file or SRV record names the
// servers; they have to be asked for.
var ErrNotFound = errors.New("provider: no mail server settings found for the domain")

// splitAddress returns the address's local part and lowercased domain.
func splitAddress(addr string) (local, domain string, ok bool) {
	i := strings.LastIndexByte(addr, '@')
	if i <= 0 || i == len(addr)-1 {
		return "", "", false
	}
	return addr[:i], strings.ToLower(strings.TrimSuffix(addr[i+1:], ".")), true
}
