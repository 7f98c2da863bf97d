package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/config"
)

// check names the provider's documented sending limit for the hosts it
// knows, suggests it while unset, and says when nothing is known.
func TestCheckNamesTheSendingLimit(t *testing.T) {
	for _, tc := range []struct {
		url  string
		set  int
		want []string
	}{
		{"smtps://smtp.gmail.com", 0, []string{"Gmail documents 500 recipients a day", "set it to 500"}},
		{"smtp://smtp-mail.outlook.com", 0, []string{"Outlook.com documents 300", "set it to 300"}},
		{"smtp://smtp.office365.com", 0, []string{"Microsoft 365 documents 10000", "messages_per_minute to 30"}},
		{"smtps://smtp.mail.yahoo.com", 500, []string{"500 recipients a day; Yahoo Mail documents 500"}},
		{"smtps://smtp.fastmail.com", 0, []string{"Fastmail documents no single figure"}},
		{"smtps://smtp.gmail.com", 900, []string{"more than the 500 Gmail documents"}},
		{"smtp://mail.example.net", 0, []string{"not set; the host learns it"}},
	} {
		cfg := config.Defaults()
		cfg.SMTP.URL, cfg.SMTP.RecipientsPerDay = tc.url, tc.set
		var out bytes.Buffer
		checkBudget(&cfg, &out)
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s with %d: %q lacks %q", tc.url, tc.set, out.String(), w)
			}
		}
	}
}
