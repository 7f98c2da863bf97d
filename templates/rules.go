package templates

import (
	htmltemplate "html/template"
	"strings"
)

// The rules mail (HELP RULES) shows the rules as players read them
// (lang/en/rules.md and its translations), which are Markdown of a small kind: "## " headings, paragraphs of wrapped
// lines, **bold** and `code`. These two functions lay it out for each part
// of a mail; they know no more Markdown than those files use.

// markFold drops the Markdown marks of the rules.
var markFold = strings.NewReplacer("**", "", "`", "")

// PlainRules is the rules as plain text: each paragraph on one line, for
// the text part to flow, with the Markdown marks dropped.
func PlainRules(md string) string {
	var out []string
	for _, p := range Paragraphs(md) {
		line := strings.Join(p, " ")
		line = strings.TrimPrefix(line, "## ")
		line = markFold.Replace(line)
		out = append(out, line)
	}
	return strings.Join(out, "\n\n")
}

// HTMLRules is the rules as HTML: headings, paragraphs, bold, and commands
// in bold as everywhere else in the host's mail. Every piece of text is
// escaped; only the tags written here are markup.
func HTMLRules(md string) htmltemplate.HTML {
	var b strings.Builder
	for _, p := range Paragraphs(md) {
		line := strings.Join(p, " ")
		if h, ok := strings.CutPrefix(line, "## "); ok {
			b.WriteString(rulesTitleTag + htmltemplate.HTMLEscapeString(h) + "</h2>\n")
			continue
		}
		b.WriteString(rulesParaTag)
		b.WriteString(inline(line))
		b.WriteString("</p>\n")
	}
	return htmltemplate.HTML(b.String())
}

// inline escapes a line and turns its **bold** and `code` into <strong>.
func inline(line string) string {
	var b strings.Builder
	bold, code := false, false
	for len(line) > 0 {
		switch {
		case strings.HasPrefix(line, "**"):
			b.WriteString(map[bool]string{false: "<strong>", true: "</strong>"}[bold])
			bold = !bold
			line = line[2:]
		case line[0] == '`':
			b.WriteString(map[bool]string{false: "<strong>", true: "</strong>"}[code])
			code = !code
			line = line[1:]
		default:
			i := strings.IndexAny(line, "*`")
			if i < 0 {
				i = len(line)
			} else if i == 0 {
				i = 1 // a lone "*"
			}
			b.WriteString(htmltemplate.HTMLEscapeString(line[:i]))
			line = line[i:]
		}
	}
	if bold {
		b.WriteString("</strong>")
	}
	if code {
		b.WriteString("</strong>")
	}
	return b.String()
}

// The tags of the rules' headings and paragraphs, styled as the classes
// "rules-title" and "para" of the style table.
var (
	rulesTitleTag = `<h2 style="` + Style("rules-title") + `">`
	rulesParaTag  = `<p style="` + Style("para") + `">`
)
