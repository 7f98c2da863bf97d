// Package templates holds every message the host sends, as text/template
// (plain text) and html/template (HTML alternative) files embedded in the
// binary.
//
// A message is made of sections, one per piece of news (usually one per
// engine event), framed by a shared layout: the headline, the reader's own
// state, the sections, the official tally while a vote runs, and a footer
// with the reader's commands and reply addresses. Each kind of section has
// one pair of files in pages/, KIND.txt and KIND.html, each defining the
// templates "KIND" (the body) and "KIND.subject" (one line of news, also
// used as the message's first line). Files whose names start with "_" hold
// the shared partials. The files are written once for every language, their
// phrases marked for each language to word (see pages.go).
//
// The templates are written for a phone first: short lines that the mail
// client wraps, the news in the first line (which is what an inbox list
// shows), and an HTML alternative in one column with inline styles (from
// the classes of pages/styles.css) and no external resources.
//
// Text that players may quote back matters as much as text they read: a
// reply that quotes a message is stripped of its quote by the inbound
// parser, but the templates never start a line with a command verb and never
// write ">>", so that a quote that slips through cannot cast a vote.
package templates

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"io"
	"path"
	"sort"
	"strings"
	"sync"
	texttemplate "text/template"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang"
)

// Rendered is one message, laid out.
type Rendered struct {
	// Subject is the message's news in one line, which is also its first
	// line. Compose decides the Subject header (see mail/compose).
	Subject string
	Text    string
	HTML    string
}

// set is one language's templates.
type set struct {
	lang  *lang.Language
	text  *texttemplate.Template
	html  *htmltemplate.Template
	kinds []string
	// personal holds the kinds whose templates read the reader's part of
	// the view: news with one of them is laid out for each copy.
	personal map[string]bool
}

var (
	sets  = map[string]*set{}
	kinds []string
)

func init() {
	for _, l := range lang.All() {
		s, err := parse(l)
		if err != nil {
			// The templates are part of the binary; a broken one is a build
			// error that the package's tests report first.
			panic(err)
		}
		sets[l.Tag] = s
	}
	kinds = sets[lang.Default].kinds
}

// setFor is the templates of a language, English for one it does not know.
func setFor(tag string) *set {
	if s, ok := sets[tag]; ok {
		return s
	}
	return sets[lang.Default]
}

func parse(l *lang.Language) (*set, error) {
	var ts *texttemplate.Template
	var hs *htmltemplate.Template
	tfuncs := texttemplate.FuncMap{
		"section": func(s *Section) (string, error) { return exec(ts, s.Kind, s) },
	}
	hfuncs := htmltemplate.FuncMap{
		"section": func(s *Section) (htmltemplate.HTML, error) {
			out, err := exec(hs, s.Kind, s)
			// The nested template escaped everything it wrote.
			return htmltemplate.HTML(out), err
		},
	}
	for k, f := range funcs {
		tfuncs[k] = f
		hfuncs[k] = f
	}
	for k, f := range langFuncs(l) {
		tfuncs[k] = f
		hfuncs[k] = f
	}
	// fixed lays out a template's text as fixed lines (a table, such as a
	// tally) within the width of a plain-text line.
	tfuncs["fixed"] = func(name string, data any) (string, error) {
		out, err := exec(ts, name, data)
		return FixedLines(out, FixedWidth), err
	}
	hfuncs["breakable"] = Breakable
	hfuncs["addr"] = AddressLink
	hfuncs["commandlist"] = func(cs []Command) htmltemplate.HTML { return commandList(l, cs) }
	tfuncs["commandline"] = func(cs []Command) string { return commandLine(l, cs) }
	hfuncs["htmlrules"] = HTMLRules
	tfuncs["htmlrules"] = func(s string) string { return s }
	tfuncs["breakable"] = func(s string) string { return s }
	// Both sets need "subject": a section's subject is text in either.
	tfuncs["subject"] = func(s *Section) (string, error) { return exec(ts, s.Kind+".subject", s) }
	hfuncs["subject"] = tfuncs["subject"]
	// news lays out the sections of a message, and tally its tally: the
	// parts of a copy that read alike for many readers, kept in the
	// view's Cache (see cache.go).
	var personal map[string]bool
	isPersonal := func(kind string) bool { return personal[kind] }
	tfuncs["news"] = func(m *View) (string, error) {
		return news(m, 't', isPersonal, func(v *View) (string, error) { return exec(ts, "news", v) })
	}
	hfuncs["news"] = func(m *View) (htmltemplate.HTML, error) {
		out, err := news(m, 'h', isPersonal, func(v *View) (string, error) { return exec(hs, "news", v) })
		// The news template escaped everything it wrote.
		return htmltemplate.HTML(out), err
	}
	tfuncs["tally"] = func(m *View) (string, error) {
		return m.cache.part('t', m.tallyKey(), func() (string, error) { return exec(ts, "tallyblock", m.Tally) })
	}
	hfuncs["tally"] = func(m *View) (htmltemplate.HTML, error) {
		out, err := m.cache.part('h', m.tallyKey(), func() (string, error) { return exec(hs, "tallyblock", m.Tally) })
		return htmltemplate.HTML(out), err
	}

	// footer lays out the reader's footer, kept for the next mail that
	// shows them the same one (see footer.go).
	tfuncs["footer"] = func(m *View) (string, error) {
		return footer(l.Tag, 't', m, func(v *footerView) (string, error) { return exec(ts, "footer", v) })
	}
	hfuncs["footer"] = func(m *View) (htmltemplate.HTML, error) {
		out, err := footer(l.Tag, 'h', m, func(v *footerView) (string, error) { return exec(hs, "footer", v) })
		// The footer template escaped everything it wrote.
		return htmltemplate.HTML(out), err
	}

	ts = texttemplate.New("").Funcs(tfuncs).Option("missingkey=error")
	hs = htmltemplate.New("").Funcs(hfuncs).Option("missingkey=error")
	names, err := pageFiles("*.*")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		base := path.Base(n)
		var perr error
		switch path.Ext(n) {
		case ".txt":
			var src string
			if src, perr = source(l, n); perr == nil {
				_, perr = ts.New(base).Parse(src)
			}
		case ".html":
			var src string
			if src, perr = source(l, n); perr == nil {
				_, perr = hs.New(base).Parse(src)
			}
		default:
			continue
		}
		if perr != nil {
			return nil, fmt.Errorf("templates %s: %w", l.Tag, perr)
		}
	}
	names, err = pageFiles("*.txt")
	if err != nil {
		return nil, err
	}
	var ks []string
	for _, n := range names {
		n = path.Base(n)
		if strings.HasPrefix(n, "_") {
			continue
		}
		k := strings.TrimSuffix(n, ".txt")
		for _, need := range []string{k, k + ".subject"} {
			if ts.Lookup(need) == nil {
				return nil, fmt.Errorf("templates %s: %s.txt does not define %q", l.Tag, k, need)
			}
			if hs.Lookup(need) == nil && need == k {
				return nil, fmt.Errorf("templates %s: %s.html does not define %q", l.Tag, k, need)
			}
		}
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, need := range []string{"news", "tallyblock"} {
		if ts.Lookup(need) == nil || hs.Lookup(need) == nil {
			return nil, fmt.Errorf("templates %s: no template %q", l.Tag, need)
		}
	}
	personal = personalKinds(ts, hs, ks)
	return &set{lang: l, text: ts, html: hs, kinds: ks, personal: personal}, nil
}

// news lays out the news of m with layOut, from the view newsView gives,
// and keeps it in m's Cache when that view is shared.
func news(m *View, format byte, personal func(string) bool, layOut func(*View) (string, error)) (string, error) {
	v, shared, restore := newsView(m, personal)
	defer restore()
	if m.cache != nil && !m.keys.newsDone {
		if shared {
			m.keys.news = newsKey(v)
		}
		m.keys.newsDone = true
	}
	return m.cache.part(format, m.keys.news, func() (string, error) { return layOut(v) })
}

// tallyKey is the key of m's tally, worked out once for both formats.
func (m *View) tallyKey() []byte {
	if m.cache != nil && !m.keys.tallyDone {
		m.keys.tally, m.keys.tallyDone = tallyKey(m.Lang, m.Tally), true
	}
	return m.keys.tally
}

// executor is a text or an HTML template set.
type executor interface {
	ExecuteTemplate(w io.Writer, name string, data any) error
}

// exec runs the template name of t on data, in a pooled buffer.
func exec(t executor, name string, data any) (string, error) {
	b := buffers.Get().(*bytes.Buffer)
	defer putBuffer(b)
	if err := t.ExecuteTemplate(b, name, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// buffers hold the text of templates while they run: a message runs a
// dozen or more (its sections, their subjects, the layouts), and each
// would otherwise grow a buffer of its own from nothing.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putBuffer returns a buffer to the pool, unless a rare huge message grew
// it: the pool would keep that memory for good.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 64<<10 {
		return
	}
	b.Reset()
	buffers.Put(b)
}

// Kinds lists every kind of section, each with its pair of files.
func Kinds() []string { return append([]string(nil), kinds...) }

// Known reports whether kind has templates.
func Known(kind string) bool {
	i := sort.SearchStrings(kinds, kind)
	return i < len(kinds) && kinds[i] == kind
}

// Render lays out one copy of a message. kind names the section that
// carries the message's main news: its subject becomes the first line
// unless the message sets a Headline. data is the *Message.
func Render(kind string, data any) (Rendered, error) {
	src, ok := data.(*View)
	if !ok || src == nil {
		return Rendered{}, fmt.Errorf("templates: render %s: data is %T, not *templates.View", kind, data)
	}
	return render(kind, src, nil)
}

func render(kind string, src *View, cache *Cache) (Rendered, error) {
	if src == nil {
		return Rendered{}, fmt.Errorf("templates: render %s: no view", kind)
	}
	if !Known(kind) {
		return Rendered{}, fmt.Errorf("templates: no templates for kind %q", kind)
	}
	if len(src.Sections) == 0 {
		return Rendered{}, fmt.Errorf("templates: render %s: a message needs at least one section", kind)
	}
	m := *src
	ls := setFor(m.Lang)
	Localize(&m, ls.lang.Tag)
	var main *Section
	for _, s := range m.Sections {
		if err := attach(&m, s); err != nil {
			return Rendered{}, fmt.Errorf("templates: render %s: %w", kind, err)
		}
		if main == nil && s.Kind == kind {
			main = s
		}
	}
	if main == nil {
		main = m.Sections[0]
	}
	if (main.Kind == "post" || main.Kind == "mafia") && m.Headline == "" && main != m.Sections[0] {
		// A post is the news of the mail it is in: its words come first,
		// right under the headline that names their author, and the
		// commands sent with it (a vote, a lock) follow. Otherwise the
		// author's name would head the mail and again the post below.
		secs := []*Section{main}
		for _, s := range m.Sections {
			if s != main {
				secs = append(secs, s)
			}
		}
		m.Sections = secs
	}
	m.main, m.cache = main, cache
	if m.Headline == "" {
		h, err := exec(ls.text, main.Kind+".subject", main)
		if err != nil {
			return Rendered{}, fmt.Errorf("templates: render %s subject: %w", kind, err)
		}
		m.Headline = oneLine(h)
	} else {
		m.headlineSet = true
	}
	var r Rendered
	r.Subject = m.Headline
	// Both layouts are tidied straight from their buffers: the text of a
	// whole message is the longest a render writes, and copying it out
	// first would copy it twice.
	tb := buffers.Get().(*bytes.Buffer)
	defer putBuffer(tb)
	if err := ls.text.ExecuteTemplate(tb, "layout", &m); err != nil {
		return Rendered{}, fmt.Errorf("templates: render %s text: %w", kind, err)
	}
	r.Text = tidyText(tb.Bytes())
	if m.attached() {
		// The words of a post hang right under their author's name, so
		// that the name is part of the block that quotes them.
		head, rest, _ := strings.Cut(r.Text, "\n")
		r.Text = head + "\n" + strings.TrimLeft(rest, "\n")
	}
	hb := buffers.Get().(*bytes.Buffer)
	defer putBuffer(hb)
	if err := ls.html.ExecuteTemplate(hb, "layout", &m); err != nil {
		return Rendered{}, fmt.Errorf("templates: render %s html: %w", kind, err)
	}
	r.HTML = tidyHTML(hb.Bytes())
	return r, nil
}

// attach ties a section, and the sections a reply nests, to the message
// they are rendered in.
func attach(m *View, s *Section) error {
	if !Known(s.Kind) {
		return fmt.Errorf("no templates for section kind %q", s.Kind)
	}
	s.Msg = m
	if s.Reply != nil {
		for _, l := range s.Reply.Lines {
			for _, sub := range l.Sections {
				if err := attach(m, sub); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// SelfFirst reports whether the reader's own line comes right below the
// headline. After a post it comes below the news instead: the first lines
// of a relay are the author's words, which is what the inbox list shows.
func (m *View) SelfFirst() bool {
	switch m.main.Kind {
	case "post", "mafia", "digest", "announce":
		return false
	}
	return true
}

// attached reports whether the message opens with a post under its
// author's name as the headline.
func (m *View) attached() bool {
	return (m.main.Kind == "post" || m.main.Kind == "mafia") && m.Main(m.main)
}

// Ended reports whether the message announces the game's end: news in
// it no longer needs to keep roles for later.
func (m *View) Ended() bool {
	for _, s := range m.Sections {
		if s.Kind == "end" {
			return true
		}
	}
	return false
}

// Main reports whether s is the section whose subject is the headline and
// comes first: its subject is then not repeated above it.
func (m *View) Main(s *Section) bool {
	return !m.headlineSet && s == m.main && len(m.Sections) > 0 && s == m.Sections[0]
}

// PostLeads reports whether the message opens with a post whose frame
// names its writer as the headline does ("Judy writes"): the HTML then
// lets the frame's label stand as its first line rather than say it twice.
// A relayed post's headline says more (who relayed it), and stays.
func (m *View) PostLeads() bool {
	if m.SelfFirst() || len(m.Sections) == 0 {
		return false
	}
	s := m.Sections[0]
	return m.Main(s) && s.Kind == "post" && s.Variant != "relayed"
}

// Lead reports whether s is the section whose subject is the headline,
// wherever it stands: its subject is not repeated above it. When other
// news comes before it (a removal before the end it causes), the layout
// sets it apart with a rule instead.
func (m *View) Lead(s *Section) bool {
	return !m.headlineSet && s == m.main
}

// oneLine folds a rendered subject into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// tidyText trims the spaces templates leave at the ends of lines, folds runs
// of blank lines into one, and ends the text with one newline. The
// signature separator "-- " keeps its space (RFC 3676).
func tidyText(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	blank := true // no blank lines at the top
	pending := 0  // blank lines kept but not yet written: at most one
	for line := range bytes.Lines(s) {
		l, ended := bytes.CutSuffix(line, []byte("\n"))
		if ended {
			l = bytes.TrimSuffix(l, []byte("\r"))
		}
		if string(l) != "-- " {
			l = bytes.TrimRight(l, " \t")
		}
		if len(l) == 0 {
			if blank {
				continue
			}
			blank = true
			pending++
			continue
		}
		blank = false
		// A blank line is written only once a line follows it: the text
		// ends with its last line.
		for ; pending > 0; pending-- {
			b.WriteByte('\n')
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		return "\n"
	}
	return b.String()
}

// tidyHTML drops the blank lines that template actions leave behind.
func tidyHTML(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for line := range bytes.Lines(s) {
		l := bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(l)) != 0 {
			b.Write(bytes.TrimRight(l, " \t"))
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return "\n"
	}
	return b.String()
}

// FixedWidth is the longest fixed line the text templates write: a
// continuation line starts with spaces, which a format=flowed part stuffs
// with one more (see mail/compose), and must still fit in 78 characters.
const FixedWidth = 76

// FixedLines breaks every line of text longer than width characters at
// spaces into lines of at most width, the continuations indented two
// spaces deeper than the line, so that a table keeps its shape in any
// plain-text reader and never reflows. A word longer than a line stays
// whole.
func FixedLines(text string, width int) string {
	lines := strings.Split(text, "\n")
	var out []string
	for _, l := range lines {
		cont := l[:len(l)-len(strings.TrimLeft(l, " "))] + "  "
		for utf8.RuneCountInString(l) > width {
			cut := -1
			n := 0
			for i, r := range l {
				if n > width {
					break
				}
				if r == ' ' && n > len(cont) {
					cut = i
				}
				n++
			}
			if cut < 0 {
				break
			}
			out = append(out, strings.TrimRight(l[:cut], " "))
			l = cont + strings.TrimLeft(l[cut:], " ")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
