package mimepart

import (
	"strings"
	"unicode/utf8"
)

// FlowedWidth is the longest physical line of a text part, in characters,
// the soft-break space included (RFC 3676 section 4.2 recommends at most
// 78).
const FlowedWidth = 78

// Flowed is a text part encoded as format=flowed.
type Flowed struct {
	Text string
	// DelSp: soft breaks were also made inside words, so the part says
	// DelSp=yes and every soft break at a space carries an extra space.
	DelSp bool
}

// EncodeFlowed writes text (lines ending in "\n", each line a paragraph or
// a line that must stay as written) as format=flowed (RFC 3676).
//
// A line of at most FlowedWidth characters is sent as it is, as a fixed
// line: tallies and lists, which the templates lay out within the width
// themselves, never reflow. A longer line is a paragraph: it is broken at
// spaces into soft lines that a client joins again and reflows to its own
// width. Lines starting with ">" are quotes (a relayed post, its quoted
// context): the quote marks are repeated on every soft line, so that every
// physical line of a post stays marked as the post's.
//
// A word too long for a line is never broken when it is an address or a
// link (a reader must be able to copy it whole); any other such word (a
// long string in a post) is broken, and the part is then sent with
// DelSp=yes.
//
// EncodeFlowed breaks a paragraph at the last space where the line fits;
// a Flow can keep some words from starting a line.
func EncodeFlowed(text string) Flowed { return (*Flow)(nil).Encode(text) }

// Flow encodes text as format=flowed as EncodeFlowed does, but never
// starts a soft line with text its avoid function turns down (a client that
// does not know format=flowed quotes the physical lines back, and a line
// that reads as a command must not turn up at the start of one), and may
// keep how lines break: the copies of one message to many readers mostly
// hold the same lines, and asking avoid about every place a line could
// break costs. A Flow that keeps is for one goroutine at a time; a nil
// *Flow avoids nothing and keeps nothing.
type Flow struct {
	avoid  func(rest string) bool
	soft   map[softLine][]string
	breaks map[softLine]bool
}

// softLine is what softLines and needsWordBreak are given.
type softLine struct {
	content      string
	room         int
	delSp, stuff bool
}

// NewFlow returns a Flow that starts no soft line with text that avoid
// (nil: none) turns down, and keeps how lines break when keep is set.
func NewFlow(avoid func(rest string) bool, keep bool) *Flow {
	f := &Flow{avoid: avoid}
	if keep {
		f.soft, f.breaks = map[softLine][]string{}, map[softLine]bool{}
	}
	return f
}

// needsWordBreak is the package's needsWordBreak, kept.
func (fm *Flow) needsWordBreak(content string, room int) bool {
	if fm == nil || fm.breaks == nil {
		return needsWordBreak(content, room)
	}
	k := softLine{content: content, room: room}
	r, ok := fm.breaks[k]
	if !ok {
		r = needsWordBreak(content, room)
		fm.breaks[k] = r
	}
	return r
}

// softLines is the package's softLines, kept. What it returns is shared:
// it must not be changed.
func (fm *Flow) softLines(content string, room int, delSp, stuff bool) []string {
	var avoid func(string) bool
	if fm != nil {
		avoid = fm.avoid
	}
	if fm == nil || fm.soft == nil {
		return softLines(content, room, delSp, stuff, avoid)
	}
	k := softLine{content, room, delSp, stuff}
	r, ok := fm.soft[k]
	if !ok {
		r = softLines(content, room, delSp, stuff, avoid)
		fm.soft[k] = r
	}
	return r
}

// Encode is EncodeFlowed, avoiding what fm avoids and keeping in fm how
// the lines break.
func (fm *Flow) Encode(text string) Flowed {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	delSp := false
	for _, l := range lines {
		depth, content := quoteDepth(l)
		if fm.needsWordBreak(content, FlowedWidth-prefixWidth(depth)) {
			delSp = true
			break
		}
	}
	var b strings.Builder
	b.Grow(len(text) + len(text)/8)
	for _, l := range lines {
		depth, content := quoteDepth(l)
		prefix := strings.Repeat(">", depth)
		for _, soft := range fm.softLines(content, FlowedWidth-prefixWidth(depth), delSp, depth == 0) {
			b.WriteString(prefix)
			if depth > 0 && soft != "" || depth == 0 && stuffed(soft) {
				// After quote marks the space is the usual separator, which
				// readers drop; at depth 0 it space-stuffs a line that would
				// otherwise read as a quote, as indented or as "From ".
				b.WriteByte(' ')
			}
			b.WriteString(soft)
			b.WriteByte('\n')
		}
	}
	return Flowed{Text: b.String(), DelSp: delSp}
}

// quoteDepth splits a line into its quote depth (the number of leading
// ">") and the rest, without the one space that separates them.
func quoteDepth(l string) (int, string) {
	depth := len(l) - len(strings.TrimLeft(l, ">"))
	content := l[depth:]
	if depth > 0 {
		content = strings.TrimPrefix(content, " ")
	}
	return depth, content
}

// prefixWidth is how many characters the quote marks of a line take, with
// the space after them.
func prefixWidth(depth int) int {
	if depth == 0 {
		return 0
	}
	return depth + 1
}

// stuffed reports whether a line at depth 0 needs space-stuffing (RFC 3676
// section 4.4).
func stuffed(l string) bool {
	return strings.HasPrefix(l, " ") || strings.HasPrefix(l, ">") || strings.HasPrefix(l, "From ")
}

// unbreakable reports whether a word must stay whole: an address, a link.
func unbreakable(w string) bool {
	return strings.Contains(w, "@") || strings.Contains(w, "://") || strings.HasPrefix(strings.ToLower(w), "mailto:")
}

func width(s string) int { return utf8.RuneCountInString(s) }

// needsWordBreak reports whether content holds a word that fits no line of
// room characters and may be broken.
func needsWordBreak(content string, room int) bool {
	if content == "-- " || width(content) <= room {
		return false
	}
	// Only a space is a break (a tab is part of its word), as softLines
	// breaks.
	for _, w := range strings.Split(content, " ") {
		// A soft line holds the word and its break space.
		if width(w)+1 > room && !unbreakable(w) {
			return true
		}
	}
	return false
}

// softLines breaks one line into physical lines of at most room
// characters (space-stuffing included when stuff is set, at depth 0), every
// one but the last ending in the soft-break space; with delSp a break at a
// space carries one more, which the reader drops. No line but the first
// starts with text that avoid (when set) turns down, where a space allows
// another break. The signature separator "-- " and lines that fit are
// left alone.
func softLines(content string, room int, delSp, stuff bool, avoid func(string) bool) []string {
	if content == "-- " {
		return []string{content}
	}
	content = strings.TrimRight(content, " ")
	var out []string
	rest := content
	for {
		avail := room
		if stuff && stuffed(rest) {
			avail--
		}
		if width(rest) <= avail {
			return append(out, rest)
		}
		limit := avail - 1 // the break space itself
		if delSp {
			limit = avail - 2
		}
		// The last space, followed by a word, at which the line still
		// fits: the next line then never starts with a space. Nor does it
		// start with what avoid turns down.
		var cuts []int
		pos, prevSpace := 0, false
		for i, r := range rest {
			if pos > limit+1 {
				break
			}
			if prevSpace && r != ' ' && pos-1 > 0 {
				cuts = append(cuts, i-1)
			}
			prevSpace = r == ' '
			pos++
		}
		cut := -1
		for k := len(cuts) - 1; k >= 0; k-- {
			if avoid == nil || !avoid(rest[cuts[k]+1:]) {
				cut = cuts[k]
				break
			}
		}
		if cut > 0 {
			line := rest[:cut+1]
			if delSp {
				line += " "
			}
			out = append(out, line)
			rest = rest[cut+1:]
			continue
		}
		word, _, found := strings.Cut(rest, " ")
		if !delSp || unbreakable(word) {
			// Kept whole, however long: a reader copies an address or a
			// link from the line as it is.
			if !found {
				return append(out, rest)
			}
			after := strings.TrimLeft(rest[len(word):], " ")
			line := rest[:len(rest)-len(after)]
			if keep := max(1, limit+1-width(word)); len(line)-len(word) > keep {
				// A run of spaces after the word would push the line past
				// its room: the line keeps what fits, the next one starts
				// with the rest (space-stuffed where that is needed).
				line, after = rest[:len(word)+keep], rest[len(word)+keep:]
			}
			if delSp {
				line += " "
			}
			out = append(out, line)
			rest = after
			continue
		}
		// Break inside the word; DelSp=yes drops the break space.
		runes := []rune(rest)
		out = append(out, string(runes[:avail-1])+" ")
		rest = string(runes[avail-1:])
	}
}

// DecodeFlowed reads a format=flowed text back as RFC 3676 section 4.2
// tells a reader to, for clients of the host's own mail (the demo's bots,
// the tests): quote depth from the leading ">", one stuffing space
// dropped, a line ending in a space joined with the next of the same depth
// (its space dropped too with DelSp=yes). Quoted paragraphs come back as
// ">"s, a space and the text. It is written apart from the encoder, so
// that the tests of the two check each other.
func DecodeFlowed(text string, delSp bool) string {
	var out []string
	var cur strings.Builder
	curDepth, open := 0, false
	flush := func() {
		line := cur.String()
		if curDepth > 0 {
			p := strings.Repeat(">", curDepth)
			if line != "" {
				p += " "
			}
			line = p + line
		}
		out = append(out, line)
		cur.Reset()
		open = false
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		depth := len(l) - len(strings.TrimLeft(l, ">"))
		content := strings.TrimPrefix(l[depth:], " ")
		if open && depth != curDepth {
			flush()
		}
		curDepth = depth
		soft := strings.HasSuffix(content, " ") && content != "-- "
		if soft && delSp {
			content = content[:len(content)-1]
		}
		cur.WriteString(content)
		open = true
		if !soft {
			flush()
		}
	}
	if open {
		flush()
	}
	return strings.Join(out, "\n") + "\n"
}
