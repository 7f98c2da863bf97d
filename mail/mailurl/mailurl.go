// Package mailurl reads the URL of a mail server as the configuration gives
// it, and applies the connection policy the IMAP watcher and the SMTP sender
// share: the TLS scheme (imaps, smtps) encrypts from the first byte; the
// plain scheme (imap, smtp) must upgrade with STARTTLS, except to a loopback
// address, where the embedded servers of demos and tests have no
// certificate.
package mailurl

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Security is how a connection is protected.
type Security int

// The three ways.
const (
	TLS      Security = iota // the TLS scheme
	StartTLS                 // the plain scheme to a remote host
	Plain                    // the plain scheme to a loopback address
)

func (s Security) String() string {
	switch s {
	case TLS:
		return "tls"
	case StartTLS:
		return "starttls"
	case Plain:
		return "plain"
	}
	return fmt.Sprintf("security(%d)", int(s))
}

// Schemes names a protocol's two schemes and their default ports.
type Schemes struct {
	TLS, Plain         string
	TLSPort, PlainPort string
}

// The protocols of the host.
var (
	IMAP = Schemes{TLS: "imaps", Plain: "imap", TLSPort: "993", PlainPort: "143"}
	SMTP = Schemes{TLS: "smtps", Plain: "smtp", TLSPort: "465", PlainPort: "587"}
)

// Endpoint is where and how to connect.
type Endpoint struct {
	Addr     string // host:port
	Host     string
	Security Security
}

// TLSConfig is the TLS configuration for the endpoint: a copy of base (nil
// for the system's roots), naming the URL's host for the certificate check
// unless base names another, and TLS 1.2 at least.
func (e Endpoint) TLSConfig(base *tls.Config) *tls.Config {
	tc := &tls.Config{}
	if base != nil {
		tc = base.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = e.Host
	}
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12
	}
	return tc
}

// Parse reads scheme://host[:port]; a URL with credentials, a path or a
// query is refused, as is any other scheme.
func Parse(raw string, s Schemes) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL; keep only the reason, in case
		// someone put a password into it.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Endpoint{}, fmt.Errorf("invalid URL: %w", err)
	}
	var port string
	var sec Security
	switch strings.ToLower(u.Scheme) {
	case s.TLS:
		port, sec = s.TLSPort, TLS
	case s.Plain:
		port, sec = s.PlainPort, StartTLS
	default:
		return Endpoint{}, fmt.Errorf("URL scheme %q: want %s:// or %s://", u.Scheme, s.TLS, s.Plain)
	}
	if u.User != nil {
		return Endpoint{}, errors.New("the URL must not carry credentials: set Username and Password")
	}
	if u.Opaque != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return Endpoint{}, errors.New("the URL must be scheme://host[:port] only")
	}
	host := u.Hostname()
	if host == "" {
		return Endpoint{}, errors.New("the URL has no host")
	}
	if p := u.Port(); p != "" {
		port = p
	}
	if sec == StartTLS && IsLoopback(host) {
		sec = Plain
	}
	return Endpoint{Addr: net.JoinHostPort(host, port), Host: host, Security: sec}, nil
}

// IsLoopback reports whether host certainly names this machine: "localhost"
// or a loopback IP literal. Other names are not resolved: what a name
// resolves to is not a promise that traffic stays on the machine.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
