package templates

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/go-playground/locales/en"

	"github.com/mafiamail/mafiamail/lang"
)

// markupKeys lists the keys of the phrases the templates mark, each once.
func markupKeys(t *testing.T) []string {
	t.Helper()
	names, err := pageFiles("*.*")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		b, err := fs.ReadFile(pages, n)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range phraseKeys(string(b)) {
			seen[k] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestEveryLanguageWordsEveryPagePhrase: each language's pages.json words
// every phrase the templates mark, and nothing else (a phrase no template
// marks any more, or a key with a typo, would never be read).
func TestEveryLanguageWordsEveryPagePhrase(t *testing.T) {
	keys := markupKeys(t)
	if len(keys) < 500 {
		t.Fatalf("only %d phrases marked in the templates", len(keys))
	}
	for _, l := range lang.All()[1:] {
		got := l.PageKeys()
		for _, k := range keys {
			if _, ok := slices.BinarySearch(got, k); !ok {
				t.Errorf("lang/%s/pages.json lacks %q", l.Tag, k)
			}
		}
		for _, k := range got {
			if _, ok := slices.BinarySearch(keys, k); !ok {
				t.Errorf("lang/%s/pages.json words %q, which no template marks", l.Tag, k)
			}
		}
	}
}

// stringLit is a quoted string in a template action.
var stringLit = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|` + "`[^`]*`")

// classAttr is a class attribute of the markup, actions and all.
var classAttr = regexp.MustCompile(`class="((?:\{\{.*?\}\}|[^"{])*)"`)

// actionRE is a template action.
var actionRE = regexp.MustCompile(`\{\{.*?\}\}`)

// tagRE is an HTML tag.
var tagRE = regexp.MustCompile(`<[^>]*>`)

// actionWords lists the actions of a phrase by what they read and call:
// the fields, variables, functions and keywords, without the words of its
// string arguments (plural .N "vote" "votes" is worded in each language);
// and its tags (<strong>), which a language may move but not change.
func actionWords(s string) []string {
	var out []string
	for _, a := range actionRE.FindAllString(s, -1) {
		a = strings.Trim(a, "{}")
		a = strings.TrimSpace(strings.Trim(a, "-"))
		a = stringLit.ReplaceAllString(a, `""`)
		out = append(out, strings.Join(strings.Fields(a), " "))
	}
	out = append(out, tagRE.FindAllString(actionRE.ReplaceAllString(s, ""), -1)...)
	sort.Strings(out)
	return out
}

// TestPagePhrasesKeepTheirActions: a language's wording of a phrase uses
// the same actions and tags as the English, as many times: a translation
// may move {{.Name}} or a <strong> where its grammar wants it, but not drop
// it, add another field or tag, or break an {{if}}.
func TestPagePhrasesKeepTheirActions(t *testing.T) {
	for _, k := range markupKeys(t) {
		want := actionWords(English(k))
		for _, l := range lang.All()[1:] {
			s, ok := l.Page(k)
			if !ok {
				continue // TestEveryLanguageWordsEveryPagePhrase says so
			}
			if got := actionWords(s); !slices.Equal(got, want) {
				t.Errorf("%s words %q with the actions %q, English with %q", l.Tag, k, got, want)
			}
			if strings.Contains(s, "style=") {
				t.Errorf("%s words %q with a style attribute: styles are classes of styles.css", l.Tag, k)
			}
		}
	}
}

// TestActionWordsTellActionsApart: the check above sees a dropped field,
// a field for another and a broken condition, and lets words move.
func TestActionWordsTellActionsApart(t *testing.T) {
	en := actionWords(`{{.Name}} votes {{.Target}}{{if .Dead}} late{{end}} ({{plural .N "vote" "votes"}})`)
	if got := actionWords(`{{.Target}} erhält die Stimme von {{.Name}}{{if .Dead}} spät{{end}} ({{plural .N "Stimme" "Stimmen"}})`); !slices.Equal(got, en) {
		t.Errorf("moved words read as other actions: %q, %q", got, en)
	}
	if got := actionWords(`<strong>{{.Name}}</strong> votes`); !slices.Equal(got, actionWords(`stimmt: <strong>{{.Name}}</strong>`)) {
		t.Errorf("a moved tag reads as another: %q", got)
	}
	if slices.Equal(actionWords(`<strong>{{.Name}}</strong> votes`), actionWords(`<em>{{.Name}}</em> stimmt`)) {
		t.Error("another tag reads as the English's")
	}
	for _, bad := range []string{
		`{{.Name}} stimmt{{if .Dead}} spät{{end}} ({{plural .N "Stimme" "Stimmen"}})`,
		`{{.Name}} stimmt für {{.By}}{{if .Dead}} spät{{end}} ({{plural .N "Stimme" "Stimmen"}})`,
		`{{.Name}} stimmt für {{.Target}}{{if .Dead}} spät ({{plural .N "Stimme" "Stimmen"}})`,
	} {
		if slices.Equal(actionWords(bad), en) {
			t.Errorf("%q reads as the English's actions", bad)
		}
	}
}

// TestMarkupHasNoStylesAndKnowsItsClasses: the markup styles by class
// alone, every class it names is in styles.css, and every class of
// styles.css is used (by the markup or the Go code that writes HTML).
func TestMarkupHasNoStylesAndKnowsItsClasses(t *testing.T) {
	names, err := pageFiles("*.html")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"link": true, "rules-title": true, "para": true} // links.go, rules.go
	for _, n := range names {
		b, err := fs.ReadFile(pages, n)
		if err != nil {
			t.Fatal(err)
		}
		// The phrases count: a class in a phrase (<span class="muted">)
		// is the same in every language's wording of it.
		src := string(b)
		if strings.Contains(src, "style=") || strings.Contains(src, "<style") {
			t.Errorf("%s has a style of its own: styles are classes of styles.css", n)
		}
		for _, m := range classAttr.FindAllStringSubmatch(src, -1) {
			for _, c := range strings.Fields(actionRE.ReplaceAllString(m[1], " ")) {
				used[c] = true
				if _, ok := styles[c]; !ok {
					t.Errorf("%s: class %q is not in styles.css", n, c)
				}
			}
		}
	}
	for c := range styles {
		if !used[c] {
			t.Errorf("styles.css: class %q is used nowhere", c)
		}
	}
}

// TestInlineStyles: classes become one style attribute, their
// declarations in order; an action choosing a class chooses its
// declarations; a class not in the table is an error.
func TestInlineStyles(t *testing.T) {
	got, err := inlineStyles("t", `<p class="outcome {{if .Accepted}}outcome-done{{else}}outcome-refused{{end}}" title="x">`)
	if err != nil {
		t.Fatal(err)
	}
	want := `<p style="` + styles["outcome"] + `{{if .Accepted}}` + styles["outcome-done"] + `{{else}}` + styles["outcome-refused"] + `{{end}}" title="x">`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := inlineStyles("t", `<p class="no-such-class">`); err == nil {
		t.Error("an unknown class is no error")
	}
	if _, err := parseStyles(".a { x:1; }\n.a { y:2; }\n"); err == nil {
		t.Error("a class defined twice is no error")
	}
}

// pseudo turns English words into a pseudo-language's, letters outside
// actions, tags and entities accented: a run of the host's English that
// a template writes outside its marked phrases shows up unaccented.
func pseudo(s string) string {
	accent := strings.NewReplacer("a", "á", "e", "é", "i", "í", "o", "ö", "u", "ü")
	var b strings.Builder
	for s != "" {
		i := strings.IndexAny(s, "{<&")
		if i < 0 {
			b.WriteString(accent.Replace(s))
			break
		}
		b.WriteString(accent.Replace(s[:i]))
		s = s[i:]
		end := map[byte]string{'{': "}}", '<': ">", '&': ";"}[s[0]]
		if s[0] == '{' && !strings.HasPrefix(s, "{{") {
			b.WriteByte('{')
			s = s[1:]
			continue
		}
		j := strings.Index(s, end)
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:j+len(end)])
		s = s[j+len(end):]
	}
	return b.String()
}

var unaccent = strings.NewReplacer("á", "a", "é", "e", "í", "i", "ö", "o", "ü", "u")

// pseudoLanguage is a fifth language made from English's phrases alone,
// as a translator would add one: a folder with its pages.json and no
// template.
func pseudoLanguage(t *testing.T) *lang.Language {
	t.Helper()
	words := map[string]string{}
	for _, k := range markupKeys(t) {
		words[k] = pseudo(English(k))
	}
	b, err := json.Marshal(words)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{
		"pages.json":    {Data: b},
		"messages.json": {Data: []byte(`{}`)},
		"verbs.json":    {Data: []byte(`{}`)},
	}
	l, err := lang.Load("en-XA", "Pseudo", en.New(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// fill gives every pointer to a struct in v a zero value of its own, and
// every string and list of strings a word, so that every template finds
// something to read.
func fill(v reflect.Value, depth int) {
	if depth > 4 {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() && v.CanSet() && v.Type().Elem().Kind() == reflect.Struct {
			v.Set(reflect.New(v.Type().Elem()))
		}
		if !v.IsNil() {
			fill(v.Elem(), depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if f := v.Field(i); f.CanSet() {
				fill(f, depth)
			}
		}
	case reflect.String:
		if v.CanSet() && v.String() == "" {
			v.SetString("Xyz")
		}
	case reflect.Slice:
		if v.CanSet() && v.Len() == 0 && v.Type().Elem().Kind() == reflect.String {
			v.Set(reflect.ValueOf([]string{"Xyz", "Qwx"}).Convert(v.Type()))
		}
	}
}

// TestAFifthLanguageNeedsNoTemplate: a language made of nothing but its
// phrases renders every kind of section, and what it writes is English's
// mail with only the words changed: no template holds a word of its own
// that a language could not change.
func TestAFifthLanguageNeedsNoTemplate(t *testing.T) {
	l := pseudoLanguage(t)
	s, err := parse(l)
	if err != nil {
		t.Fatalf("a language of phrases alone does not parse: %v", err)
	}
	sets[l.Tag] = s
	defer delete(sets, l.Tag)
	rendered := 0
	for _, kind := range Kinds() {
		view := func(tag string) *View {
			sec := &Section{Kind: kind}
			fill(reflect.ValueOf(sec).Elem(), 0)
			sec.Kind, sec.Variant, sec.Msg, sec.Reply = kind, "", nil, nil
			v := &View{Kind: kind, Game: "g1", Lang: tag, Sections: []*Section{sec}}
			return v
		}
		want, err := Render(kind, view(lang.Default))
		if err != nil {
			t.Logf("%s: English does not render made-up data: %v", kind, err)
			continue
		}
		got, err := Render(kind, view(l.Tag))
		if err != nil {
			t.Errorf("%s: the pseudo-language does not render: %v", kind, err)
			continue
		}
		rendered++
		for _, part := range []struct{ name, en, xa string }{
			{"subject", want.Subject, got.Subject},
			{"text", want.Text, got.Text},
			{"html", strings.Replace(want.HTML, `lang="en"`, `lang="en-XA"`, 1), got.HTML},
		} {
			if part.en == part.xa && part.name != "subject" { // a subject may be all data
				t.Errorf("%s %s: the pseudo-language's reads as English's", kind, part.name)
			}
			if unaccent.Replace(part.xa) != part.en {
				t.Errorf("%s %s: the pseudo-language's differs from English's by more than its words:\n%s", kind, part.name, firstDiff(part.en, unaccent.Replace(part.xa)))
			}
		}
	}
	if rendered < len(Kinds())*3/4 {
		t.Errorf("only %d of %d kinds rendered", rendered, len(Kinds()))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  en %q\n  xa %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d lines, %d lines", len(al), len(bl))
}
