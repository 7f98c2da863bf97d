// Package reply separates what the author of a mail wrote from what the mail
// quotes, forwards, or signs off with.
//
// Players press Reply, and their client adds the message they answer below
// (or around) their own words. Only the author's words may hold commands: a
// quoted "VOTE Bob" from yesterday's digest must never count again. The
// package knows the quoting habits of Gmail (web and mobile), Outlook
// (desktop, web and mobile: a From:/Sent: header block or an "-----Original
// Message-----" line), Apple Mail and iOS Mail, Thunderbird, Android mail
// apps, Yahoo, Zoho, Proton, GMX and web.de, Polymail and Spark, and their
// mobile signatures, in the languages listed in patterns.txt: that file
// holds all it knows of each client and language, so that another one is a
// line there and a fixture in testdata.
//
// Where it cannot tell whether a block is quoted (a block with no marker at
// all, such as text below a mobile signature, or a line that may be a quoted
// line whose ">" was lost when it was wrapped), the block is neither the
// author's text nor the quote: it is returned as Unsure, so that no command
// is read from it and it is never relayed, and the author can be told.
//
// It reads each line a bounded number of times, with patterns that never
// backtrack: the time it takes grows linearly with the message.
//
// It works on plain text; HTML mail is first turned into text in which quoted
// parts are prefixed with "> " (see package message).
package reply

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Parts is a message text split into its parts. Lines keep their text; only
// line endings are normalised to "\n".
type Parts struct {
	// New is what the author wrote: every line that is not quoted, before
	// the first attribution, forward or signature marker. Where quoted lines
	// interrupt it (an interleaved reply), a blank line stands in for them.
	// Where the author's words and an attribution share a line ("Thanks.
	// --- On … wrote:"), the author's part of it is here.
	New string
	// Quoted is everything the message quotes or forwards, attribution
	// lines included (a line shared with the author's words whole).
	Quoted string
	// Signature is the signature block ("-- " and below, or a trailing
	// "Sent from my iPhone").
	Signature string
	// Unsure is what could not be placed: lines that may be the author's
	// or may be quoted, such as text below a mobile signature with no
	// attribution or header, or a line that looks like the wrapped end of
	// a quoted line that lost its ">". It is neither read for commands nor
	// relayed; the author should be told it was left out.
	Unsure string
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
	kUnsure
	// kMixed is a line that holds the author's words and then an
	// attribution: the first part is new, the whole line quoted.
	kMixed
)

// maxJoin is how many physical lines an attribution may be wrapped over
// (Gmail wraps long "On … <address> wrote:" lines, Outlook adds a
// "<mailto:…>" that wraps again).
const maxJoin = 4

// maxLine is the longest line tried as an attribution, header or
// signature: longer lines are text, and are not read again and again.
const maxLine = 1000

// text is a message's lines, with the matchText form of each worked out
// once, when first needed: every line is compared with the table a bounded
// number of times, but normalised only once.
type text struct {
	lines []string
	norm  []string
	done  []bool
}

func newText(lines []string) *text {
	return &text{lines: lines, norm: make([]string, len(lines)), done: make([]bool, len(lines))}
}

// at is line i in matchText form; "" for a line too long to be read as a
// marker.
func (t *text) at(i int) string {
	if !t.done[i] {
		t.done[i] = true
		if len(t.lines[i]) <= maxLine {
			t.norm[i] = matchText(t.lines[i])
		}
	}
	return t.norm[i]
}

// Split splits text into the author's new text, the quoted text, the
// signature and what could not be placed.
func Split(text string) Parts {
	p := splitOnce(text)
	// What one reading keeps as new text can read, once what followed it
	// is cut away, as a signature or an attribution of its own (a mobile
	// signature on the line of an "a écrit :"). Reading it again until
	// nothing changes makes the split stable; what a later reading takes
	// joins the part it belongs to, ahead of what the first one took.
	for range 4 {
		again := splitOnce(p.New)
		if again.New == p.New {
			break
		}
		p.New = again.New
		p.Quoted = joinPart(again.Quoted, p.Quoted)
		p.Signature = joinPart(again.Signature, p.Signature)
		p.Unsure = joinPart(again.Unsure, p.Unsure)
		if p.Cut == "" {
			p.Cut = again.Cut
		}
	}
	return p
}

// joinPart joins two pieces of one part, in order.
func joinPart(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// splitOnce is one reading of Split.
func splitOnce(text string) Parts {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	t := newText(lines)
	kinds := make([]kind, len(lines))
	prefix := map[int]string{}
	var p Parts
	cutLine := len(lines)
	setCut := func(name string, i int) {
		// The first interruption in the text names the cut.
		if i < cutLine {
			p.Cut, cutLine = name, i
		}
	}
	quoteFrom := func(i int) {
		for j := i; j < len(lines); j++ {
			kinds[j] = kQuote
		}
	}
	cutAt := func(i int) {
		// Separator lines just above a marker (Outlook's row of
		// underscores, a dashed rule) belong to the quote.
		for i > 0 && (isRule(lines[i-1]) || (kinds[i-1] == kNew || kinds[i-1] == kUnsure) && blank(lines[i-1])) {
			i--
		}
		quoteFrom(i)
	}
	// placed is what a plain line is: the author's, or, below a mobile
	// signature or an attribution that nothing quoted follows, unsure.
	placed := kNew

scan:
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if isQuoteLine(l) {
			kinds[i] = kQuote
			setCut("quote", i)
			continue
		}
		if blank(l) {
			kinds[i] = placed
			continue
		}
		if a := findAttribution(t, i); a.n > 0 {
			next := i + a.n
			for next < len(lines) && blank(lines[next]) {
				next++
			}
			quoted := next < len(lines) && isQuoteLine(lines[next])
			if quoted || a.sure || a.evidence && next < len(lines) {
				setCut("attribution", i)
				kinds[i] = kQuote
				switch {
				case a.prefix != "" && placed == kUnsure:
					// Below a mobile signature nothing is the
					// author's for certain: the line stays unsure.
					kinds[i] = kUnsure
				case a.prefix != "":
					kinds[i], prefix[i] = kMixed, a.prefix
				}
				for j := i + 1; j < i+a.n; j++ {
					kinds[j] = kQuote
				}
				switch {
				case quoted:
					// "On … wrote:" above "> " lines: the quote may
					// be answered inline, so only the attribution goes.
				case a.sure:
					// Outlook for Mac and others put the original
					// below the attribution without "> ".
					if a.prefix != "" {
						quoteFrom(i + 1)
					} else {
						cutAt(i)
					}
					break scan
				default:
					// An attribution that does not begin like one
					// ("Carol <c@x> wrote:") over unmarked text:
					// that text may be quoted or not.
					placed = kUnsure
				}
				i += a.n - 1
				continue
			}
		}
		if c := marker(t, i); c != "" {
			setCut(c, i)
			cutAt(i)
			break scan
		}
		if isSigDelimiter(l) {
			setCut("signature", i)
			for j := i; j < len(lines); j++ {
				if j > i {
					if a := findAttribution(t, j); a.n > 0 && a.prefix == "" || marker(t, j) != "" || isQuoteLine(lines[j]) {
						cutAt(j)
						break
					}
				}
				kinds[j] = kSig
			}
			break scan
		}
		if isMobileSignature(t, i) {
			// Mobile clients sign with a line such as "Sent from my
			// iPhone" and no "-- " above it. Some put the original right
			// below, with no header: what follows is unsure.
			kinds[i] = kSig
			setCut("signature", i)
			placed = kUnsure
			continue
		}
		if lostQuoteMarker(lines, kinds, i) {
			kinds[i] = kUnsure
			continue
		}
		kinds[i] = placed
	}

	var count [kMixed + 1]int
	for _, k := range kinds {
		count[k]++
	}
	newLines := make([]string, 0, count[kNew]+count[kMixed])
	quoted := make([]string, 0, count[kQuote]+count[kMixed])
	sig := make([]string, 0, count[kSig])
	unsure := make([]string, 0, count[kUnsure])
	gap := false
	for j, l := range lines {
		switch kinds[j] {
		case kNew, kMixed:
			if kinds[j] == kMixed {
				quoted = append(quoted, l)
				l = prefix[j]
			}
			if gap && len(newLines) > 0 && !blank(newLines[len(newLines)-1]) && !blank(l) {
				newLines = append(newLines, "")
			}
			gap = kinds[j] == kMixed
			newLines = append(newLines, strings.TrimRight(l, " \t"))
		case kQuote:
			gap = true
			quoted = append(quoted, l)
		case kSig:
			gap = true
			sig = append(sig, l)
		case kUnsure:
			gap = true
			unsure = append(unsure, l)
		}
	}
	p.New = trimBlank(newLines)
	p.Quoted = trimBlank(quoted)
	p.Signature = trimBlank(sig)
	p.Unsure = trimBlank(unsure)
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

// lostQuoteMarker reports a short line right below a long quoted line that
// reads as that line's wrapped end: some clients wrap quoted text after
// quoting it, and the wrapped part loses its ">". Such a line may as well be
// a one-line answer, so it is unsure, never the author's for certain.
func lostQuoteMarker(lines []string, kinds []kind, i int) bool {
	if i == 0 || kinds[i-1] != kQuote || !isQuoteLine(lines[i-1]) {
		return false
	}
	if i+1 < len(lines) && !blank(lines[i+1]) && !isQuoteLine(lines[i+1]) {
		// A paragraph of its own.
		return false
	}
	cur := strings.TrimSpace(lines[i])
	prev := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i-1]), "> "))
	nc, np := utf8.RuneCountInString(cur), utf8.RuneCountInString(prev)
	if nc > 40 || np < 50 || np+nc > 110 {
		return false
	}
	first, _ := utf8.DecodeRuneInString(cur)
	return unicode.IsLower(first) || !strings.ContainsAny(prev[len(prev)-1:], ".!?:;)")
}

// attrEvidence is what makes an attribution one beyond doubt: a time, a
// year or an address; timeOfDay is the time alone.
var (
	attrEvidence = regexp.MustCompile(`\d{1,2}[:.h]\d{2}|\d{4}|@`)
	timeOfDay    = regexp.MustCompile(`\d{1,2}[:.h]\d{2}`)
)

// attr is an attribution found at a line.
type attr struct {
	// n is the number of lines it takes (0 for none).
	n int
	// prefix is the author's text before it on its first line.
	prefix string
	// evidence: it has a date, a time or an address. sure: it also
	// begins like an attribution ("On …", a date) or stands between
	// dashes, so that unmarked text below it is the quoted original.
	evidence, sure bool
}

// findAttribution reports an attribution starting at lines[i], wrapped over
// up to maxJoin lines, or one that begins within the line after the
// author's words ("Thanks! --- On … wrote:").
func findAttribution(t *text, i int) attr {
	raw := t.lines[i]
	first := t.at(i)
	if first == "" {
		return attr{}
	}
	whole := attributionAt(t, i, first)
	// A sure attribution from the line's start is one; an unsure one may
	// be the author's words followed by a sure one ("VOTE Bob --- On …
	// wrote:" fits "… wrote:" too). Splitting is only worth it on a line
	// that ends like an attribution or holds a dashed one.
	if whole.sure || !strings.HasSuffix(first, ":") && !strings.Contains(first, "--") {
		return whole
	}
	tries := 0
	for _, at := range splitPoints(raw) {
		if tries++; tries > 4 {
			break
		}
		before := strings.TrimRight(raw[:at], " \t-")
		if blank(before) {
			continue
		}
		a := attributionAt(t, i, matchText(raw[at:]))
		if a.n > 0 && (a.sure || strings.HasSuffix(strings.TrimSpace(raw[:at]), "--")) {
			a.prefix, a.sure = before, true
			return a
		}
	}
	return whole
}

// splitPoints are where an attribution may begin inside a line: after a run
// of dashes, or after the end of a sentence.
func splitPoints(s string) []int {
	var at []int
	for k := 1; k < len(s); k++ {
		switch {
		case s[k] == '-' && s[k-1] == '-' && (k+1 == len(s) || s[k+1] != '-'):
			j := k + 1
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j < len(s) {
				at = append(at, j)
			}
		case s[k] == ' ' && strings.ContainsRune(".!?", rune(s[k-1])):
			at = append(at, k+1)
		}
	}
	return at
}

// attributionAt matches an attribution whose first line, in matchText form,
// is first.
func attributionAt(t *text, i int, first string) attr {
	lines := t.lines
	// Only a line that begins like a dated attribution ("On 3 Mar …") is
	// joined to the lines below it freely; any other only where the wrap
	// fell in or right after an address.
	dated := patterns.startsAttribution(strings.TrimLeft(first, "- ")) && strings.ContainsAny(first, "0123456789")
	joined, prev := first, first
	for k := 0; ; k++ {
		if len(joined) > 600 {
			break
		}
		if a, ok := matchAttribution(joined); ok && (k == 0 || wrapped(first, prev, joined)) {
			a.n = k + 1
			return a
		}
		j := i + k + 1
		if k+1 >= maxJoin || j >= len(lines) || isQuoteLine(lines[j]) {
			break
		}
		next := t.at(j)
		if next == "" {
			break
		}
		if !(dated && !strings.ContainsAny(prev[len(prev)-1:], ".!?")) && !addressWrap(prev, next) && !nameAbove(joined, next) {
			break
		}
		joined += " " + next
		prev = next
	}
	return attr{}
}

// wrapped tells a wrapped attribution (joined, beginning with first and
// ending with last) from the author's line above an attribution of its
// own: it holds an address, or it begins with a time and its last line
// ("napisał(a):") is no attribution alone.
func wrapped(first, last, joined string) bool {
	if strings.Contains(joined, "@") {
		return true
	}
	if _, alone := matchAttribution(last); alone {
		return false
	}
	return timeOfDay.MatchString(first)
}

// nameAbove reports an attribution that Gmail wrapped after the name and
// address, leaving the rest for the next line ("Name <a@b> ezt írta
// (időpont: 2025. márc." above "3., H, 10:15):", "… <a@b>" above
// "napsal:"): what is above holds an address in brackets, and the next line
// does not begin an attribution of its own.
func nameAbove(above, next string) bool {
	lt := strings.IndexByte(above, '<')
	if lt < 0 || strings.IndexByte(above[lt:], '@') < 0 {
		return false
	}
	if next[0] >= '0' && next[0] <= '9' {
		// The rest of a date ("3., H, 10:15):"), unless it is a
		// date-first attribution with its own address.
		return !strings.Contains(next, "@")
	}
	return !(patterns.startsAttribution(next) && strings.ContainsAny(next, "0123456789"))
}

// addressWrap reports a line break inside an address: "Name <" above
// "addr@x> wrote:", or "<addr@x" above "<mailto:addr@x>> wrote:".
func addressWrap(above, below string) bool {
	open := strings.LastIndexByte(above, '<') > strings.LastIndexByte(above, '>')
	return open || strings.HasPrefix(below, "<") || strings.HasPrefix(below, "(<") ||
		strings.HasPrefix(below, "[mailto:") || strings.HasPrefix(below, "mailto:")
}

// matchAttribution matches one attribution (its lines joined, in matchText
// form) against the table, in the shapes every client's may take: between
// dashes ("---- On … wrote ----"), or without its colon.
func matchAttribution(s string) (attr, bool) {
	core := strings.Trim(s, "- ")
	dashed := core != s && (strings.HasPrefix(s, "--") || strings.HasSuffix(s, "--"))
	// Without its colon (and its dashes) an attribution must hold an
	// address and a time ("On Monday Bob sent" is prose), begin like one
	// and end with its verb ("… wrote"; "Am … schrieb Name <" is only the
	// start of one).
	strict := false
	if !strings.HasSuffix(core, ":") {
		if !dashed && (!strings.Contains(core, "@") || !timeOfDay.MatchString(core)) {
			return attr{}, false
		}
		strict = !dashed
		core += ":"
	}
	g := patterns.attributionMatch(core, strict)
	if g == nil {
		return attr{}, false
	}
	evidence := attrEvidence.MatchString(core)
	return attr{evidence: evidence, sure: dashed || g.anchored && evidence}, true
}

// marker reports a line that ends the author's text for good: a header
// block, an original-message or forward separator.
func marker(t *text, i int) string {
	s := t.at(i)
	if s == "" {
		return ""
	}
	if k := patterns.separator(s); k != "" {
		return k
	}
	if headerBlock(t, i, s) {
		return "header"
	}
	return ""
}

// headerBlock reports a header block starting at lines[i] (s in matchText
// form): two fields or more within a few lines, one of them From or a
// date (Outlook, Gmail and Thunderbird forwards, GMX's "Gesendet:" first),
// with an address or a dated date among them; or a From line with an
// address alone. Prose that happens to begin "From: …" and "To: …" has
// neither.
func headerBlock(t *text, i int, s string) bool {
	k, v := patterns.headerField(s)
	if k == fieldNone || v == "" {
		return false
	}
	var seen [fieldSubject + 1]bool
	seen[k] = true
	evidence := func(k field, v string) bool {
		return strings.Contains(v, "@") || k == fieldDate && strings.ContainsAny(v, "0123456789")
	}
	real := evidence(k, v)
	others := 0
	for j := i + 1; j < len(t.lines) && j <= i+8; j++ {
		line := t.at(j)
		if line == "" {
			break
		}
		fk, fv := patterns.headerField(line)
		if fk == fieldNone {
			// A wrapped value (a long To: list).
			if others++; others > 2 {
				break
			}
			continue
		}
		others = 0
		seen[fk] = true
		real = real || evidence(fk, fv)
	}
	n := 0
	for _, b := range seen[fieldFrom:] {
		if b {
			n++
		}
	}
	if n >= 2 && (seen[fieldFrom] || seen[fieldDate]) && real {
		return true
	}
	return k == fieldFrom && strings.Contains(v, "@")
}

func isMobileSignature(t *text, i int) bool {
	s := t.at(i)
	return s != "" && patterns.mobileSignature(strings.TrimSpace(t.lines[i]), s)
}
