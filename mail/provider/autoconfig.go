package provider

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// AutoconfigURLs are where mail clients look for a domain's settings file,
// in order (the format Thunderbird reads, "config-v1.1.xml"): the domain's
// own autoconfig host, its well-known path, and Thunderbird's database of
// providers.
func AutoconfigURLs(domain, address string) []string {
	q := "?emailaddress=" + url.QueryEscape(address)
	return []string{
		"https://autoconfig." + domain + "/mail/config-v1.1.xml" + q,
		"https://" + domain + "/.well-known/autoconfig/mail/config-v1.1.xml" + q,
		"https://autoconfig.thunderbird.net/v1.1/" + url.PathEscape(domain),
	}
}

// maxAutoconfigBytes bounds the file read: a real one is a few KiB.
const maxAutoconfigBytes = 1 << 20

type clientConfig struct {
	Provider struct {
		Domains     []string       `xml:"domain"`
		DisplayName string         `xml:"displayName"`
		Incoming    []serverConfig `xml:"incomingServer"`
		Outgoing    []serverConfig `xml:"outgoingServer"`
	} `xml:"emailProvider"`
}

type serverConfig struct {
	Type     string   `xml:"type,attr"`
	Hostname string   `xml:"hostname"`
	Port     int      `xml:"port"`
	Socket   string   `xml:"socketType"`
	Username string   `xml:"username"`
	Auth     []string `xml:"authentication"`
}

// fetchAutoconfig reads the settings file at u, and says whether it names
// an IMAP and an SMTP server the host can use.
func fetchAutoconfig(ctx context.Context, client *http.Client, u, address string) (Settings, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Settings{}, false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Settings{}, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Settings{}, false, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var cc clientConfig
	if err := xml.NewDecoder(io.LimitReader(resp.Body, maxAutoconfigBytes)).Decode(&cc); err != nil {
		return Settings{}, false, fmt.Errorf("%s: %w", u, err)
	}
	s := Settings{Name: cc.Provider.DisplayName, Source: u}
	if s.Name == "" {
		_, s.Name, _ = splitAddress(address)
	}
	for _, in := range cc.Provider.Incoming {
		if s.IMAP == "" && strings.EqualFold(in.Type, "imap") {
			if ref, ok := serverURL("imap", in); ok {
				s.IMAP, s.IMAPUsername = ref, expand(in.Username, address)
				s.SignIn = signInOf(in.Auth)
			}
		}
	}
	for _, out := range cc.Provider.Outgoing {
		if s.SMTP == "" && strings.EqualFold(out.Type, "smtp") {
			if ref, ok := serverURL("smtp", out); ok {
				s.SMTP, s.SMTPUsername = ref, expand(out.Username, address)
			}
		}
	}
	return s, s.IMAP != "" && s.SMTP != "", nil
}

// serverURL is a server of the file as the configuration writes it: SSL
// is the TLS scheme, STARTTLS the plain one (which the host upgrades); a
// server without either is of no use, as the host sends no password in
// the clear.
func serverURL(proto string, sc serverConfig) (string, bool) {
	if sc.Hostname == "" || sc.Port <= 0 || sc.Port > 65535 {
		return "", false
	}
	hostPort := sc.Hostname + ":" + strconv.Itoa(sc.Port)
	switch strings.ToUpper(sc.Socket) {
	case "SSL", "TLS":
		return proto + "s://" + hostPort, true
	case "STARTTLS":
		return proto + "://" + hostPort, true
	}
	return "", false
}

// expand fills in the placeholders of a user name.
func expand(pattern, address string) string {
	if pattern == "" {
		return address
	}
	local, domain, _ := splitAddress(address)
	return strings.NewReplacer("%EMAILADDRESS%", address, "%EMAILLOCALPART%", local, "%EMAILDOMAIN%", domain).Replace(pattern)
}

// signInOf reads how the file says to sign in: OAuth2 when that is the
// only way it lists, a password otherwise.
func signInOf(methods []string) string {
	oauth, other := false, false
	for _, m := range methods {
		if strings.EqualFold(strings.TrimSpace(m), "OAuth2") {
			oauth = true
		} else {
			other = true
		}
	}
	if oauth && !other {
		return OAuth2
	}
	return Password
}
