package mailurl

import (
	"crypto/tls"
	"strings"
	"testing"
)

func TestPolicy(t *testing.T) {
	for _, tc := range []struct {
		url     string
		schemes Schemes
		addr    string
		sec     Security
	}{
		{"imaps://imap.example.org", IMAP, "imap.example.org:993", TLS},
		{"imaps://imap.example.org:1993/", IMAP, "imap.example.org:1993", TLS},
		{"IMAPS://127.0.0.1", IMAP, "127.0.0.1:993", TLS},
		{"imap://imap.example.org", IMAP, "imap.example.org:143", StartTLS},
		{"imap://192.0.2.7", IMAP, "192.0.2.7:143", StartTLS},
		{"imap://[2001:db8::1]:143", IMAP, "[2001:db8::1]:143", StartTLS},
		{"imap://10.0.0.1", IMAP, "10.0.0.1:143", StartTLS},
		// Names are not resolved: only "localhost" itself counts.
		{"imap://localhost.example.org", IMAP, "localhost.example.org:143", StartTLS},
		{"imap://mail.localhost", IMAP, "mail.localhost:143", StartTLS},
		{"imap://localhost:1143", IMAP, "localhost:1143", Plain},
		{"imap://LOCALHOST", IMAP, "LOCALHOST:143", Plain},
		{"imap://127.1.2.3", IMAP, "127.1.2.3:143", Plain},
		{"imap://[::1]:40001", IMAP, "[::1]:40001", Plain},
		{"smtps://smtp.example.org", SMTP, "smtp.example.org:465", TLS},
		{"SMTPS://smtp.example.org:2465/", SMTP, "smtp.example.org:2465", TLS},
		{"smtp://smtp.example.org", SMTP, "smtp.example.org:587", StartTLS},
		{"smtp://smtp.example.org:25", SMTP, "smtp.example.org:25", StartTLS},
		{"smtp://127.0.0.1:2525", SMTP, "127.0.0.1:2525", Plain},
		{"smtp://[::1]:2525", SMTP, "[::1]:2525", Plain},
	} {
		ep, err := Parse(tc.url, tc.schemes)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.url, err)
			continue
		}
		if ep.Addr != tc.addr || ep.Security != tc.sec {
			t.Errorf("Parse(%q) = %s %v, want %s %v", tc.url, ep.Addr, ep.Security, tc.addr, tc.sec)
		}
	}
}

func TestRefused(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://imap.example.org", `scheme "http"`},
		{"smtps://imap.example.org", `scheme "smtps"`},
		{"imaps://user:secret@imap.example.org", "credentials"},
		{"imaps://imap.example.org/INBOX", "scheme://host[:port] only"},
		{"imaps://imap.example.org?x=1", "scheme://host[:port] only"},
		{"imaps://", "no host"},
		{"imaps://imap example.org", "invalid URL"},
	} {
		_, err := Parse(tc.url, IMAP)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q): %v, want an error about %s", tc.url, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q): the error shows the password: %v", tc.url, err)
		}
	}
}

func TestTLSConfig(t *testing.T) {
	ep, err := Parse("imaps://imap.example.org", IMAP)
	if err != nil {
		t.Fatal(err)
	}
	tc := ep.TLSConfig(nil)
	if tc.ServerName != "imap.example.org" || tc.MinVersion != tls.VersionTLS12 {
		t.Fatalf("%+v", tc)
	}
	base := &tls.Config{ServerName: "other.example.org", InsecureSkipVerify: true}
	tc = ep.TLSConfig(base)
	if tc.ServerName != "other.example.org" || !tc.InsecureSkipVerify || tc == base {
		t.Fatalf("the base must be copied and kept: %+v", tc)
	}
}
