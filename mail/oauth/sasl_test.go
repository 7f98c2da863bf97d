package oauth_test

import (
	"errors"
	"testing"

	"github.com/mafiamail/mafiamail/mail/oauth"
)

func TestXOAuth2ClientEncoding(t *testing.T) {
	c := oauth.NewXOAuth2Client("mafia@example.org", "ya29.token")
	mech, ir, err := c.Start()
	if err != nil || mech != "XOAUTH2" {
		t.Fatalf("Start = %q, %v", mech, err)
	}
	if want := "user=mafia@example.org\x01auth=Bearer ya29.token\x01\x01"; string(ir) != want {
		t.Errorf("initial response %q, want %q", ir, want)
	}
	// A refusal is a JSON challenge, answered with an empty response.
	resp, err := c.Next([]byte(`{"status":"401","schemes":"bearer","scope":"https://mail.google.com/"}`))
	if err != nil || resp == nil || len(resp) != 0 {
		t.Fatalf("answer to the refusal = %q, %v; want an empty response", resp, err)
	}
	// Should the server go on, the client gives up with the refusal.
	_, err = c.Next([]byte("more"))
	var xe *oauth.XOAuth2Error
	if !errors.As(err, &xe) || xe.Status != "401" {
		t.Errorf("second challenge: %v, want the XOAUTH2 refusal with status 401", err)
	}
}

func TestXOAuth2Server(t *testing.T) {
	refused := errors.New("refused")
	check := func(user, token string) error {
		if user == "mafia@example.org" && token == "good" {
			return nil
		}
		return refused
	}
	s := oauth.NewXOAuth2Server(check)
	if _, done, err := s.Next([]byte("user=mafia@example.org\x01auth=Bearer good\x01\x01")); !done || err != nil {
		t.Errorf("good token: done %v, err %v", done, err)
	}
	s = oauth.NewXOAuth2Server(check)
	ch, done, err := s.Next([]byte("user=mafia@example.org\x01auth=Bearer bad\x01\x01"))
	if done || err != nil || len(ch) == 0 {
		t.Fatalf("bad token: challenge %q, done %v, err %v; want a JSON challenge", ch, done, err)
	}
	if _, done, err := s.Next([]byte{}); !done || !errors.Is(err, refused) {
		t.Errorf("after the empty answer: done %v, err %v; want the check's error", done, err)
	}
}

func TestMechanismPrefersOAuthBearer(t *testing.T) {
	for _, c := range []struct {
		offered []string
		want    string
	}{
		{[]string{"PLAIN", "XOAUTH2", "OAUTHBEARER"}, "OAUTHBEARER"},
		{[]string{"PLAIN", "xoauth2"}, "XOAUTH2"},
		{[]string{"PLAIN", "LOGIN"}, ""},
	} {
		got, err := oauth.Mechanism(c.offered)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("Mechanism(%v) = %q, %v; want %q", c.offered, got, err, c.want)
		}
	}
}

func TestOAuthBearerClientAnswersTheErrorChallenge(t *testing.T) {
	c := oauth.NewOAuthBearerClient("mafia@example.org", "tok")
	mech, ir, _ := c.Start()
	if want := "n,a=mafia@example.org,\x01auth=Bearer tok\x01\x01"; mech != "OAUTHBEARER" || string(ir) != want {
		t.Errorf("Start = %q, %q; want OAUTHBEARER, %q", mech, ir, want)
	}
	resp, err := c.Next([]byte(`{"status":"invalid_token","schemes":"bearer"}`))
	if err != nil || string(resp) != "\x01" {
		t.Errorf("answer to the error challenge = %q, %v; want %%x01", resp, err)
	}
}
