package config

import (
	"slices"
	"strings"
	"testing"
)

const oauthConfig = `address = "mafia@outlook.com"
referees = ["ref@example.org"]

[imap]
url = "imaps://outlook.office365.com"
username = "mafia@outlook.com"
auth = "oauth2"

[smtp]
url = "smtp://smtp-mail.outlook.com:587"
username = "mafia@outlook.com"
auth = "oauth2"

[oauth2]
provider = "microsoft"
client_id = "0b1c-client"
client_secret_env = "OAUTH_SECRET"
token_file = "/var/lib/mafiamail/oauth2-token.json"
`

func TestOAuth2MicrosoftPreset(t *testing.T) {
	c, err := Parse([]byte(oauthConfig), "m.toml", env(map[string]string{"OAUTH_SECRET": "sh"}))
	if err != nil {
		t.Fatal(err)
	}
	o := c.OAuth2
	if !c.UsesOAuth2() || o.ClientSecret != "sh" ||
		o.TokenURL != "https://login.microsoftonline.com/common/oauth2/v2.0/token" ||
		o.DeviceAuthURL != "https://login.microsoftonline.com/common/oauth2/v2.0/devicecode" ||
		!slices.Equal(o.Scopes, []string{"https://outlook.office.com/IMAP.AccessAsUser.All", "https://outlook.office.com/SMTP.Send", "offline_access"}) {
		t.Fatalf("%+v", o)
	}
}

func TestOAuth2GooglePresetAndOverride(t *testing.T) {
	edited := strings.Replace(oauthConfig, `provider = "microsoft"`, "provider = \"google\"\ndevice_auth_url = \"https://accounts.example.org/device\"", 1)
	c, err := Parse([]byte(edited), "m.toml", env(map[string]string{"OAUTH_SECRET": "sh"}))
	if err != nil {
		t.Fatal(err)
	}
	if o := c.OAuth2; o.TokenURL != "https://oauth2.googleapis.com/token" || o.DeviceAuthURL != "https://accounts.example.org/device" ||
		!slices.Equal(o.Scopes, []string{"https://mail.google.com/"}) {
		t.Fatalf("%+v", o)
	}
}

func TestOAuth2OnOneAccountOnly(t *testing.T) {
	// The IMAP account keeps its password; only SMTP uses OAuth2.
	edited := strings.Replace(oauthConfig, "username = \"mafia@outlook.com\"\nauth = \"oauth2\"\n\n[smtp]",
		"username = \"mafia@outlook.com\"\npassword = \"pw\"\n\n[smtp]", 1)
	c, err := Parse([]byte(edited), "m.toml", env(map[string]string{"OAUTH_SECRET": "sh"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.IMAP.Auth != "" || c.IMAP.Password != "pw" || c.SMTP.Auth != AuthOAuth2 {
		t.Fatalf("imap %+v smtp %+v", c.IMAP.Account, c.SMTP.Account)
	}
}

func TestOAuth2Errors(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		want           []string
	}{
		{"unknown provider", `provider = "microsoft"`, `provider = "yahoo"`,
			[]string{`m.toml:15: oauth2.provider: must be google, microsoft or custom, not "yahoo"`}},
		{"custom without endpoint", `provider = "microsoft"`, `provider = "custom"`,
			[]string{"oauth2.token_url: is missing", "oauth2.scopes: is missing"}},
		{"custom over plain http", `provider = "microsoft"`, "provider = \"custom\"\ntoken_url = \"http://auth.example.org/token\"\nscopes = [\"mail\"]",
			[]string{`oauth2.token_url: "http://auth.example.org/token" must be https`}},
		{"no client id", `client_id = "0b1c-client"`, ``, []string{"oauth2.client_id: is missing"}},
		{"no token file", `token_file = "/var/lib/mafiamail/oauth2-token.json"`, ``, []string{"oauth2.token_file: is missing"}},
		{"both secrets", `client_secret_env = "OAUTH_SECRET"`, "client_secret_env = \"OAUTH_SECRET\"\nclient_secret = \"x\"",
			[]string{"give client_secret or client_secret_env, not both"}},
		{"password too", "auth = \"oauth2\"\n\n[smtp]", "auth = \"oauth2\"\npassword = \"pw\"\n\n[smtp]",
			[]string{`imap.password: is not used with auth = "oauth2"`}},
		{"bad auth", "auth = \"oauth2\"\n\n[smtp]", "auth = \"token\"\n\n[smtp]",
			[]string{`m.toml:7: imap.auth: must be "password" or "oauth2", not "token"`}},
		{"no section", oauthConfig[strings.Index(oauthConfig, "[oauth2]"):], "", []string{"oauth2.provider: is missing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			edited := strings.Replace(oauthConfig, c.from, c.to, 1)
			_, err := Parse([]byte(edited), "m.toml", env(map[string]string{"OAUTH_SECRET": "sh"}))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestOAuth2SectionWithoutUse(t *testing.T) {
	_, err := Parse([]byte(good+"\n[oauth2]\nprovider = \"google\"\n"), "m.toml", env(map[string]string{"IMAP_PW": "pw"}))
	if err == nil || !strings.Contains(err.Error(), `oauth2: is set, but neither [imap] nor [smtp] has auth = "oauth2"`) {
		t.Fatalf("err = %v", err)
	}
}
