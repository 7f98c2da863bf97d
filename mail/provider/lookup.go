package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Lookup finds a mailbox's settings. The zero value uses the system's
// resolver, an HTTP client with a 10-second limit, and AutoconfigURLs.
type Lookup struct {
	Resolver Resolver
	HTTP     *http.Client
	// URLs lists the autoconfig files to try for a domain and address.
	URLs func(domain, address string) []string
}

// Find returns how to reach the mailbox of address, trying in order: the
// providers the host knows by their own domains; the domain's autoconfig
// files; a known provider whose servers receive the domain's mail (its MX
// records: Google Workspace, Microsoft 365 and others host many domains);
// the domain's SRV records. It returns ErrNotFound when none of them
// names the servers, with what was tried in the error.
func (l Lookup) Find(ctx context.Context, address string) (Settings, error) {
	address = strings.TrimSpace(address)
	_, domain, ok := splitAddress(address)
	if !ok {
		return Settings{}, fmt.Errorf("provider: %q is not a mail address", address)
	}
	if k, ok := byDomain(domain); ok {
		return k.settings(address, "known provider"), nil
	}
	res := l.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	client := l.HTTP
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	urls := l.URLs
	if urls == nil {
		urls = AutoconfigURLs
	}
	var tried []string
	for _, u := range urls(domain, address) {
		s, usable, err := fetchAutoconfig(ctx, client, u, address)
		switch {
		case err != nil:
			tried = append(tried, err.Error())
		case !usable:
			tried = append(tried, u+": names no IMAP and SMTP server with TLS")
		default:
			return s, nil
		}
	}
	if mx, err := res.LookupMX(ctx, domain); err == nil {
		hosts := make([]string, 0, len(mx))
		for _, m := range mx {
			hosts = append(hosts, m.Host)
		}
		if k, ok := byMX(hosts); ok {
			return k.settings(address, "known provider, by MX record"), nil
		}
		tried = append(tried, "MX records name no provider the host knows")
	} else {
		tried = append(tried, "MX lookup: "+err.Error())
	}
	imap, okIMAP := srvServer(ctx, res, domain, imapServices)
	smtp, okSMTP := srvServer(ctx, res, domain, smtpServices)
	if okIMAP && okSMTP {
		return Settings{Name: domain, IMAP: imap, SMTP: smtp, IMAPUsername: address, SMTPUsername: address,
			SignIn: Password, Source: "SRV records"}, nil
	}
	tried = append(tried, "no _imaps/_imap and _submissions/_submission SRV records")
	return Settings{}, fmt.Errorf("%w %s (%s)", ErrNotFound, domain, strings.Join(tried, "; "))
}
