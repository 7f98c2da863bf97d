package templates

import (
	"bytes"
	htmltemplate "html/template"
	"testing"
	texttemplate "text/template"

	"github.com/mafiamail/mafiamail/lang"
)

// The templates that AddressLink, commandList and commandLine replace, as
// every language defined them.
const (
	addrTemplate = `<a href="mailto:{{.}}" style="color:#1a5fb4;display:inline-block;max-width:100%;overflow-wrap:anywhere;">{{breakable .}}</a>`
	listTemplate = `{{range $i, $c := .}}{{if $i}} · {{end}}<strong>{{word $c.Syntax}}</strong>{{end}}`
	lineTemplate = `{{range $i, $c := .}}{{if $i}} · {{end}}{{word $c.Syntax}}{{end}}`
)

// tricky are addresses with what a URL, an attribute or HTML must escape.
var tricky = []string{
	"host+dec26-p-abcdefghij@example.org",
	"",
	"a&b+c@example.org",
	`"quoted name"@example.org`,
	"o'brien@example.ie",
	"<script>@x",
	"space here@x",
	"100%@x", "%41ok@x", "%zz@x", "%4",
	"jürgen@bücher.de",
	"\x00nul@x",
	"bad\xffutf8@x",
	"(paren)[bracket]{brace}|pipe\\back^caret`tick@x",
	"!#$*,/:;=?@~._-",
}

// TestLinksWriteWhatTheTemplatesDid: the functions write every address
// and command list exactly as the templates they replace, in every
// language, so that the mail did not change with them.
func TestLinksWriteWhatTheTemplatesDid(t *testing.T) {
	for _, addr := range tricky {
		if got, want := string(AddressLink(addr)), oldAddressLink(t, addr); got != want {
			t.Errorf("AddressLink(%q):\n got %s\nwant %s", addr, got, want)
		}
	}
	lists := [][]Command{nil, ThreadCommands[:1], ThreadCommands, RefereeCommands,
		{{Syntax: `VOTE <b>"x" & 'y' + z</b>`}, {Syntax: "\x00"}}}
	for _, l := range lang.All() {
		for _, cs := range lists {
			if got, want := string(commandList(l, cs)), oldCommands(t, l, listTemplate, cs, true); got != want {
				t.Errorf("%s commandList(%v):\n got %s\nwant %s", l.Tag, cs, got, want)
			}
			if got, want := commandLine(l, cs), oldCommands(t, l, lineTemplate, cs, false); got != want {
				t.Errorf("%s commandLine(%v):\n got %s\nwant %s", l.Tag, cs, got, want)
			}
		}
	}
}

// FuzzAddressLink: any address, however odd, comes out as the template
// wrote it.
func FuzzAddressLink(f *testing.F) {
	for _, a := range tricky {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if got, want := string(AddressLink(addr)), oldAddressLink(t, addr); got != want {
			t.Fatalf("AddressLink(%q):\n got %s\nwant %s", addr, got, want)
		}
	})
}

func oldAddressLink(t testing.TB, addr string) string {
	t.Helper()
	tpl := htmltemplate.Must(htmltemplate.New("addr").Funcs(htmltemplate.FuncMap{"breakable": Breakable}).Parse(addrTemplate))
	var b bytes.Buffer
	if err := tpl.Execute(&b, addr); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func oldCommands(t testing.TB, l *lang.Language, src string, cs []Command, html bool) string {
	t.Helper()
	var b bytes.Buffer
	var err error
	if html {
		err = htmltemplate.Must(htmltemplate.New("").Funcs(htmltemplate.FuncMap{"word": l.Phrase}).Parse(src)).Execute(&b, cs)
	} else {
		err = texttemplate.Must(texttemplate.New("").Funcs(texttemplate.FuncMap{"word": l.Phrase}).Parse(src)).Execute(&b, cs)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
