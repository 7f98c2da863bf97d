// Package reply separates what the author of a mail wrote from what the mail
// quotes, forwards, or signs off with.
//
// Players press Reply, and their client adds the message they answer below
// (or around) their own words. Only the author's words may hold commands: a
// quoted "VOTE Bob" from yesterday's digest must never count again. The
// package knows the quoting habits of Gmail (web and Android), Outlook
// (desktop, web and mobile: a From:/Sent: header block or an "-----Original
// Message-----" line), Apple Mail and iOS Mail, Thunderbird, and of mobile
// signatures, in English, German, French and Spanish.
//
// It works on plain text; HTML mail is first turned into text in which quoted
// parts are prefixed with "> " (see package message).
package reply

import (
	"regexp"
	"strings"
	"unicode"
)

// Parts is a message text split into its parts. Lines keep their text; only
// line endings are normalised to "\n".
type Parts struct {
	// New is what the author wrote: every line that is not quoted, before
	// the first attribution, forward or signature marker. Where quoted lines
	// interrupt it (an interleaved reply), a blank line stands in for them.
	New string
	// Quoted is everything the message quotes or forwards, attribution
	// lines included.
	Quoted string
	// Signature is the signature block ("-- " and below, or a trailing
	// "Sent from my iPhone").
	Signature string
	// Cut names the first marker that interrupted the author's text, if
	// any: "quote" (a "> " line), "attribution" (On … wrote:), "header"
	// (an Outlook From:/Sent: block),
	// "original" (-----Original Message-----), "forward" (a forwarded
	// message), or "signature".
	Cut string
}

type kind uint8

const (
	kNew kind = iota
	kQuote
	kSig
)

// maxJoin is how many physical lines an attribution may be wrapped over
// (Gmail wraps long "On … <address> wrote:" lines).
const maxJoin = 3

// Split splits text into the author's new text, the quoted text and the
// signature.
func Split(text string) Parts {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	kinds := make([]kind, len(lines))
	var p Parts
	cutLine := len(lines)
	setCut := func(name string, i int) {
		// The first interruption in the text names the cut.
		if i < cutLine {
			p.Cut, cutLine = name, i
		}
	}

	cutAt := func(i int) {
		// Separator lines just above a marker (Outlook's row of
		// underscores, a dashed rule) belong to the quote.
		for i > 0 && (isRule(lines[i-1]) || kinds[i-1] == kNew && blank(lines[i-1])) {
			i--
		}
		for j := i; j < len(lines); j++ {
			kinds[j] = kQuote
		}
	}

scan:
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if isQuoteLine(l) {
			kinds[i] = kQuote
			setCut("quote", i)
			continue
		}
		if n, strong := attribution(lines, i); n > 0 {
			next := i + n
			for next < len(lines) && blank(lines[next]) {
				next++
			}
			if next < len(lines) && isQuoteLine(lines[next]) {
				// "On … wrote:" above "> " lines: the quote may be
				// answered inline, so only the attribution goes.
				for j := i; j < i+n; j++ {
					kinds[j] = kQuote
				}
				setCut("attribution", i)
				i += n - 1
				continue
			}
			if strong {
				// Outlook and others put the original below the
				// attribution without "> ": everything below is quote.
				setCut("attribution", i)
				cutAt(i)
				break scan
			}
		}
		if c := marker(lines, i); c != "" {
			setCut(c, i)
			cutAt(i)
			break scan
		}
		if isSigDelimiter(l) {
			setCut("signature", i)
			for j := i; j < len(lines); j++ {
				if j > i {
					if n, _ := attribution(lines, j); n > 0 || marker(lines, j) != "" || isQuoteLine(lines[j]) {
						cutAt(j)
						break
					}
				}
				kinds[j] = kSig
			}
			break scan
		}
		kinds[i] = kNew
	}

	// Mobile clients sign with a line such as "Sent from my iPhone" and no
	// "-- " above it: move trailing ones into the signature.
	for j := len(lines) - 1; j >= 0; j-- {
		if kinds[j] != kNew || blank(lines[j]) {
			continue
		}
		if !isMobileSignature(lines[j]) {
			break
		}
		kinds[j] = kSig
		setCut("signature", j)
	}

	var newLines, quoted, sig []string
	gap := false
	for j, l := range lines {
		switch kinds[j] {
		case kNew:
			if gap && len(newLines) > 0 && !blank(newLines[len(newLines)-1]) && !blank(l) {
				newLines = append(newLines, "")
			}
			gap = false
			newLines = append(newLines, strings.TrimRight(l, " \t"))
		case kQuote:
			gap = true
			quoted = append(quoted, l)
		case kSig:
			gap = true
			sig = append(sig, l)
		}
	}
	p.New = trimBlank(newLines)
	p.Quoted = trimBlank(quoted)
	p.Signature = trimBlank(sig)
	return p
}

func trimBlank(lines []string) string {
	for len(lines) > 0 && blank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

func blank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// isQuoteLine reports a line quoted with ">" (RFC 3676 style), allowing
// the few spaces of indentation some clients add.
func isQuoteLine(s string) bool {
	t := strings.TrimLeft(s, " \t")
	return len(s)-len(t) <= 3 && strings.HasPrefix(t, ">")
}

// isSigDelimiter reports the "-- " signature line. Many clients and servers
// strip trailing spaces, so "--" alone counts too.
func isSigDelimiter(s string) bool { return strings.TrimRight(s, " \t\u00a0") == "--" }

// isRule reports a separator line: Outlook's underscores or a dashed rule.
func isRule(s string) bool {
	t := strings.TrimSpace(s)
	if len(t) < 5 {
		return false
	}
	return strings.Trim(t, "_") == "" || strings.Trim(t, "-") == "" || strings.Trim(t, "=") == ""
}

// norm prepares a line for matching: decoration that HTML conversion or
// Gmail's text rendering leaves (*bold*), no-break spaces (French clients
// put one before the colon of "a écrit :"), typographic apostrophes, and
// runs of spaces all go.
func norm(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '*':
			return -1
		case '\u00a0', '\u202f', '\u2007', '\t':
			return ' '
		case '’', '‘':
			return '\''
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

var (
	// "On Mon, Mar 3, 2025 at 10:15 AM Host <h@x> wrote:", "Am 03.03.25 um
	// 10:15 schrieb Host:", "Le lun. 3 mars 2025 à 10:15, Host a écrit :",
	// "El lun, 3 mar 2025 a las 10:15, Host (<h@x>) escribió:".
	attrDated = regexp.MustCompile(`(?i)^(?:on|am|le|el)\s.+?\s(?:wrote|schrieb|a écrit|escribió|escribio)(?:\s[^:]*)?\s?:$`)
	// "Host <h@x> wrote:", "Host schrieb:" and the like: only an attribution
	// when "> " lines follow.
	attrBare   = regexp.MustCompile(`(?i)^.+?\s(?:wrote|schrieb|a écrit|escribió|escribio)(?:\s[^:]*)?\s?:$`)
	datedStart = regexp.MustCompile(`(?i)^(?:on|am|le|el)\s`)
	// An attribution that has a time, a year or an address in it is one
	// beyond doubt, even with no "> " lines below it.
	attrEvidence = regexp.MustCompile(`\d{1,2}[:.h]\d{2}|\d{4}|@`)

	// Outlook's header block, in its languages: "From:" (Von:, De :) and,
	// within a few lines, "Sent:" or "Date:" (Gesendet:, Datum:, Envoyé :,
	// Enviado:, Fecha:).
	headerFrom = regexp.MustCompile(`(?i)^(?:from|von|de|van)\s?:\s*\S`)
	headerSent = regexp.MustCompile(`(?i)^(?:sent|date|gesendet|datum|envoyé|enviado|enviada|fecha|verzonden)\s?:\s*\S`)

	// "-----Original Message-----" and the forward separators of Gmail,
	// Thunderbird and Samsung, in all four languages.
	originalLine = regexp.MustCompile(`(?i)^-{2,}\s*(?:original message|ursprüngliche nachricht|message d'origine|mensaje original|nachricht im original)\s*-{2,}$`)
	forwardLine  = regexp.MustCompile(`(?i)^-{2,}\s*(?:forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|message réexpédié)\s*-{2,}$`)
	// Apple Mail: "Begin forwarded message:".
	forwardApple = regexp.MustCompile(`(?i)^(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message réexpédié|inicio del mensaje reenviado)\s?:$`)

	mobileSignature = regexp.MustCompile(`(?i)^(?:` +
		`sent from my .{1,60}|sent from (?:mail|outlook|yahoo mail|gmail)(?: for .{1,60})?|get outlook for .{1,60}|` +
		`von meinem .{1,40} gesendet|gesendet von meinem .{1,40}|gesendet von (?:mail|outlook) für .{1,30}|holen sie sich outlook für .{1,30}|` +
		`envoyé de mon .{1,40}|envoyé depuis mon .{1,40}|envoyé à partir de .{1,40}|obtenir outlook pour .{1,30}|télécharger outlook pour .{1,30}|` +
		`enviado desde mi .{1,40}|enviado desde (?:outlook|correo) para .{1,30}|obtener outlook para .{1,30}` +
		`)$`)
)

// attribution reports an attribution line starting at lines[i], wrapped over
// up to maxJoin lines: n is the number of lines it takes (0 for none) and
// strong tells whether it carries a date, time or address.
func attribution(lines []string, i int) (n int, strong bool) {
	first := norm(lines[i])
	if first == "" || len(first) > 400 {
		return 0, false
	}
	joined := ""
	// Only a dated attribution ("On …", "Am …", "Le …", "El …") is ever
	// wrapped; anything else is tried as one line.
	join := 1
	if datedStart.MatchString(first) {
		join = maxJoin
	}
	for k := 0; k < join && i+k < len(lines); k++ {
		l := norm(lines[i+k])
		if l == "" || (k > 0 && isQuoteLine(lines[i+k])) {
			break
		}
		if joined == "" {
			joined = l
		} else {
			joined += " " + l
		}
		if len(joined) > 500 {
			break
		}
		// The regular expressions are only worth running on a line that
		// ends like an attribution.
		if !strings.HasSuffix(joined, ":") || !mentionsAttributionVerb(strings.ToLower(joined)) {
			continue
		}
		if attrDated.MatchString(joined) {
			return k + 1, attrEvidence.MatchString(joined)
		}
		// A bare "Name wrote:" is never wrapped; joining it to the line
		// above would swallow the author's last line.
		if k == 0 && attrBare.MatchString(joined) {
			return 1, false
		}
	}
	return 0, false
}

var attrWords = []string{"wrote", "schrieb", "a écrit", "escribió", "escribio"}

// mentionsAttributionVerb reports whether s (lowercased) contains one of
// the attribution verbs. German and Spanish put the name after the verb, so
// it is a containment test, not a suffix test.
func mentionsAttributionVerb(s string) bool {
	for _, w := range attrWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// marker reports a line that ends the author's text for good: an Outlook
// header block, an original-message or forward separator.
func marker(lines []string, i int) string {
	l := norm(lines[i])
	switch {
	case l == "":
		return ""
	case originalLine.MatchString(l):
		return "original"
	case forwardLine.MatchString(l), forwardApple.MatchString(l):
		return "forward"
	case headerFrom.MatchString(l):
		for k := i + 1; k < len(lines) && k <= i+4; k++ {
			if headerSent.MatchString(norm(lines[k])) {
				return "header"
			}
		}
	}
	return ""
}

func isMobileSignature(s string) bool { return mobileSignature.MatchString(norm(s)) }
