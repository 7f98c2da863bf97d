package provider

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/mailurl"
	"github.com/mafiamail/mafiamail/mail/sender"
)

// fakeResolver answers from its tables, and fails the test when told to
// (a lookup that should not happen).
type fakeResolver struct {
	t      *testing.T
	forbid bool
	mx     map[string][]*net.MX
	srv    map[string][]*net.SRV // "_service._tcp.domain"
}

func (r fakeResolver) LookupMX(_ context.Context, name string) ([]*net.MX, error) {
	if r.forbid {
		r.t.Errorf("looked up the MX of %s", name)
	}
	if mx, ok := r.mx[name]; ok {
		return mx, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

func (r fakeResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if r.forbid {
		r.t.Errorf("looked up SRV %s of %s", service, name)
	}
	key := "_" + service + "._" + proto + "." + name
	if recs, ok := r.srv[key]; ok {
		return key, recs, nil
	}
	return "", nil, &net.DNSError{Err: "no such host", Name: key, IsNotFound: true}
}

// noURLs stands for a domain that publishes no autoconfig file.
func noURLs(string, string) []string { return nil }

func TestKnownProvidersByDomain(t *testing.T) {
	l := Lookup{Resolver: fakeResolver{t: t, forbid: true}, URLs: func(d, a string) []string {
		t.Errorf("fetched autoconfig for %s", d)
		return nil
	}}
	for _, tt := range []struct {
		address                  string
		name, imapUser, signIn   string
		oauth, authserv, imapURL string
	}{
		{"Referee@Gmail.com", "Gmail", "Referee@Gmail.com", AppPassword, "google", "mx.google.com", "imaps://imap.gmail.com:993"},
		{"ref@hotmail.co.uk", "Outlook.com", "ref@hotmail.co.uk", OAuth2, "microsoft", "", "imaps://outlook.office365.com:993"},
		{"ref@icloud.com", "iCloud Mail", "ref", AppPassword, "", "", "imaps://imap.mail.me.com:993"},
		{"ref@web.de", "WEB.DE", "ref@web.de", Password, "", "", "imaps://imap.web.de:993"},
		{"ref@gmx.com", "GMX", "ref@gmx.com", Password, "", "", "imaps://imap.gmx.com:993"},
	} {
		s, err := l.Find(context.Background(), tt.address)
		if err != nil {
			t.Fatalf("%s: %v", tt.address, err)
		}
		if s.Name != tt.name || s.IMAPUsername != tt.imapUser || s.SMTPUsername != tt.address || s.SignIn != tt.signIn ||
			s.OAuth != tt.oauth || s.AuthservID != tt.authserv || s.IMAP != tt.imapURL || s.Source != "known provider" {
			t.Errorf("%s: %+v", tt.address, s)
		}
	}
}

// Every known provider's servers are URLs the host accepts, and those
// whose sending limits the host knows are known under the same SMTP host.
func TestKnownProvidersAreUsable(t *testing.T) {
	for _, k := range knownProviders {
		if _, err := mailurl.Parse(k.imap, mailurl.IMAP); err != nil {
			t.Errorf("%s: IMAP %s: %v", k.name, k.imap, err)
		}
		if _, err := mailurl.Parse(k.smtp, mailurl.SMTP); err != nil {
			t.Errorf("%s: SMTP %s: %v", k.name, k.smtp, err)
		}
		if k.signIn == AppPassword && k.help == "" {
			t.Errorf("%s: an app password with no word on where to make one", k.name)
		}
		if k.signIn == OAuth2 && k.oauth == "" {
			t.Errorf("%s: OAuth2 with no preset", k.name)
		}
		if len(k.domains) == 0 && len(k.mx) == 0 {
			t.Errorf("%s: recognised by nothing", k.name)
		}
	}
	for _, name := range []string{"Gmail", "Outlook.com", "Microsoft 365", "Yahoo Mail", "Fastmail"} {
		found := false
		for _, k := range knownProviders {
			if k.name == name {
				p, ok := sender.KnownProvider(k.smtp)
				found = ok && p.Name == name
			}
		}
		if !found {
			t.Errorf("%s: the sending limits are not known under its SMTP server", name)
		}
	}
}

const autoconfigFile = `<?xml version="1.0" encoding="UTF-8"?>
<clientConfig version="1.1">
  <emailProvider id="club.example">
    <domain>club.example</domain>
    <displayName>Club Mail</displayName>
    <incomingServer type="pop3">
      <hostname>pop.club.example</hostname><port>995</port><socketType>SSL</socketType>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>imap.club.example</hostname><port>143</port><socketType>plain</socketType>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>imap.club.example</hostname><port>993</port><socketType>SSL</socketType>
      <username>%EMAILLOCALPART%</username>
      <authentication>password-cleartext</authentication>
    </incomingServer>
    <outgoingServer type="smtp">
      <hostname>smtp.club.example</hostname><port>587</port><socketType>STARTTLS</socketType>
      <username>%EMAILADDRESS%</username>
      <authentication>OAuth2</authentication>
      <authentication>password-cleartext</authentication>
    </outgoingServer>
  </emailProvider>
</clientConfig>`

// A domain's autoconfig file names the servers; files missing, broken or
// offering no server with TLS are passed over.
func TestAutoconfig(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config":
			if got := r.URL.Query().Get("emailaddress"); got != "ref@club.example" {
				t.Errorf("the file was asked for %q", got)
			}
			w.Write([]byte(autoconfigFile))
		case "/broken":
			w.Write([]byte("<clientConfig><emailProvider>"))
		case "/plain":
			w.Write([]byte(strings.ReplaceAll(autoconfigFile, "SSL", "plain")))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	l := Lookup{Resolver: fakeResolver{t: t}, HTTP: srv.Client(), URLs: func(domain, address string) []string {
		return []string{srv.URL + "/missing", srv.URL + "/broken", srv.URL + "/plain", srv.URL + "/config?emailaddress=" + address}
	}}
	s, err := l.Find(context.Background(), "ref@club.example")
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Name: "Club Mail", IMAP: "imaps://imap.club.example:993", SMTP: "smtp://smtp.club.example:587",
		IMAPUsername: "ref", SMTPUsername: "ref@club.example", SignIn: Password, Source: srv.URL + "/config?emailaddress=ref@club.example"}
	if s != want {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
}

// A domain a known provider hosts is recognised by its MX records.
func TestHostedDomainsByMX(t *testing.T) {
	l := Lookup{URLs: noURLs, Resolver: fakeResolver{t: t, mx: map[string][]*net.MX{
		"club.example":   {{Host: "alt1.aspmx.l.google.com.", Pref: 5}, {Host: "aspmx.l.google.com.", Pref: 1}},
		"office.example": {{Host: "office-example.mail.protection.outlook.com.", Pref: 0}},
	}}}
	for address, want := range map[string]string{"ref@club.example": "Google Workspace", "ref@office.example": "Microsoft 365"} {
		s, err := l.Find(context.Background(), address)
		if err != nil {
			t.Fatalf("%s: %v", address, err)
		}
		if s.Name != want || s.SignIn != OAuth2 || s.Source != "known provider, by MX record" {
			t.Errorf("%s: %+v, want %s by MX", address, s, want)
		}
	}
}

// RFC 6186 and RFC 8314: SRV records name the servers, the best record of
// each service first, and a target of "." means the service is not there.
func TestSRVRecords(t *testing.T) {
	l := Lookup{URLs: noURLs, Resolver: fakeResolver{t: t,
		mx: map[string][]*net.MX{"own.example": {{Host: "mx.own.example.", Pref: 10}}},
		srv: map[string][]*net.SRV{
			"_imaps._tcp.own.example": {{Target: "backup.own.example.", Port: 993, Priority: 20},
				{Target: "mail.own.example.", Port: 993, Priority: 10, Weight: 1}},
			"_submissions._tcp.own.example": {{Target: ".", Port: 0}},
			"_submission._tcp.own.example":  {{Target: "mail.own.example.", Port: 587, Priority: 0}},
		}}}
	s, err := l.Find(context.Background(), "ref@own.example")
	if err != nil {
		t.Fatal(err)
	}
	if s.IMAP != "imaps://mail.own.example:993" || s.SMTP != "smtp://mail.own.example:587" ||
		s.IMAPUsername != "ref@own.example" || s.Source != "SRV records" {
		t.Errorf("%+v", s)
	}
}

func TestNotFound(t *testing.T) {
	l := Lookup{URLs: noURLs, Resolver: fakeResolver{t: t}}
	_, err := l.Find(context.Background(), "ref@nowhere.example")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nowhere.example") || !strings.Contains(err.Error(), "SRV") {
		t.Errorf("err = %v, want ErrNotFound naming the domain and what was tried", err)
	}
	if _, err := l.Find(context.Background(), "not an address"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("a non-address: err = %v", err)
	}
}
