package reply

import (
	"strings"
	"unicode"
)

// Record is the host's own record of the mail an inline reply answers:
// what the context of the reply may be checked against, so that a line
// its author made up and marked as a quote is never relayed as one.
type Record struct {
	// Public are the lines of the mail every reader of it was sent, blank
	// lines between the runs of lines that follow one another in it (see
	// compose.Outgoing.Public). Only these are relayed as context.
	Public string
	// Texts are the mail's text versions as its reader could see them
	// (the plain text, the HTML read as text): lines of it that are not
	// public are the host's or the reader's own.
	Texts []string
}

// QuoteKind is what a quoted line of an inline reply turns out to be.
type QuoteKind int

// The kinds of quoted lines.
const (
	// Authors: no line of the mail answered; the author wrote it, and it is
	// relayed as the author's own words, never as a quote.
	Authors QuoteKind = iota
	// Public: a line every reader of the mail was sent, relayed as context.
	Public
	// LeftOut: a line of the mail that is not public (a heading, the
	// reader's own state or receipt, the footer), or any quoted line when
	// the host knows no mail the reply answers: not relayed, as the quotes
	// of a reply that is not inline are not.
	LeftOut
)

// Check sorts the quoted lines above an answer (InlinePart.Quoted). A run
// of them is Public when, quote marks taken off and every run of white
// space made one space, it is the same words in the same order as a run of
// the record's public lines read as one text (a client may wrap the lines
// it quotes anywhere a space is), starting and ending where words do. The
// longest such runs are taken from the top. A line that is no part of such
// a run is LeftOut when the same words are anywhere in one line of the
// mail, else Authors. A nil record knows no mail: every line is LeftOut,
// for the host cannot tell the author's words from a quote.
func (rec *Record) Check(quoted []string) []QuoteKind {
	kinds := make([]QuoteKind, len(quoted))
	if rec == nil {
		for i := range kinds {
			kinds[i] = LeftOut
		}
		return kinds
	}
	runs := publicRuns(rec.Public)
	var lines []string
	for _, t := range rec.Texts {
		for _, l := range strings.Split(t, "\n") {
			if l = Normalize(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	norm := make([]string, len(quoted))
	for i, q := range quoted {
		norm[i] = Normalize(q)
	}
	for i := 0; i < len(quoted); {
		j := len(quoted)
		for ; j > i; j-- {
			if !blankRun(norm[i:j]) && inSomeRun(strings.Join(norm[i:j], " "), runs) {
				break
			}
		}
		if j > i {
			for k := i; k < j; k++ {
				kinds[k] = Public
			}
			i = j
			continue
		}
		kinds[i] = Authors
		if norm[i] == "" || inAny(norm[i], lines) || inAny(norm[i], runs) {
			kinds[i] = LeftOut
		}
		i++
	}
	return kinds
}

// Normalize is a line as quotes of it are compared: without quote marks,
// every run of white space one space, none at the ends.
func Normalize(l string) string {
	return strings.Join(strings.FieldsFunc(unquote(l), unicode.IsSpace), " ")
}

// publicRuns reads a record's public lines as runs of text: the lines
// between two blank ones, normalized and joined by spaces.
func publicRuns(public string) []string {
	var runs []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			runs = append(runs, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, l := range strings.Split(public, "\n") {
		if l = Normalize(l); l == "" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return runs
}

func blankRun(lines []string) bool {
	for _, l := range lines {
		if l != "" {
			return false
		}
	}
	return true
}

// inSomeRun reports whether s is words of one of runs, in order, starting
// and ending where words do.
func inSomeRun(s string, runs []string) bool {
	for _, r := range runs {
		for from := 0; from <= len(r)-len(s); {
			i := strings.Index(r[from:], s)
			if i < 0 {
				break
			}
			i += from
			end := i + len(s)
			if (i == 0 || r[i-1] == ' ') && (end == len(r) || r[end] == ' ') {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// inAny reports whether s is anywhere in one of texts.
func inAny(s string, texts []string) bool {
	for _, t := range texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}
