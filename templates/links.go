package templates

import (
	htmltemplate "html/template"
	"strings"

	"github.com/mafiamail/mafiamail/lang"
)

// The footer of every copy shows the reader's addresses and the commands
// that fit their moment. As templates, each address took a nested
// template and six calls of functions through reflection (its escapers
// among them), and each command of a list two or three: together most of
// the footer's cost, paid once per copy of a post to every reader. As
// functions they cost a call each. They write what those templates wrote,
// byte for byte (see TestLinksWriteWhatTheTemplatesDid).

// AddressLink is an address as a mailto link that shows it whole where it
// fits: an inline block moves to a line of its own before it breaks, it
// may break only after a "+" or "-" or before the "@" (see Breakable), and
// only an address wider than the column breaks anywhere (overflow-wrap),
// never mid-word when it would fit.
func AddressLink(addr string) htmltemplate.HTML {
	var b strings.Builder
	b.Grow(2*len(addr) + 128)
	b.WriteString(`<a href="mailto:`)
	writeURLAttr(&b, addr)
	b.WriteString(linkStyleAttr)
	b.WriteString(string(Breakable(addr)))
	b.WriteString(`</a>`)
	return htmltemplate.HTML(b.String())
}

// writeURLAttr writes s as the rest of a URL inside a quoted attribute,
// as html/template does: bytes a URL may not hold are percent-encoded
// (valid escapes stay), then what HTML would read as markup is escaped.
func writeURLAttr(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '&':
			b.WriteString("&amp;")
		case c == '+':
			b.WriteString("&#43;")
		case urlKeeps(c) || c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// urlKeeps reports whether a URL keeps c as it is: letters, digits, the
// unreserved marks and the reserved ones but the quote and parentheses
// (RFC 3986).
func urlKeeps(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// htmlText escapes text for an HTML element's content as html/template
// does.
var htmlText = strings.NewReplacer("\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;")

// commandList writes commands in the language of l, each in bold, with
// " · " between them.
func commandList(l *lang.Language, cs []Command) htmltemplate.HTML {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString("<strong>")
		htmlText.WriteString(&b, l.Phrase(c.Syntax))
		b.WriteString("</strong>")
	}
	return htmltemplate.HTML(b.String())
}

// commandLine writes commands in the language of l with " · " between
// them, for the text part.
func commandLine(l *lang.Language, cs []Command) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString(l.Phrase(c.Syntax))
	}
	return b.String()
}

// linkStyleAttr ends the opening tag of an address link with the style of
// class "link", worked out once.
var linkStyleAttr = `" style="` + Style("link") + `">`
