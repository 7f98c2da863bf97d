package templates

import (
	htmltemplate "html/template"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang"
)

// funcs are the helpers both template sets share.
var funcs = map[string]any{
	// paras splits text into paragraphs of lines, for HTML.
	"paras": Paragraphs,
	"add":   func(a, b int) int { return a + b },
	// plainrules lays out the rules' Markdown as text (HELP RULES).
	"plainrules": PlainRules,
	"sub":        func(a, b int) int { return a - b },
	// seq is 0..n-1, to repeat a line n times.
	"seq": func(n int) []int { return make([]int, max(n, 0)) },
	// quote marks every line of someone's words as theirs: "> " before it
	// (">" before a line that is a quote already, one level deeper).
	"quote": Quote,
	// segments splits a post into the author's words and the lines they
	// quote, for HTML.
	"segments": Segments,
	// nest indents a nested section by pad: its fixed lines (a table,
	// short enough before) stay fixed lines within the width, continued
	// on indented lines; its paragraphs go on flowing.
	"nest": func(pad, text string) string {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			fixed := utf8.RuneCountInString(l) <= FixedWidth
			lines[i] = pad + l
			if fixed {
				lines[i] = FixedLines(lines[i], FixedWidth)
			}
		}
		return strings.Join(lines, "\n")
	},
	// indent prefixes every line of text with pad, for quoted text.
	"indent": func(pad, text string) string {
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			lines[i] = pad + l
		}
		return strings.Join(lines, "\n")
	},
}

// langFuncs are the helpers whose words depend on the language.
func langFuncs(l *lang.Language) map[string]any {
	return map[string]any{
		// plural writes a count with its noun, by the language's plural
		// rule: plural 1 "vote" "votes" is "1 vote".
		"plural": func(n int, one, many string) string {
			return strconv.Itoa(n) + " " + l.Plural(n, one, many)
		},
		// list joins names as people write them: "Alice, Bob and Carol".
		"list": func(names []string) string { return ListIn(l.Tag, names) },
		// word is the language's word for one of the host's own (a role,
		// a side, a cause of death), the English word in English.
		"word": l.Phrase,
		// lang is the language's tag, for the HTML's lang attribute.
		"lang": func() string { return l.Tag },
	}
}

// List joins names as people write them in English: "Alice", "Alice and
// Bob", "Alice, Bob and Carol".
func List(names []string) string { return ListIn(lang.Default, names) }

// ListIn joins names as people write them in the language of tag.
func ListIn(tag string, names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return lang.Get(tag).Sprintf("%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// ListOrIn joins names as alternatives in the language of tag: "Alice, Bob
// or Carol".
func ListOrIn(tag string, names []string) string {
	if len(names) < 2 {
		return ListIn(tag, names)
	}
	return lang.Get(tag).Sprintf("%s or %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// Paragraphs splits text into paragraphs (separated by blank lines), each a
// list of its lines.
func Paragraphs(text string) [][]string {
	var out [][]string
	var cur []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, strings.TrimRight(l, " \t"))
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// Quote marks every line of text as quoted: "> " before a line, ">" alone
// for an empty one. A line that is a quote already becomes "> > ...", never
// ">>", which the thread would read as a vote.
func Quote(text string) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			lines[i] = ">"
			continue
		}
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}

// Segment is a run of lines of a post: the author's own, or quoted.
type Segment struct {
	Quoted bool
	// Text is the run, without the quote marks of quoted lines.
	Text string
}

// Segments splits a post into runs of the author's lines and of the lines
// they quote ("> " lines), in order.
func Segments(text string) []Segment {
	var out []Segment
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		quoted := strings.HasPrefix(l, ">")
		if quoted {
			l = strings.TrimPrefix(strings.TrimPrefix(l, ">"), " ")
		}
		if n := len(out); n > 0 && out[n-1].Quoted == quoted {
			out[n-1].Text += "\n" + l
			continue
		}
		out = append(out, Segment{Quoted: quoted, Text: l})
	}
	return out
}

// Breakable is an address for HTML with the places it may break marked
// (<wbr>): after a "+" or a "-" and before the "@", so that a long
// plus-address wraps between its parts, never inside a word.
func Breakable(addr string) htmltemplate.HTML {
	var b strings.Builder
	for _, r := range addr {
		if r == '@' {
			b.WriteString("<wbr>")
		}
		switch r {
		case 0, '"', '&', '\'', '<', '>':
			b.WriteString(htmltemplate.HTMLEscapeString(string(r)))
		default:
			b.WriteRune(r)
		}
		if r == '+' || r == '-' {
			b.WriteString("<wbr>")
		}
	}
	return htmltemplate.HTML(b.String())
}
