package tmplexec

import (
	"fmt"
	htmltemplate "html/template"
	"reflect"
	"strings"
)

// html/template names the escapers it adds to a tree so; these are the
// ones this package runs itself. A tree that calls another is left to
// html/template.
const htmlEscaperName = "_html_template_htmlescaper"

var escapers = map[string]any{
	htmlEscaperName:                htmlEscaper,
	"_html_template_attrescaper":   attrEscaper,
	"_html_template_rcdataescaper": rcdataEscaper,
	"_html_template_urlfilter":     urlFilter,
	"_html_template_urlnormalizer": urlNormalizer,
	"_html_template_urlescaper":    urlEscaper,
}

// content is the kind of text a value says it is, as html/template's
// typed strings do.
type content int

const (
	plain content = iota
	html
	url
	other // CSS, an attribute, JavaScript, a srcset
)

// stringify is html/template's: a value's text and the kind of content
// its type claims.
func stringify(args ...any) (string, content) {
	if len(args) == 1 {
		switch s := indirectAny(args[0]).(type) {
		case string:
			return s, plain
		case htmltemplate.HTML:
			return string(s), html
		case htmltemplate.URL:
			return string(s), url
		case htmltemplate.CSS, htmltemplate.HTMLAttr, htmltemplate.JS, htmltemplate.JSStr, htmltemplate.Srcset:
			return reflect.ValueOf(s).String(), other
		}
	}
	kept := make([]any, 0, len(args))
	for _, a := range args {
		// Untyped nils are skipped, not written as <nil>.
		if a == nil {
			continue
		}
		kept = append(kept, indirectToStringerOrError(a))
	}
	return fmt.Sprint(kept...), plain
}

// indirectAny follows pointers to the value, stopping at a nil one.
func indirectAny(a any) any {
	if a == nil {
		return nil
	}
	if reflect.TypeOf(a).Kind() != reflect.Pointer {
		return a
	}
	v := reflect.ValueOf(a)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v.Interface()
}

// indirectToStringerOrError follows pointers until a Stringer or an
// error, or a nil.
func indirectToStringerOrError(a any) any {
	v := reflect.ValueOf(a)
	for !v.Type().Implements(fmtStringerType) && !v.Type().Implements(errorType) && v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	return v.Interface()
}

func htmlEscaper(args ...any) string {
	s, t := stringify(args...)
	if t == html {
		return s
	}
	return escapeHTML(s, false)
}

func attrEscaper(args ...any) string {
	s, t := stringify(args...)
	if t == html {
		// html/template strips the tags first; left to it.
		fail("HTML in an attribute: %w", errUnsupported)
	}
	return escapeHTML(s, false)
}

func rcdataEscaper(args ...any) string {
	s, t := stringify(args...)
	return escapeHTML(s, t == html)
}

func urlFilter(args ...any) string {
	s, t := stringify(args...)
	if t == url || isSafeURL(s) {
		return s
	}
	return "#ZgotmplZ"
}

// isSafeURL reports whether a URL is relative or of a scheme that cannot
// run code: http, https or mailto.
func isSafeURL(s string) bool {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(scheme, "/") {
		return strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "mailto")
	}
	return true
}

// urlNormalizer percent-encodes what a URL may not hold, leaving its
// structure and any valid escapes as they are.
func urlNormalizer(args ...any) string { return urlProcessor(true, args...) }

// urlEscaper percent-encodes a value for a part of a URL: its structure
// too.
func urlEscaper(args ...any) string { return urlProcessor(false, args...) }

func urlProcessor(norm bool, args ...any) string {
	s, t := stringify(args...)
	if t == url {
		norm = true
	}
	var b strings.Builder
	written := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("-._~", c) >= 0,
			'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			continue
		case norm && strings.IndexByte("!#$&*+,/:;=?@[]", c) >= 0:
			continue
		case norm && c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			continue
		}
		if written == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[written:i])
		fmt.Fprintf(&b, "%%%02x", c)
		written = i + 1
	}
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// escapeHTML escapes s for HTML text or a quoted attribute; norm leaves
// ampersands alone, for text that is HTML already.
func escapeHTML(s string, norm bool) string {
	var b strings.Builder
	if !writeEscaped(&b, s, norm, true) {
		return s
	}
	return b.String()
}

// writeHTMLEscaped writes the value of an action as html/template's HTML
// text escaper would.
func writeHTMLEscaped(w writer, v reflect.Value) {
	if v.IsValid() && v.Type() == stringType {
		writeEscaped(w, v.String(), false, false)
		return
	}
	var arg any
	if v.IsValid() {
		arg = v.Interface()
	}
	w.WriteString(htmlEscaper(arg))
}

// writeEscaped writes s with the characters HTML gives meaning to as
// references. Runes beyond ASCII go through as they are, as html/template
// lets them. With lazy, nothing is written unless something needs
// escaping, and the answer says whether anything was.
func writeEscaped(w writer, s string, norm, lazy bool) bool {
	last := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = "\uFFFD"
		case '"':
			repl = "&#34;"
		case '&':
			if norm {
				continue
			}
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		w.WriteString(s[last:i])
		w.WriteString(repl)
		last = i + 1
	}
	if lazy && last == 0 {
		return false
	}
	w.WriteString(s[last:])
	return true
}
