package templates

import (
	"sort"
	"strings"
	"testing"
	tparse "text/template/parse"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

// TestEveryLanguageHasEveryTemplate: a language that lacks a file, or a
// template, that English has fails here, and so does one that has a file
// English does not (a typo in a name would never be used).
func TestEveryLanguageHasEveryTemplate(t *testing.T) {
	en := templateFiles(t, lang.Get(lang.Default))
	for _, l := range lang.All()[1:] {
		got := templateFiles(t, l)
		for name := range en {
			if _, ok := got[name]; !ok {
				t.Errorf("%s lacks %s", l.Tag, name)
			}
		}
		for name := range got {
			if _, ok := en[name]; !ok {
				t.Errorf("%s has %s, which English does not", l.Tag, name)
			}
		}
		for _, s := range []*set{setFor(l.Tag)} {
			for _, tmpl := range sets[lang.Default].text.Templates() {
				if tmpl.Name() != "" && s.text.Lookup(tmpl.Name()) == nil {
					t.Errorf("%s lacks the text template %q", l.Tag, tmpl.Name())
				}
			}
			for _, tmpl := range sets[lang.Default].html.Templates() {
				if tmpl.Name() != "" && s.html.Lookup(tmpl.Name()) == nil {
					t.Errorf("%s lacks the HTML template %q", l.Tag, tmpl.Name())
				}
			}
		}
	}
}

// TestTranslationsKeepThePlaceholders: each template of a language shows
// the same data as English's: a translation that drops or adds a field
// ({{.Target}}), or calls another template, fails here. Words may move
// around the fields as the language needs.
func TestTranslationsKeepThePlaceholders(t *testing.T) {
	enFiles := templateFiles(t, lang.Get(lang.Default))
	for _, l := range lang.All()[1:] {
		for name, enText := range enFiles {
			text, ok := templateFiles(t, l)[name]
			if !ok {
				continue // TestEveryLanguageHasEveryTemplate says so
			}
			want, err := placeholders(name, enText)
			if err != nil {
				t.Fatalf("en %s: %v", name, err)
			}
			got, err := placeholders(name, text)
			if err != nil {
				t.Errorf("%s %s: %v", l.Tag, name, err)
				continue
			}
			for tmpl, fields := range want {
				if g := got[tmpl]; strings.Join(g, " ") != strings.Join(fields, " ") {
					t.Errorf("%s %s, template %q:\n  English shows %v\n  %s shows     %v", l.Tag, name, tmpl, fields, l.Tag, g)
				}
			}
		}
	}
}

func templateFiles(t *testing.T, l *lang.Language) map[string]string {
	t.Helper()
	out, err := Sources(l)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// placeholders lists, for each template a file defines, the distinct
// fields, variables and templates it uses, sorted.
func placeholders(name, text string) (map[string][]string, error) {
	funcs := map[string]any{}
	for k := range funcs0() {
		funcs[k] = func() {}
	}
	trees, err := tparse.Parse(name, text, "{{", "}}", funcs)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for tname, tree := range trees {
		seen := map[string]bool{}
		walkNodes(tree.Root, func(n tparse.Node) {
			switch n := n.(type) {
			case *tparse.FieldNode:
				seen["."+strings.Join(n.Ident, ".")] = true
			case *tparse.ChainNode:
				seen["."+strings.Join(n.Field, ".")] = true
			case *tparse.VariableNode:
				if len(n.Ident) > 1 {
					seen[strings.Join(n.Ident, ".")] = true
				}
			case *tparse.TemplateNode:
				seen["template "+n.Name] = true
			}
		})
		var list []string
		for k := range seen {
			list = append(list, k)
		}
		sort.Strings(list)
		out[tname] = list
	}
	return out, nil
}

// funcs0 names every function a template may call.
func funcs0() map[string]bool {
	out := map[string]bool{}
	for k := range funcs {
		out[k] = true
	}
	for k := range langFuncs(lang.Get(lang.Default)) {
		out[k] = true
	}
	for _, k := range []string{"section", "news", "tally", "footer", "fixed", "breakable", "addr", "commandlist", "commandline", "htmlrules", "subject", "html", "js", "urlquery", "print", "printf", "println", "len", "index", "slice", "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "call"} {
		out[k] = true
	}
	return out
}

// TestEveryLanguageHasThePlayersRules: each language's rules.md is
// English's (lang/en/rules.md) in that language: there, with the same
// headings, and no rule codes.
func TestEveryLanguageHasThePlayersRules(t *testing.T) {
	en := lang.Get(lang.Default).Rules()
	if len(en) < 2000 {
		t.Fatalf("English's rules are %d bytes", len(en))
	}
	heads := func(md string) int { return strings.Count("\n"+md, "\n## ") }
	for _, l := range lang.All()[1:] {
		r := l.Rules()
		if strings.TrimSpace(r) == "" {
			t.Errorf("%s has no rules.md", l.Tag)
			continue
		}
		if got, want := heads(r), heads(en); got != want {
			t.Errorf("%s's rules have %d headings, English's %d", l.Tag, got, want)
		}
		if m := ruleCode.FindString(r); m != "" {
			t.Errorf("%s's rules cite the rule %s", l.Tag, m)
		}
		if len(r) < len(en)/2 {
			t.Errorf("%s's rules are %d bytes, English's %d: a part is missing", l.Tag, len(r), len(en))
		}
	}
}

// TestLengthsOfTimeInEveryLanguage: a length of time reads in the
// reader's language, with the language's plural forms.
func TestLengthsOfTimeInEveryLanguage(t *testing.T) {
	for _, c := range []struct {
		tag  string
		d    time.Duration
		want string
	}{
		{"en", 35 * time.Hour, "1 day 11 h"},
		{"de", 35 * time.Hour, "1 Tag 11 Std."},
		{"de", 50 * time.Hour, "2 Tage 2 Std."},
		{"de", 90 * time.Minute, "1 Std. 30 Min."},
	} {
		if got := (Span{D: c.d, Lang: c.tag}).String(); got != c.want {
			t.Errorf("%s %v: %q, want %q", c.tag, c.d, got, c.want)
		}
	}
	for _, l := range lang.All()[1:] {
		day, days := (Span{D: 24 * time.Hour, Lang: l.Tag}).String(), (Span{D: 48 * time.Hour, Lang: l.Tag}).String()
		if day == "1 day" || days == "2 days" || strings.TrimPrefix(day, "1") == strings.TrimPrefix(days, "2") {
			t.Errorf("%s: one day is %q, two days %q", l.Tag, day, days)
		}
	}
}
