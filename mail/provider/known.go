package provider

import "strings"

// known is what the host knows of a common provider.
type known struct {
	name       string
	imap, smtp string
	// imapUser is how the IMAP user name derives from the address:
	// "address" (the whole address) or "local" (the part before @).
	imapUser string
	signIn   string
	oauth    string
	help     string
	authserv string
	// domains are the provider's own mail domains; mx, suffixes of the MX
	// hosts by which a domain it hosts (Google Workspace, Microsoft 365)
	// is recognised.
	domains []string
	mx      []string
}

// knownProviders are the providers most groups' referees use. The servers
// are those each provider documents for mail programs.
var knownProviders = []known{
	{name: "Gmail", imap: "imaps://imap.gmail.com:993", smtp: "smtps://smtp.gmail.com:465",
		signIn: AppPassword, oauth: "google", authserv: "mx.google.com",
		help:    "Google Account → Security → 2-Step Verification must be on; then Security → App passwords",
		domains: []string{"gmail.com", "googlemail.com"}},
	{name: "Google Workspace", imap: "imaps://imap.gmail.com:993", smtp: "smtps://smtp.gmail.com:465",
		signIn: OAuth2, oauth: "google", authserv: "mx.google.com",
		help: "an administrator may allow app passwords (Google Account → Security → App passwords)",
		mx:   []string{".google.com", ".googlemail.com"}},
	{name: "Outlook.com", imap: "imaps://outlook.office365.com:993", smtp: "smtp://smtp-mail.outlook.com:587",
		signIn: OAuth2, oauth: "microsoft",
		domains: []string{"outlook.com", "hotmail.com", "live.com", "msn.com", "hotmail.co.uk", "hotmail.fr",
			"hotmail.de", "hotmail.it", "hotmail.es", "outlook.de", "outlook.fr", "outlook.es", "live.co.uk", "live.de", "live.fr"}},
	{name: "Microsoft 365", imap: "imaps://outlook.office365.com:993", smtp: "smtp://smtp.office365.com:587",
		signIn: OAuth2, oauth: "microsoft",
		mx: []string{".mail.protection.outlook.com"}},
	{name: "Fastmail", imap: "imaps://imap.fastmail.com:993", smtp: "smtps://smtp.fastmail.com:465",
		signIn: AppPassword, help: "Fastmail → Settings → Privacy & Security → Manage app passwords and access",
		domains: []string{"fastmail.com", "fastmail.fm", "fastmail.net", "fastmail.org", "fastmail.us"},
		mx:      []string{".messagingengine.com"}},
	{name: "Yahoo Mail", imap: "imaps://imap.mail.yahoo.com:993", smtp: "smtps://smtp.mail.yahoo.com:465",
		signIn: AppPassword, help: "Yahoo → Account info → Account security → Generate app password",
		domains: []string{"yahoo.com", "yahoo.co.uk", "yahoo.fr", "yahoo.de", "yahoo.es", "ymail.com", "rocketmail.com"},
		mx:      []string{".yahoodns.net"}},
	{name: "iCloud Mail", imap: "imaps://imap.mail.me.com:993", smtp: "smtp://smtp.mail.me.com:587",
		imapUser: "local", signIn: AppPassword,
		help:    "appleid.apple.com → Sign-In and Security → App-Specific Passwords (two-factor authentication must be on)",
		domains: []string{"icloud.com", "me.com", "mac.com"}},
	{name: "GMX", imap: "imaps://imap.gmx.net:993", smtp: "smtps://mail.gmx.net:465",
		signIn: Password, help: "GMX → E-Mail → Settings → POP3/IMAP: allow access by IMAP first",
		domains: []string{"gmx.de", "gmx.net", "gmx.at", "gmx.ch"}},
	{name: "GMX", imap: "imaps://imap.gmx.com:993", smtp: "smtps://mail.gmx.com:465",
		signIn: Password, help: "GMX → Settings → POP3 & IMAP: allow access by IMAP first",
		domains: []string{"gmx.com", "gmx.us", "gmx.co.uk", "gmx.fr"}},
	{name: "WEB.DE", imap: "imaps://imap.web.de:993", smtp: "smtp://smtp.web.de:587",
		signIn: Password, help: "WEB.DE → E-Mail → Einstellungen → POP3/IMAP Abruf: allow access by IMAP first",
		domains: []string{"web.de"}},
	{name: "mailbox.org", imap: "imaps://imap.mailbox.org:993", smtp: "smtps://smtp.mailbox.org:465",
		signIn: Password, domains: []string{"mailbox.org"}},
}

// settings are the known provider's settings for address.
func (k known) settings(address, source string) Settings {
	local, _, _ := splitAddress(address)
	user := address
	if k.imapUser == "local" {
		user = local
	}
	return Settings{Name: k.name, IMAP: k.imap, SMTP: k.smtp, IMAPUsername: user, SMTPUsername: address,
		SignIn: k.signIn, OAuth: k.oauth, AppPasswordHelp: k.help, AuthservID: k.authserv, Source: source}
}

// byDomain is the known provider whose own domain domain is.
func byDomain(domain string) (known, bool) {
	for _, k := range knownProviders {
		for _, d := range k.domains {
			if d == domain {
				return k, true
			}
		}
	}
	return known{}, false
}

// byMX is the known provider whose servers receive the domain's mail.
func byMX(mxHosts []string) (known, bool) {
	for _, h := range mxHosts {
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		for _, k := range knownProviders {
			for _, suffix := range k.mx {
				if strings.HasSuffix(h, suffix) {
					return k, true
				}
			}
		}
	}
	return known{}, false
}
