package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/emersion/go-message"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-message/textproto"
	"github.com/emersion/go-msgauth/authres"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/mail/provider"
	"github.com/mafiamail/mafiamail/mail/sender"
)

// trustedAuthserv is the authserv-id of the topmost Authentication-Results
// field of the test message, when that field passes the message as from
// the host's own address: the server that wrote it checks senders, and
// the host can trust what it writes. Empty otherwise.
func trustedAuthserv(header []byte, from string) string {
	th, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(header)))
	if err != nil {
		return ""
	}
	h := gomail.Header{Header: message.Header{Header: th}}
	for _, v := range h.Values("Authentication-Results") {
		id, _, _ := authres.Parse(v)
		if id == "" {
			continue
		}
		if a := inbound.CheckAuthentication(h, id, from); a.Passed() {
			return id
		}
		return ""
	}
	return ""
}

// configText is the configuration as a commented file a referee can read
// and edit.
func configText(cfg *config.Config, s provider.Settings, passwordEnv string) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("# mafiamail configuration, written by `mafiamail init`. `mafiamail check --config FILE`")
	line("# signs in to both servers with it; `mafiamail serve --config FILE` hosts games.")
	line("")
	line("# The host's own mailbox: players write to its plus-addresses (name+game@domain).")
	line("address = %s", tomlString(cfg.Address))
	line("# Who may create games (NEW GAME name, sent to the address above).")
	quoted := make([]string, len(cfg.Referees))
	for i, r := range cfg.Referees {
		quoted[i] = tomlString(r)
	}
	line("referees = [%s]", strings.Join(quoted, ", "))
	line("# The games' state: keep it, and back it up with `mafiamail games backup`.")
	line("database = %s", tomlString(cfg.Database))
	line("")
	line("# %s (%s).", s.Name, s.Source)
	for _, acct := range []struct {
		section string
		a       config.Account
	}{{"imap", cfg.IMAP.Account}, {"smtp", cfg.SMTP.Account}} {
		line("[%s]", acct.section)
		line("url = %s", tomlString(acct.a.URL))
		line("username = %s", tomlString(acct.a.Username))
		switch {
		case acct.a.Auth == config.AuthOAuth2:
			line("auth = \"oauth2\"   # signs in with the authorisation in [oauth2]")
		case passwordEnv != "":
			line("password_env = %s   # the password is read from this environment variable", tomlString(passwordEnv))
		default:
			line("password = %s   # this file is readable by its owner alone; keep it so", tomlString(acct.a.Password))
		}
		if acct.section == "smtp" {
			if p, ok := sender.KnownProvider(acct.a.URL); ok && cfg.SMTP.RecipientsPerDay > 0 {
				line("# %s lets an account send to %d recipients a day (%s); every copy counts.", p.Name, p.RecipientsPerDay, p.Note)
				line("recipients_per_day = %d", cfg.SMTP.RecipientsPerDay)
				if cfg.SMTP.MessagesPerMinute > 0 {
					line("messages_per_minute = %d", cfg.SMTP.MessagesPerMinute)
				}
			} else {
				line("# Set the provider's daily sending limit here, if it has one; without it the host learns it")
				line("# from the first refusal.")
				line("# recipients_per_day = 500")
			}
		}
		line("")
	}
	if o := cfg.OAuth2; o.Provider != "" {
		line("# The host signs in with OAuth2, as the app you registered; `mafiamail init` wrote the")
		line("# authorisation to token_file. Run it again if the provider withdraws it.")
		line("[oauth2]")
		line("provider = %s", tomlString(o.Provider))
		line("client_id = %s", tomlString(o.ClientID))
		if o.ClientSecretEnv != "" {
			line("client_secret_env = %s", tomlString(o.ClientSecretEnv))
		}
		if o.TokenURL != "" {
			line("token_url = %s", tomlString(o.TokenURL))
		}
		if o.DeviceAuthURL != "" {
			line("device_auth_url = %s", tomlString(o.DeviceAuthURL))
		}
		if len(o.Scopes) > 0 {
			quoted := make([]string, len(o.Scopes))
			for i, sc := range o.Scopes {
				quoted[i] = tomlString(sc)
			}
			line("scopes = [%s]", strings.Join(quoted, ", "))
		}
		line("token_file = %s", tomlString(o.TokenFile))
		line("")
	}
	line("[auth]")
	if cfg.Auth.AuthservID != "" {
		line("# The receiving server that checks who sent each message, as its Authentication-Results")
		line("# showed on a test message.")
		line("authserv_id = %s", tomlString(cfg.Auth.AuthservID))
	} else {
		line("# No receiving server's Authentication-Results could be trusted: NEW GAME and JOIN take")
		line("# effect once their sender replies to a confirmation. Set it if you know your provider's.")
		line("# authserv_id = \"mx.example.org\"")
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
