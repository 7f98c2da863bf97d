package config

import (
	"strings"
	"testing"
	"time"
)

const good = `address = "mafia@example.org"
referees = ["ref@example.org"]
database = "/var/lib/mafiamail/games.db"

[imap]
url = "imaps://imap.example.org"
username = "mafia@example.org"
password_env = "IMAP_PW"

[smtp]
url = "smtps://smtp.example.org:465"
username = "mafia@example.org"
password = "s3cret"

[auth]
authserv_id = "mx.example.org"
`

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseGood(t *testing.T) {
	c, err := Parse([]byte(good), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.IMAP.Password != "pw" || c.SMTP.Password != "s3cret" || c.IMAP.Mailbox != "INBOX" || c.Speed != 1 ||
		c.Auth.AuthservID != "mx.example.org" || c.Limits.MaxMessageBytes != 10<<20 {
		t.Fatalf("%+v", c)
	}
}

func TestTimeouts(t *testing.T) {
	edited := strings.Replace(good, "[smtp]", "timeout = \"20s\"\nidle_refresh = \"90s\"\n[smtp]\ntimeout = \"3m\"", 1)
	c, err := Parse([]byte(edited), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(c.IMAP.Timeout) != 20*time.Second || time.Duration(c.IMAP.IdleRefresh) != 90*time.Second ||
		time.Duration(c.SMTP.Timeout) != 3*time.Minute {
		t.Fatalf("timeouts: imap %v, idle refresh %v, smtp %v", c.IMAP.Timeout, c.IMAP.IdleRefresh, c.SMTP.Timeout)
	}
	// Left out, they are zero: the clients' own defaults apply.
	c, err = Parse([]byte(good), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.IMAP.Timeout != 0 || c.IMAP.IdleRefresh != 0 || c.SMTP.Timeout != 0 {
		t.Fatalf("defaults: %+v %+v", c.IMAP, c.SMTP)
	}
}

func TestSMTPConnections(t *testing.T) {
	edited := strings.Replace(good, "[smtp]", "[smtp]\nconnections = 8", 1)
	c, err := Parse([]byte(edited), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SMTP.Connections != 8 {
		t.Fatalf("connections = %d, want 8", c.SMTP.Connections)
	}
	// Left out, it is zero: the sender's default applies.
	c, err = Parse([]byte(good), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SMTP.Connections != 0 {
		t.Fatalf("connections left out = %d, want 0", c.SMTP.Connections)
	}
}

func TestSMTPWithoutAuthentication(t *testing.T) {
	edited := strings.Replace(good, "username = \"mafia@example.org\"\npassword = \"s3cret\"", "", 1)
	c, err := Parse([]byte(edited), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.SMTP.Username != "" || c.SMTP.Password != "" {
		t.Fatalf("smtp: %+v", c.SMTP)
	}
	// A password without a username is a mistake, not a choice.
	edited = strings.Replace(good, "username = \"mafia@example.org\"\npassword = \"s3cret\"", "password = \"s3cret\"", 1)
	if _, err := Parse([]byte(edited), "m.toml", env(map[string]string{"IMAP_PW": "pw"})); err == nil ||
		!strings.Contains(err.Error(), "smtp.username: is missing: a password is given") {
		t.Fatalf("got %v", err)
	}
}

func TestErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct {
		name, edit, want string
	}{
		{"unknown key", strings.Replace(good, "[auth]", "[auth]\ncolour = \"red\"", 1), "m.toml:16: auth.colour: unknown key"},
		{"unknown top key", "speeed = 3\n" + good, "m.toml:1: speeed: unknown key"},
		{"bad type", strings.Replace(good, `database = "/var/lib/mafiamail/games.db"`, "database = 3", 1), "m.toml:3"},
		{"bad scheme", strings.Replace(good, "imaps://imap", "http://imap", 1), "m.toml:6: imap.url: URL scheme \"http\""},
		{"env missing", good, "m.toml:8: imap.password_env: environment variable IMAP_PW is not set"},
		{"plus address", strings.Replace(good, `address = "mafia@`, `address = "mafia+x@`, 1), "m.toml:1: address:"},
		{"no referees", strings.Replace(good, `referees = ["ref@example.org"]`, `referees = []`, 1), "m.toml:2: referees"},
		{"speed", "speed = 0\n" + good, "m.toml:1: speed: must be between"},
		{"syntax", good + "\n[imap\n", "m.toml"},
		{"not a duration", strings.Replace(good, "[smtp]", "[smtp]\ntimeout = \"soon\"", 1), "m.toml:11: smtp.timeout: toml: \"soon\" is not a duration"},
		{"timeout too short", strings.Replace(good, "[smtp]", "[smtp]\ntimeout = \"10ms\"", 1), "m.toml:11: smtp.timeout: must be between 1s and 1h"},
		{"too many connections", strings.Replace(good, "[smtp]", "[smtp]\nconnections = 33", 1), "m.toml:11: smtp.connections: must be between 1 and 32"},
		{"negative connections", strings.Replace(good, "[smtp]", "[smtp]\nconnections = -1", 1), "m.toml:11: smtp.connections: must be between 1 and 32"},
		{"connections not a number", strings.Replace(good, "[smtp]", "[smtp]\nconnections = \"four\"", 1), "m.toml:11: smtp.connections"},
		{"idle refresh too long", strings.Replace(good, "[smtp]", "idle_refresh = \"45m\"\n[smtp]", 1), "m.toml:10: imap.idle_refresh: must be between 1s and 29m"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := map[string]string{"IMAP_PW": "pw"}
			if c.name == "env missing" {
				vars = nil
			}
			_, err := Parse([]byte(c.edit), "m.toml", env(vars))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
