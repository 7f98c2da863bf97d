package inbound

import (
	"fmt"
	"strings"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/authres"
	"golang.org/x/net/publicsuffix"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// AuthResult is what the trusted Authentication-Results field says about a
// message's From domain.
type AuthResult struct {
	AuthServID string `json:"authserv_id"`
	// Result is "pass", "fail", or "none" when no field from AuthServID
	// is present.
	Result string `json:"result"`
	// Method is what passed: "dmarc"; "auth", the receiving server's own
	// SMTP AUTH as the From address; or "dkim"/"spf" aligned with the From
	// domain.
	Method string `json:"method,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Why is Detail as its format and arguments, for a failure that a
	// refusal names: the refused sender reads it in their language.
	Why *phrase.Error `json:"-"`
}

// fail sets the detail of a failure.
func (a *AuthResult) fail(why *phrase.Error) { a.Detail, a.Why = why.Error(), why }

// Passed reports a pass.
func (a *AuthResult) Passed() bool { return a != nil && a.Result == "pass" }

// CheckAuthentication reads the topmost Authentication-Results field whose
// authserv-id is authservID (RFC 8601 section 5: fields from any other id,
// and any further ones below it, may have been written by anyone on the way
// and are ignored). The message passes with DMARC pass for fromDomain, or,
// when the field has no DMARC verdict, with a DKIM or SPF pass whose domain
// is aligned with fromDomain (same organisational domain, RFC 7489 relaxed
// alignment). An auth=pass whose smtp.auth is the From address itself
// passes too: the trusted server logged the sender in as that very
// mailbox (RFC 8601 section 2.7.4), as a server does that hosts both the
// players' mailboxes and the host's.
func CheckAuthentication(h mail.Header, authservID, from string) AuthResult {
	res := AuthResult{AuthServID: authservID, Result: "none"}
	fromDomain := domainOf(from)
	var field string
	found := false
	for _, v := range h.Values("Authentication-Results") {
		clean, _ := sanitizeAuthResults(v)
		id, _, _ := authres.Parse(clean)
		if strings.EqualFold(id, authservID) {
			field, found = v, true
			break
		}
	}
	if !found {
		res.fail(phrase.Errorf("no Authentication-Results field from %s", authservID))
		return res
	}
	// A field that cannot be read in full counts as a failure: a pass must
	// be stated in full to count, and nothing unreadable may hide a fail.
	clean, readable := sanitizeAuthResults(field)
	res.Result = "fail"
	if !readable {
		// A comment or quoted string left open would swallow every
		// result after it (a dmarc=fail among them): no result of such a
		// field counts.
		res.fail(phrase.Errorf("the Authentication-Results field of %s cannot be read: a comment or quoted string in it is not closed", authservID))
		return res
	}
	_, results, err := authres.Parse(clean)
	if err != nil {
		// The library stops at a result it cannot read, and what came
		// after it (a dmarc=fail among them) would be lost: no result of
		// such a field counts.
		res.fail(phrase.Errorf("the Authentication-Results field of %s cannot be read: %v", authservID, err))
		return res
	}

	var dmarc *authres.DMARCResult
	var seen []string
	dkimAligned, spfAligned := "", ""
	authAs := ""
	for _, r := range results {
		switch r := r.(type) {
		case *authres.AuthResult:
			seen = append(seen, "auth="+string(r.Value))
			if r.Value == authres.ResultPass && from != "" && strings.EqualFold(r.Auth, from) {
				authAs = r.Auth
			}
		case *authres.DMARCResult:
			seen = append(seen, "dmarc="+string(r.Value))
			if dmarc == nil || r.Value != authres.ResultPass {
				dmarc = r
			}
		case *authres.DKIMResult:
			seen = append(seen, "dkim="+string(r.Value))
			d := r.Domain
			if d == "" {
				d = domainOf(r.Identifier)
			}
			if r.Value == authres.ResultPass && aligned(d, fromDomain) && dkimAligned == "" {
				dkimAligned = d
			}
		case *authres.SPFResult:
			seen = append(seen, "spf="+string(r.Value))
			d := domainOf(r.From)
			if d == "" {
				d = r.From
			}
			if r.Value == authres.ResultPass && aligned(d, fromDomain) && spfAligned == "" {
				spfAligned = d
			}
		}
	}
	summary := strings.Join(seen, " ")
	var said any = summary // the results themselves are no words to translate
	if summary == "" {
		none := phrase.Errorf("no dmarc, auth, dkim or spf result")
		summary, said = none.Error(), none
	}
	switch {
	case dmarc != nil && dmarc.Value == authres.ResultPass &&
		(dmarc.From == "" || strings.EqualFold(dmarc.From, fromDomain)):
		res.Result, res.Method, res.Detail = "pass", "dmarc", summary
	case dmarc != nil && dmarc.Value == authres.ResultPass:
		res.fail(phrase.Errorf("dmarc=pass is for %s, not for the From domain %s", dmarc.From, fromDomain))
	case dmarc != nil && (dmarc.Value == authres.ResultFail || dmarc.Value == authres.ResultPolicy):
		res.Detail = summary
	case authAs != "":
		res.Result, res.Method, res.Detail = "pass", "auth", fmt.Sprintf("%s (logged in as %s)", summary, authAs)
	case dkimAligned != "":
		res.Result, res.Method, res.Detail = "pass", "dkim", fmt.Sprintf("%s (dkim %s aligned with %s)", summary, dkimAligned, fromDomain)
	case spfAligned != "":
		res.Result, res.Method, res.Detail = "pass", "spf", fmt.Sprintf("%s (spf %s aligned with %s)", summary, spfAligned, fromDomain)
	default:
		res.fail(phrase.Errorf("%s; nothing that passed is aligned with %s", said, fromDomain))
	}
	return res
}

// sanitizeAuthResults prepares a field value for authres.Parse, which splits
// on ";" and spaces without regard to RFC 5322 syntax: comments are removed
// (they hold free text such as "google.com: domain of … designates …"), and
// every quoted string is replaced by a placeholder so that a value the
// sender controls (smtp.mailfrom="a;dmarc=pass"@evil.example) cannot add a
// result of its own. It reports whether every comment and quoted string
// was closed: if not, what followed the opening is lost, and the field
// cannot be read.
func sanitizeAuthResults(v string) (string, bool) {
	var b strings.Builder
	depth := 0
	quoted, escaped := false, false
	for _, r := range v {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && (quoted || depth > 0):
			escaped = true
		case quoted:
			if r == '"' {
				quoted = false
				b.WriteString(`quoted"`)
			}
		case depth == 0 && r == '"':
			quoted = true
			b.WriteRune(r)
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
			if depth == 0 {
				b.WriteByte(' ')
			}
		case depth == 0:
			b.WriteRune(r)
		}
	}
	if quoted {
		b.WriteString(`quoted"`)
	}
	return b.String(), depth == 0 && !quoted && !escaped
}

// domainOf returns the domain of an address or of "@domain".
func domainOf(s string) string {
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		return strings.ToLower(s[i+1:])
	}
	return ""
}

// aligned reports relaxed alignment: both domains have the same
// organisational domain (the registrable domain under the public suffix
// list).
func aligned(a, b string) bool {
	a, b = strings.ToLower(strings.TrimSuffix(a, ".")), strings.ToLower(strings.TrimSuffix(b, "."))
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	oa, err1 := publicsuffix.EffectiveTLDPlusOne(a)
	ob, err2 := publicsuffix.EffectiveTLDPlusOne(b)
	return err1 == nil && err2 == nil && oa == ob
}
