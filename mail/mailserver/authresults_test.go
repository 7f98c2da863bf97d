package mailserver

import (
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/mail/inbound"
)

// The server says in Authentication-Results whether the sender logged in
// as the From address, and a reader that trusts it (the host's
// authentication check) passes exactly those messages.
func TestAuthenticationResultsSayWhoLoggedIn(t *testing.T) {
	s := start(t, Config{Domain: "example.org", ExtraDomains: []string{"example.net"}, AuthResults: true,
		Users: map[string]string{"host": "hostpw", "alice": "alicepw", "eve": "evepw"}})
	if got := s.AuthServID(); got != "example.org" {
		t.Fatalf("AuthServID() = %q, want the domain", got)
	}
	msg := func(from, extra string) string {
		return "From: " + from + "\r\n" + extra + "To: host@example.org\r\nSubject: hi\r\n\r\nJOIN Alice\r\n"
	}
	forged := "Authentication-Results: example.org; auth=pass smtp.auth=alice@example.org\r\n"
	tests := []struct {
		name, user, pass, from, extra string
		want                          string // the field the server writes
		passes                        bool
	}{
		{"logged in as the From address", "alice", "alicepw", "Alice <alice@example.org>", "",
			"example.org; auth=pass smtp.auth=alice@example.org", true},
		{"another of the server's domains, a plus tag", "alice", "alicepw", "alice+games@Example.NET", "",
			"example.org; auth=pass smtp.auth=alice+games@example.net", true},
		{"logged in as someone else", "eve", "evepw", "alice@example.org", "",
			"example.org; auth=pass smtp.auth=eve@example.org", false},
		{"not logged in", "", "", "alice@example.org", "",
			"example.org; auth=none", false},
		{"a field written in advance is removed", "", "", "alice@example.org", forged,
			"example.org; auth=none", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := send(t, s, tt.user, tt.pass, "x@example.org", []string{"host@example.org"}, msg(tt.from, tt.extra)); err != nil {
				t.Fatalf("send: %v", err)
			}
			c := login(t, s, "host", "hostpw", nil)
			_, msgs := readInbox(t, c)
			if len(msgs) != i+1 {
				t.Fatalf("host has %d messages, want %d", len(msgs), i+1)
			}
			got := body(msgs[i])
			if n := strings.Count(got, "Authentication-Results:"); n != 1 {
				t.Fatalf("the delivered message has %d Authentication-Results fields, want the server's one:\n%s", n, got)
			}
			r, err := mail.CreateReader(strings.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if v := r.Header.Get("Authentication-Results"); v != tt.want {
				t.Errorf("Authentication-Results: %q, want %q", v, tt.want)
			}
			from, err := r.Header.AddressList("From")
			if err != nil || len(from) != 1 {
				t.Fatalf("From: %v %v", from, err)
			}
			a := inbound.CheckAuthentication(r.Header, s.AuthServID(), from[0].Address)
			if a.Passed() != tt.passes {
				t.Errorf("the host's check reads %+v, want passed=%v", a, tt.passes)
			}
		})
	}
}

// Without AuthResults the server writes no such field and names no
// authserv-id.
func TestNoAuthenticationResultsByDefault(t *testing.T) {
	s := start(t, Config{Users: map[string]string{"host": "hostpw", "alice": "alicepw"}})
	if s.AuthServID() != "" {
		t.Fatalf("AuthServID() = %q without AuthResults", s.AuthServID())
	}
	if err := send(t, s, "alice", "alicepw", "alice@example.org", []string{"host@example.org"}, note); err != nil {
		t.Fatal(err)
	}
	_, msgs := readInbox(t, login(t, s, "host", "hostpw", nil))
	if len(msgs) != 1 || strings.Contains(body(msgs[0]), "Authentication-Results") {
		t.Fatalf("want one message without Authentication-Results, got %d", len(msgs))
	}
}
