package inbound

import (
	"regexp"
	"strings"

	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/message"
)

// Reasons a message is ignored (never answered, docs/design.md "Never answer").
const (
	ReasonOwnMail        = "own-mail"        // the host's own mail came back
	ReasonBounce         = "bounce"          // a permanent delivery failure
	ReasonDeliveryReport = "delivery-report" // a delay or success notice
	ReasonAutoReply      = "auto-reply"      // vacation, out of office, read receipts
	ReasonBulk           = "bulk"            // Precedence bulk/junk/list, mailing lists
	ReasonNullSender     = "null-sender"     // empty return path: RFC 5321 forbids replies
)

// outOfOfficeSubject matches the subjects auto-responders use: Outlook's
// "Automatic reply:" and the like in the four languages the host reads,
// "Out of Office:" and "Abwesenheitsnotiz:". A colon is required, and words
// a person might start a subject with ("Vacation:", "Absence:") are left
// out, so that a player's own message is never taken for one.
var outOfOfficeSubject = regexp.MustCompile(`(?i)^\s*(?:` +
	`automatic reply|auto[- ]?reply|automatic response|auto[- ]?response|out of (?:the )?office|` +
	`automatische antwort|abwesenheitsnotiz|` +
	`réponse automatique|reponse automatique|` +
	`respuesta automática|respuesta automatica|fuera de la oficina` +
	`)\s*:`)

// neverAnswer reports why m must get no answer, or nil. The order matters
// only for the reason given: the host's own mail first (a loop), then
// bounces (which are counted against the address), then other automatic
// mail.
func neverAnswer(m *message.Parsed, cfg Config) *Verdict {
	ignore := func(reason string, why *phrase.Error) *Verdict {
		v := &Verdict{Kind: Ignored, Reason: reason}
		v.explain(why)
		return v
	}
	h := &m.Header

	// The host's own mail: its X-Mafiamail-* fields, its List-Id, its
	// From, or its X-Loop.
	fields := h.Fields()
	for fields.Next() {
		if strings.HasPrefix(strings.ToLower(fields.Key()), "x-mafiamail-") {
			return ignore(ReasonOwnMail, phrase.Errorf("it carries the host's own %s field", fields.Key()))
		}
	}
	if id := listID(h.Get("List-Id")); id != "" && (id == cfg.ListIDDomain || strings.HasSuffix(id, "."+cfg.ListIDDomain)) {
		return ignore(ReasonOwnMail, phrase.Errorf("it carries the host's own List-Id <%s>", id))
	}
	hostLocal, hostDomain, _ := splitAddress(cfg.HostAddress)
	for _, a := range m.From {
		l, d, ok := splitAddress(a.Address)
		if ok && d == hostDomain && (l == hostLocal || strings.HasPrefix(l, hostLocal+"+")) {
			return ignore(ReasonOwnMail, phrase.Errorf("it is from the host's own address %s", a.Address))
		}
	}
	for _, v := range h.Values("X-Loop") {
		if sameAddress(strings.Trim(strings.TrimSpace(v), "<>"), cfg.HostAddress) {
			return ignore(ReasonOwnMail, phrase.Errorf("its X-Loop field names the host"))
		}
	}

	// Bounces: a delivery status notification, Exim's X-Failed-Recipients,
	// or mail from a mailer daemon.
	typ, params, _ := h.ContentType()
	isReport := strings.EqualFold(typ, "multipart/report")
	reportType := strings.ToLower(params["report-type"])
	fromLocal := ""
	if len(m.From) > 0 {
		fromLocal, _, _ = splitAddress(m.From[0].Address)
	}
	failed := h.Get("X-Failed-Recipients")
	if isReport && strings.Contains(reportType, "delivery-status") || failed != "" || fromLocal == "mailer-daemon" {
		v := ignore(ReasonBounce, phrase.Errorf("it is a delivery failure notice (bounce)"))
		switch {
		case m.Report != nil && !m.Report.Failed():
			v.Reason = ReasonDeliveryReport
			v.explain(phrase.Errorf("it is a delivery status notice (action %q) for %s, not a failure", m.Report.Action, m.Report.Recipient))
		case m.Report != nil:
			v.Bounce, v.BouncedAddress = true, m.Report.Recipient
			if m.Report.Status == "" {
				v.explain(phrase.Errorf("it is a delivery failure notice: mail to %s failed (no status)", m.Report.Recipient))
			} else {
				v.explain(phrase.Errorf("it is a delivery failure notice: mail to %s failed (%s)", m.Report.Recipient, m.Report.Status))
			}
		case failed != "":
			v.Bounce = true
			if list := addresses(failed); len(list) > 0 {
				v.BouncedAddress = strings.ToLower(list[0])
				v.explain(phrase.Errorf("it is a delivery failure notice: mail to %s failed", v.BouncedAddress))
			}
		default:
			v.Bounce = true
			v.explain(phrase.Errorf("it is from a mailer daemon; the failed address could not be read from it"))
		}
		return v
	}

	// RFC 3834: Auto-Submitted other than "no".
	if as := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); as != "" && !strings.HasPrefix(as, "no") {
		return ignore(ReasonAutoReply, phrase.Errorf("its Auto-Submitted field is %q", as))
	}
	if isReport {
		// Read receipts (disposition-notification) and other reports.
		return ignore(ReasonAutoReply, phrase.Errorf("it is an automatic report (%s)", firstNonEmpty(reportType, "multipart/report")))
	}
	if p := strings.ToLower(strings.TrimSpace(h.Get("Precedence"))); p == "bulk" || p == "junk" || p == "list" || p == "auto_reply" {
		return ignore(ReasonBulk, phrase.Errorf("its Precedence field is %q", p))
	}
	for _, f := range []string{"X-Autoreply", "X-Autorespond", "X-Autoresponder"} {
		if h.Get(f) != "" {
			return ignore(ReasonAutoReply, phrase.Errorf("it carries %s", f))
		}
	}
	// Exchange marks its out-of-office replies so; ordinary mail from
	// Outlook does not carry the field.
	if v := h.Get("X-Auto-Response-Suppress"); v != "" {
		lv := strings.ToLower(v)
		if strings.Contains(lv, "all") || strings.Contains(lv, "oof") || strings.Contains(lv, "autoreply") {
			return ignore(ReasonAutoReply, phrase.Errorf("its X-Auto-Response-Suppress field is %q", v))
		}
	}
	if outOfOfficeSubject.MatchString(m.Subject) {
		return ignore(ReasonAutoReply, phrase.Errorf("its subject %q is an automatic reply's", m.Subject))
	}
	if h.Get("List-Id") != "" || h.Get("List-Unsubscribe") != "" {
		return ignore(ReasonBulk, phrase.Errorf("it comes from a mailing list"))
	}
	if rp, ok := returnPath(h.Values("Return-Path")); ok && rp == "" {
		return ignore(ReasonNullSender, phrase.Errorf("its return path is empty (<>), which marks mail that must not be answered"))
	}
	return nil
}

// returnPath reads the topmost Return-Path, which the delivering server
// writes from the SMTP envelope.
func returnPath(values []string) (string, bool) {
	if len(values) == 0 {
		return "", false
	}
	v := strings.TrimSpace(values[0])
	if i := strings.IndexByte(v, '('); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return strings.Trim(v, "<> "), true
}

// listID reads the identifier of a List-Id field: "Name <id>" or "<id>".
func listID(v string) string {
	if i := strings.LastIndexByte(v, '<'); i >= 0 {
		v = v[i+1:]
		if j := strings.IndexByte(v, '>'); j >= 0 {
			v = v[:j]
		}
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
