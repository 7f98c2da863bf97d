package reply

import (
	_ "embed"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// patternsFile is the knowledge of the clients and languages: what each
// writes above a quote, in its header blocks and separators, and as a
// mobile signature. See the comment at its top for the format.
//
//go:embed patterns.txt
var patternsFile string

// Kinds of pattern in patterns.txt.
const (
	kindAttribution = "attribution"
	kindOriginal    = "original"
	kindForward     = "forward"
	kindMobile      = "mobile"
)

// Header field kinds: the names in patterns.txt map to one of these.
type field uint8

const (
	fieldNone field = iota
	fieldFrom
	fieldDate
	fieldTo
	fieldCc
	fieldSubject
)

var fieldKinds = map[string]field{
	"from": fieldFrom, "date": fieldDate, "to": fieldTo, "cc": fieldCc, "subject": fieldSubject,
}

// pattern is one line of patterns.txt.
type pattern struct {
	Lang, Kind, Client, Text string
}

// glob is a compiled pattern: pieces that must appear in order, the first
// at the start and the last at the end of the text, with at least one
// character between them where the pattern has "…". Within a piece "#"
// stands for a run of digits. Matching is a left-to-right scan, linear in
// the text for each piece: nothing backtracks.
type glob struct {
	pattern
	pieces []string
	// hash tells which pieces hold a "#"; longest is the longest piece
	// without one, which a matching text must contain.
	hash    []bool
	longest string
	// anchored is set when the pattern starts with words of its own ("On
	// …", "Am …") or a date, not with the author's name: only such an
	// attribution is certain enough to cut the unquoted text below it.
	anchored bool
}

type table struct {
	attributions []glob
	mobiles      []glob
	// fields maps a header field name (lowercase) to its kind.
	fields map[string]field
	// separators maps a separator's words (lowercase, without the dashes)
	// to "original" or "forward".
	separators map[string]string
	// starts are the opening words of the anchored attributions, to tell
	// a line that may begin a wrapped one.
	starts []string
}

var patterns = mustLoad(patternsFile)

// tablePatterns lists the table the reader works from.
func tablePatterns() []pattern {
	var ps []pattern
	for _, line := range strings.Split(patternsFile, "\n") {
		if p, ok, _ := parsePatternLine(line); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

func parsePatternLine(line string) (pattern, bool, error) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return pattern{}, false, nil
	}
	f := strings.SplitN(line, "|", 4)
	if len(f) != 4 {
		return pattern{}, false, fmt.Errorf("want 4 fields separated by |: %q", line)
	}
	p := pattern{Lang: strings.TrimSpace(f[0]), Kind: strings.TrimSpace(f[1]),
		Client: strings.TrimSpace(f[2]), Text: strings.TrimSpace(f[3])}
	if p.Lang == "" || p.Client == "" || p.Text == "" {
		return pattern{}, false, fmt.Errorf("empty field: %q", line)
	}
	return p, true, nil
}

func mustLoad(src string) *table {
	t, err := load(src)
	if err != nil {
		panic("reply: patterns.txt: " + err.Error())
	}
	return t
}

func load(src string) (*table, error) {
	t := &table{fields: map[string]field{}, separators: map[string]string{}}
	seenStart := map[string]bool{}
	for n, line := range strings.Split(src, "\n") {
		p, ok, err := parsePatternLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if !ok {
			continue
		}
		text := matchText(p.Text)
		switch p.Kind {
		case kindAttribution, kindMobile:
			g := compileGlob(p, text)
			if p.Kind == kindMobile {
				t.mobiles = append(t.mobiles, g)
				continue
			}
			t.attributions = append(t.attributions, g)
			if g.anchored && !seenStart[g.pieces[0]] {
				seenStart[g.pieces[0]] = true
				t.starts = append(t.starts, g.pieces[0])
			}
		case kindOriginal, kindForward:
			words := separatorWords(text)
			if prev, dup := t.separators[words]; dup && prev != p.Kind {
				return nil, fmt.Errorf("line %d: %q is both %s and %s", n+1, p.Text, prev, p.Kind)
			}
			t.separators[words] = p.Kind
		default:
			k, ok := fieldKinds[p.Kind]
			if !ok {
				return nil, fmt.Errorf("line %d: unknown kind %q", n+1, p.Kind)
			}
			if prev, dup := t.fields[text]; dup && prev != k {
				return nil, fmt.Errorf("line %d: field %q has two kinds", n+1, p.Text)
			}
			t.fields[text] = k
		}
	}
	return t, nil
}

func compileGlob(p pattern, text string) glob {
	g := glob{pattern: p, pieces: strings.Split(text, "…")}
	// A pattern that starts with words, or with a number (a date first),
	// is anchored; one that starts with "…" starts with the author's name.
	g.anchored = g.pieces[0] != "" && len(g.pieces) > 1
	g.hash = make([]bool, len(g.pieces))
	for i, p := range g.pieces {
		g.hash[i] = strings.ContainsRune(p, '#')
		if !g.hash[i] && len(p) > len(g.longest) {
			g.longest = p
		}
	}
	return g
}

// match reports whether the whole of s (in matchText form) fits g.
func (g *glob) match(s string) bool {
	ps := g.pieces
	if len(ps) == 1 {
		return pieceAt(ps[0], s, 0) == len(s)
	}
	last, lastHash := ps[len(ps)-1], g.hash[len(ps)-1]
	// Cheap refusals first: most lines end otherwise, or lack the
	// pattern's words.
	if !lastHash && !strings.HasSuffix(s, last) {
		return false
	}
	pos := pieceAt(ps[0], s, 0)
	if pos < 0 || !strings.Contains(s, g.longest) {
		return false
	}
	for k, p := range ps[1 : len(ps)-1] {
		end := findPiece(p, g.hash[k+1], s, pos+1)
		if end < 0 {
			return false
		}
		pos = end
	}
	if last == "" {
		return pos < len(s)
	}
	if !lastHash {
		return len(s)-len(last) > pos
	}
	for start := pos + 1; start < len(s); start++ {
		if pieceAt(last, s, start) == len(s) {
			return true
		}
	}
	return false
}

// findPiece finds the leftmost place at or after from where piece p matches
// in s and returns where that match ends, or -1.
func findPiece(p string, hash bool, s string, from int) int {
	if from > len(s) {
		return -1
	}
	if !hash {
		i := strings.Index(s[from:], p)
		if i < 0 {
			return -1
		}
		return from + i + len(p)
	}
	for start := from; start < len(s); start++ {
		if end := pieceAt(p, s, start); end >= 0 {
			return end
		}
	}
	return -1
}

// pieceAt matches piece p at s[start:] and returns where it ends, or -1.
// "#" takes every digit there is.
func pieceAt(p, s string, start int) int {
	i := start
	for k := 0; k < len(p); k++ {
		if p[k] == '#' {
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == i {
				return -1
			}
			i = j
			continue
		}
		if i >= len(s) || s[i] != p[k] {
			return -1
		}
		i++
	}
	return i
}

// separatorWords is a separator line without the dashes, underscores and
// equal signs around it.
func separatorWords(s string) string {
	return strings.TrimSpace(strings.Trim(s, "-_= "))
}

// matchText is the form in which lines are compared with patterns: the
// decoration that HTML conversion or Gmail's text rendering leaves (*bold*),
// no-break spaces, typographic apostrophes, runs of spaces, a space before a
// colon (French clients put one there) and full-width colons all go, case
// does not count, and a verb glued to an address ("<a@b>wrote:") gets its
// space back.
func matchText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	prev := rune(0)
	for _, r := range s {
		switch r {
		case '*':
			continue
		case '\u00a0', '\u202f', '\u2007', '\t', '\u3000':
			r = ' '
		case '’', '‘':
			r = '\''
		case '：':
			r = ':'
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if r == ':' {
			space = false
		}
		if (prev == '>' || prev == ')') && unicode.IsLetter(r) {
			space = true
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return b.String()
}

// attributionMatch finds the table entry s (in matchText form) fits,
// preferring one that begins with words of its own ("Dnia … napisał(a):"
// over "… napisał(a):"); with verbLast, only an anchored entry that ends
// with its verb ("On … wrote:", not "Am … schrieb …:").
func (t *table) attributionMatch(s string, verbLast bool) *glob {
	if !strings.HasSuffix(s, ":") {
		return nil
	}
	var found *glob
	for i := range t.attributions {
		g := &t.attributions[i]
		if verbLast && (!g.anchored || len(g.pieces[len(g.pieces)-1]) <= 1) || found != nil && !g.anchored {
			continue
		}
		if g.match(s) {
			if g.anchored {
				return g
			}
			found = g
		}
	}
	return found
}

// startsAttribution reports whether s (in matchText form) begins like an
// anchored attribution: "on …", "am …", or a date.
func (t *table) startsAttribution(s string) bool {
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		return true
	}
	for _, st := range t.starts {
		if pieceAt(st, s, 0) >= 0 {
			return true
		}
	}
	return false
}

// headerField reads the name of a header field at the start of s (in
// matchText form): "from: x" is fieldFrom with value "x".
func (t *table) headerField(s string) (field, string) {
	i := strings.IndexByte(s, ':')
	if i <= 0 || i > 40 {
		return fieldNone, ""
	}
	k := t.fields[s[:i]]
	if k == fieldNone {
		return fieldNone, ""
	}
	return k, strings.TrimSpace(s[i+1:])
}

// separator reports an original-message or forward separator line.
func (t *table) separator(s string) string {
	words := separatorWords(s)
	if words == "" {
		return ""
	}
	k := t.separators[words]
	if k == "" {
		return ""
	}
	// Words alone are a separator only when they end in a colon ("Begin
	// forwarded message:"); otherwise the dashes make the line one.
	if len(words) == len(s) && !strings.HasSuffix(words, ":") {
		return ""
	}
	return k
}

// mobileSignature reports a line that is a phone app's signature, not a
// sentence that happens to begin like one ("Sent from my desk, so …").
func (t *table) mobileSignature(raw, s string) bool {
	if s == "" || len(s) > 4*80 || utf8.RuneCountInString(s) > 80 || strings.ContainsAny(s, "?!") {
		return false
	}
	for i := range t.mobiles {
		if t.mobiles[i].match(s) {
			return !continuesSentence(raw)
		}
	}
	// Outlook for iOS adds its link: "Get Outlook for iOS<https://aka.ms/…>".
	if i := strings.IndexByte(s, '<'); i > 0 && strings.HasSuffix(s, ">") {
		return t.mobileSignature(raw[:strings.IndexByte(raw, '<')], s[:i])
	}
	return false
}

// continuesSentence reports a comma or a full stop followed by a word in
// lower case: prose, not a signature ("Sent from my Verizon, Samsung
// Galaxy smartphone" is one, "Sent from my desk, so …" is not).
func continuesSentence(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if (s[i] == ',' || s[i] == '.' || s[i] == ';') && s[i+1] == ' ' {
			if r, _ := utf8.DecodeRuneInString(s[i+2:]); unicode.IsLower(r) {
				return true
			}
		}
	}
	return false
}
