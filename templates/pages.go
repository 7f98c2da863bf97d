package templates

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/mafiamail/mafiamail/lang"
)

// The message templates are written once, for every language: pages/ holds
// KIND.txt and KIND.html with every phrase a reader reads marked as
// ⟦English wording⟧, and pages/styles.css the look of the HTML by class.
// Each language's set is made from them when the package loads: the marked
// phrases are replaced by the language's wording (lang/xx/pages.json) and
// the classes by inline styles, before the templates are parsed, so that
// neither costs anything when a message is rendered.
//
//go:embed pages/*.txt pages/*.html pages/styles.css
var pages embed.FS

// A phrase is marked ⟦...⟧. Its key is its English wording, followed by
// §context where the same English is worded differently in different
// places (or is too short to stand alone): "⟦as§renamed⟧" reads "as" in
// English.
const (
	phraseOpen  = "⟦"
	phraseClose = "⟧"
	contextMark = "§"
)

// English is the English wording of a phrase's key.
func English(key string) string {
	en, _, _ := strings.Cut(key, contextMark)
	return en
}

// pageFiles lists the template files matching pattern ("*.txt").
func pageFiles(pattern string) ([]string, error) {
	return fs.Glob(pages, "pages/"+pattern)
}

// localize writes the template src in the language l: every marked phrase
// replaced by l's wording of it, English's by the English in its key.
func localize(l *lang.Language, name, src string) (string, error) {
	var b strings.Builder
	b.Grow(len(src) + len(src)/4)
	for {
		i := strings.Index(src, phraseOpen)
		if i < 0 {
			b.WriteString(src)
			return b.String(), nil
		}
		b.WriteString(src[:i])
		src = src[i+len(phraseOpen):]
		key, rest, ok := strings.Cut(src, phraseClose)
		if !ok {
			return "", fmt.Errorf("%s: %s without %s", name, phraseOpen, phraseClose)
		}
		if l.Tag == lang.Default {
			b.WriteString(English(key))
		} else if s, ok := l.Page(key); ok {
			b.WriteString(s)
		} else {
			return "", fmt.Errorf("%s: lang/%s/pages.json has no %q", name, l.Tag, key)
		}
		src = rest
	}
}

// phraseKeys lists the keys of the phrases marked in src, in order.
func phraseKeys(src string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(src, phraseOpen)
		if !ok {
			return out
		}
		key, rest, ok := strings.Cut(after, phraseClose)
		if !ok {
			return out
		}
		out = append(out, key)
		src = rest
	}
}

// Styles are inlined rather than sent in a <style> block: several mail
// clients drop or ignore one (see docs/design.md), and a style attribute
// is what every client shows.

// styles maps each class of pages/styles.css to its declarations.
var styles = mustStyles()

// styleRule is one rule of styles.css: ".name { declarations }", on one
// line; the declarations are inlined as they are written.
var styleRule = regexp.MustCompile(`^\.([a-z][a-z0-9-]*)\s*\{\s*(.*?)\s*\}$`)

func mustStyles() map[string]string {
	b, err := fs.ReadFile(pages, "pages/styles.css")
	if err != nil {
		panic(err)
	}
	m, err := parseStyles(string(b))
	if err != nil {
		// The style table is part of the binary; the package's tests
		// report a broken one first.
		panic(err)
	}
	return m
}

// parseStyles reads a style table: one rule a line, blank lines and
// /* comment */ lines between them.
func parseStyles(css string) (map[string]string, error) {
	m := map[string]string{}
	for i, line := range strings.Split(css, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "/*") && strings.HasSuffix(line, "*/") {
			continue
		}
		r := styleRule.FindStringSubmatch(line)
		if r == nil {
			return nil, fmt.Errorf("styles.css:%d: not a rule %q", i+1, line)
		}
		if _, dup := m[r[1]]; dup {
			return nil, fmt.Errorf("styles.css:%d: class %q again", i+1, r[1])
		}
		m[r[1]] = r[2]
	}
	return m, nil
}

// Style is the inline style of a class of the style table, for the HTML
// the Go code writes itself (a link, the rules). It panics on a class the
// table lacks: the callers name theirs as constants.
func Style(class string) string {
	s, ok := styles[class]
	if !ok {
		panic("templates: no class " + class + " in styles.css")
	}
	return s
}

// inlineStyles replaces each class attribute of src with the style
// attribute of its classes, their declarations one after the other. The
// attribute may hold template actions that choose classes
// (class="outcome {{if .Accepted}}outcome-done{{end}}"): an action stays
// where it is, so that the classes it picks become the declarations it
// picks, and a quote inside it does not end the attribute.
func inlineStyles(name, src string) (string, error) {
	const open = `class="`
	var b strings.Builder
	b.Grow(len(src) + len(src)/2)
	for {
		i := strings.Index(src, open)
		if i < 0 {
			b.WriteString(src)
			return b.String(), nil
		}
		b.WriteString(src[:i])
		b.WriteString(`style="`)
		src = src[i+len(open):]
		for {
			// The classes up to the next action or the closing quote.
			j := strings.IndexAny(src, `"{`)
			if j < 0 {
				return "", fmt.Errorf("%s: a class attribute has no end", name)
			}
			for _, c := range strings.Fields(src[:j]) {
				st, ok := styles[c]
				if !ok {
					return "", fmt.Errorf("%s: class %q is not in styles.css", name, c)
				}
				b.WriteString(st)
			}
			src = src[j:]
			if src[0] == '"' {
				b.WriteByte('"')
				src = src[1:]
				break
			}
			k := strings.Index(src, "}}")
			if !strings.HasPrefix(src, "{{") || k < 0 {
				return "", fmt.Errorf("%s: a class attribute holds a stray {", name)
			}
			b.WriteString(src[:k+2])
			src = src[k+2:]
		}
	}
}

// source is the template file name of pages/ in the language l, ready to
// parse.
func source(l *lang.Language, name string) (string, error) {
	b, err := fs.ReadFile(pages, name)
	if err != nil {
		return "", err
	}
	src, err := localize(l, name, string(b))
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(name, ".html") {
		return inlineStyles(name, src)
	}
	return src, nil
}

// Sources is every template file as the language l reads it: file name
// (KIND.txt) to template text, its phrases worded and its styles inlined.
func Sources(l *lang.Language) (map[string]string, error) {
	names, err := pageFiles("*.*")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range names {
		if path.Ext(n) != ".txt" && path.Ext(n) != ".html" {
			continue
		}
		src, err := source(l, n)
		if err != nil {
			return nil, err
		}
		out[path.Base(n)] = src
	}
	return out, nil
}
