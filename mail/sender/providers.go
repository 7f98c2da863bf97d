package sender

import (
	"strings"

	"github.com/mafiamail/mafiamail/mail/mailurl"
)

// Provider is what a mailbox provider documents of its sending limits.
type Provider struct {
	// Name is the provider's product, as users know it.
	Name string
	// RecipientsPerDay is the documented limit of recipients in a rolling
	// day (every copy counts), 0 when it depends on the plan;
	// MessagesPerMinute likewise, 0 for none documented.
	RecipientsPerDay  int
	MessagesPerMinute int
	// Note says what the figure depends on.
	Note string
}

// providers maps submission host names to what their providers document;
// docs/mail.md ("Sending limits") gives the sources.
var providers = map[string]Provider{
	"smtp.gmail.com": {Name: "Gmail", RecipientsPerDay: 500,
		Note: "free Gmail; a Google Workspace account may send to 2,000"},
	"smtp-mail.outlook.com": {Name: "Outlook.com", RecipientsPerDay: 300,
		Note: "new accounts may send to far fewer at first"},
	"smtp.office365.com": {Name: "Microsoft 365", RecipientsPerDay: 10000, MessagesPerMinute: 30,
		Note: "an administrator may have set a lower limit"},
	"smtp.mail.yahoo.com": {Name: "Yahoo Mail", RecipientsPerDay: 500,
		Note: "at most 100 recipients in one message"},
	"smtp.fastmail.com": {Name: "Fastmail",
		Note: "the limit depends on the plan; see Fastmail's help on sending limits"},
}

// KnownProvider returns what the provider of the SMTP URL raw documents
// of its limits, when it is one the host knows.
func KnownProvider(raw string) (Provider, bool) {
	ep, err := mailurl.Parse(raw, mailurl.SMTP)
	if err != nil {
		return Provider{}, false
	}
	p, ok := providers[strings.ToLower(strings.TrimSuffix(ep.Host, "."))]
	return p, ok
}
