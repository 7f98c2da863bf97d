package reply

import (
	"strings"
	"unicode/utf8"
)

// Context limits: how many quoted lines an answer keeps, and how long each
// may be, so that the context stays a reminder and never a copy.
const (
	MaxContextLines = 3
	maxContextRunes = 160
)

// InlinePart is one run of the author's own lines in an inline reply, with the
// quoted lines it answers.
type InlinePart struct {
	// Context are the quoted lines just above the author's lines, without
	// quote marks, nearest last; at most MaxContextLines, each shortened to
	// a reminder. Empty for a run that follows no quote.
	Context []string
	// Quoted are the same lines in full, as written but for their quote
	// marks: what is checked against the mail answered (see Record).
	Quoted []string
	// Text is the author's lines, as written.
	Text string
}

// InlineParts reads an inline reply: one where the author writes between
// quoted lines. It returns the author's runs of lines in order, each with
// the quoted lines it follows, so that a relayed post can show what each
// answer is about. A message that only top-posts or bottom-posts (all its
// quote on one side of the author's words) is no inline reply: InlineParts
// returns nil, and the author's text is Split's New alone.
//
// Only the author's own lines (Text) are ever read as commands; Context is
// quoted text and must be shown as such.
func InlineParts(text string) []InlinePart {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	t := newText(lines)

	// runs alternate between the author's lines and quoted ones.
	type run struct {
		quoted bool
		lines  []string
	}
	var runs []run
	push := func(quoted bool, l string) {
		if n := len(runs); n > 0 && runs[n-1].quoted == quoted {
			runs[n-1].lines = append(runs[n-1].lines, l)
			return
		}
		runs = append(runs, run{quoted: quoted, lines: []string{l}})
	}
scan:
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case isQuoteLine(l):
			push(true, l)
			continue
		case blank(l):
			// A blank line belongs to whatever surrounds it.
			if n := len(runs); n > 0 {
				runs[n-1].lines = append(runs[n-1].lines, l)
			}
			continue
		}
		if a := findAttribution(t, i); a.n > 0 {
			n, strong := a.n, a.sure
			next := i + n
			for next < len(lines) && blank(lines[next]) {
				next++
			}
			if next < len(lines) && isQuoteLine(lines[next]) {
				// "On … wrote:" above a quote is no answer and no context.
				i += n - 1
				continue
			}
			if strong {
				break scan
			}
		}
		if marker(t, i) != "" || isSigDelimiter(l) {
			break scan
		}
		push(false, l)
	}

	// A mobile client's sign-off ends the last run of the author's words.
	for k := len(runs) - 1; k >= 0; k-- {
		if runs[k].quoted {
			continue
		}
		ls := runs[k].lines
		for len(ls) > 0 && (blank(ls[len(ls)-1]) || isMobileSignature(newText(ls[len(ls)-1:]), 0)) {
			ls = ls[:len(ls)-1]
		}
		runs[k].lines = ls
		break
	}

	// An answer keeps context when it follows a quote and is inline: a
	// quote follows it too, or the quote above it was trimmed to what is
	// answered. An answer below a whole quoted message (bottom-posting) is
	// about the message, not its last lines; one above it (top-posting)
	// follows no quote.
	var out []InlinePart
	withContext := false
	for k, r := range runs {
		if r.quoted || !hasWords(r.lines) {
			continue
		}
		a := InlinePart{Text: trimBlank(trimRight(r.lines))}
		if k > 0 && runs[k-1].quoted {
			above := runs[k-1].lines
			below := k+1 < len(runs) && hasWords(runs[k+1].lines)
			if below || wordLines(above) <= maxTrimmedQuote {
				a.Quoted = contextOf(above)
				for _, q := range a.Quoted {
					a.Context = append(a.Context, shorten(q))
				}
			}
		}
		withContext = withContext || len(a.Context) > 0
		out = append(out, a)
	}
	if !withContext {
		return nil
	}
	return out
}

// maxTrimmedQuote is the most lines a quote may have and still be taken
// for one trimmed to what the answer below it is about.
const maxTrimmedQuote = 8

func wordLines(lines []string) int {
	n := 0
	for _, l := range lines {
		if !blank(unquote(l)) {
			n++
		}
	}
	return n
}

// contextOf picks the quoted paragraph right above an answer (its last
// few lines): not an attribution, not the quoted message's signature (the
// host's footer).
func contextOf(quoted []string) []string {
	var picked []string
	gap := false
	for _, l := range quoted {
		t := unquote(l)
		switch {
		case isSigDelimiter(strings.TrimSpace(t)):
			// An answer below the quoted message's footer answers no line
			// of it.
			return nil
		case blank(t):
			gap = true
			continue
		}
		if gap {
			// A new paragraph: the answer is about the one nearest it.
			picked, gap = nil, false
		}
		if findAttribution(newText([]string{t}), 0).n > 0 {
			continue
		}
		picked = append(picked, strings.TrimSpace(t))
	}
	return last(picked)
}

func last(lines []string) []string {
	if len(lines) > MaxContextLines {
		lines = lines[len(lines)-MaxContextLines:]
	}
	return lines
}

// unquote removes every level of quote marks from a line: "> > text" and
// ">> text" are both "text".
func unquote(l string) string {
	for {
		t := strings.TrimLeft(l, " \t")
		if !strings.HasPrefix(t, ">") {
			return l
		}
		l = t[1:]
	}
}

// shorten cuts a long quoted line to a reminder of it.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxContextRunes {
		return s
	}
	r := []rune(s)[:maxContextRunes]
	if i := strings.LastIndexByte(string(r), ' '); i > maxContextRunes/2 {
		return string(r)[:i] + " …"
	}
	return string(r) + "…"
}

func hasWords(lines []string) bool {
	for _, l := range lines {
		if !blank(unquote(l)) {
			return true
		}
	}
	return false
}

func trimRight(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t")
	}
	return out
}
