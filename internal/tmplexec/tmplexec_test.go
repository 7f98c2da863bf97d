package tmplexec

import (
	"bytes"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"strings"
	"testing"
	texttemplate "text/template"
	"text/template/parse"
)

type inner struct {
	Name  string
	N     int
	Tags  []string
	Next  *inner
	Any   any
	Map   map[string]int
	Flag  bool
	Count uint
}

func (i *inner) Hello(who string) string { return "hello " + who + " from " + i.Name }
func (i inner) Twice() int               { return 2 * i.N }
func (i *inner) Fails() (string, error)  { return "", errors.New("refused") }
func (i *inner) Self() *inner            { return i }

type named string

type stringer struct{ v int }

func (s stringer) String() string { return fmt.Sprintf("<%d>", s.v) }

type data struct {
	Title  string
	Count  int
	Items  []inner
	Ptrs   []*inner
	One    *inner
	Nil    *inner
	Empty  []string
	Names  []string
	Kind   named
	Stamp  stringer
	Any    any
	NilAny any
	Map    map[string]string
	Ints   map[string]int
	HTML   htmltemplate.HTML
	URL    string
	//lint:ignore U1000 unexported: a template that reads it must fail.
	hidden int
}

func sample() *data {
	a := &inner{Name: "Alice", N: 3, Tags: []string{"x", "y"}, Map: map[string]int{"k": 1}, Flag: true}
	b := &inner{Name: "Bob <b>", N: 0, Next: a, Any: "inside", Count: 7}
	return &data{
		Title: "Day 2 & \"night\" 'x' +1 <tag>\x00",
		Count: 3,
		Items: []inner{*a, *b},
		Ptrs:  []*inner{a, b, nil},
		One:   b,
		Names: []string{"Ann", "Ben", "Cy"},
		Kind:  "vote",
		Stamp: stringer{5},
		Any:   42,
		Map:   map[string]string{"a": "A", "b": "B"},
		Ints:  map[string]int{"one": 1},
		HTML:  "<i>kept</i>",
		URL:   "https://example.org/a b?q=1&r=é%zz",
	}
}

var testFuncs = map[string]any{
	"up":    strings.ToUpper,
	"join2": func(a, b string) string { return a + "+" + b },
	"plural": func(n int, one, many string) string {
		return fmt.Sprint(n, " ", map[bool]string{true: one, false: many}[n == 1])
	},
	"add":    func(a, b int) int { return a + b },
	"list":   func(names []string) string { return strings.Join(names, ", ") },
	"lang":   func() string { return "en" },
	"bad":    func() (string, error) { return "", errors.New("bad") },
	"boom":   func() string { panic("boom") },
	"double": func(p *inner) (string, error) { return p.Name + p.Name, nil },
	"safe":   func(s string) htmltemplate.HTML { return htmltemplate.HTML(s) },
	"anys":   func(xs ...any) string { return fmt.Sprint(len(xs), xs) },
	"names":  func() []string { return []string{"p", "q"} },
}

// cases are templates run on sample() by both executors. A case whose
// text/template run fails must fail compiled too.
var cases = []string{
	`plain text`,
	`{{.Title}}|{{.Count}}|{{.Kind}}|{{.Stamp}}|{{.Any}}|{{.NilAny}}|{{.One}}|{{.Nil}}`,
	`{{.One.Name}} {{.One.Next.Name}} {{.One.Next.N}} {{.One.Any}} {{.One.Count}}`,
	`{{.Nil.Name}}`,
	`{{.Missing}}`,
	`{{.hidden}}`,
	`{{.Map.a}}{{.Map.zz}}`,
	`{{.Ints.one}}`,
	`{{.One.Hello "Carol"}}|{{.One.Twice}}|{{(index .Items 0).Twice}}|{{.One.Self.Name}}`,
	`{{.One.Fails}}`,
	`{{.Nil.Hello "x"}}`,
	`{{.Title.Foo}}`,
	`{{.One.Name "arg"}}`,
	`{{if .Count}}yes{{else}}no{{end}}{{if .Empty}}yes{{else if .Names}}names{{end}}{{if .Nil}}x{{end}}{{if .NilAny}}x{{else}}nil{{end}}`,
	`{{with .One}}{{.Name}}{{with .Next}}/{{.Name}}{{end}}{{end}}{{with .Nil}}x{{else}}none{{end}}{{with .Empty}}e{{else with .Names}}{{len .}}{{end}}`,
	`{{range .Names}}[{{.}}]{{end}}{{range $i, $n := .Names}}{{$i}}={{$n}};{{end}}{{range $n := .Names}}<{{$n}}{{$.Count}}>{{end}}`,
	`{{range .Empty}}x{{else}}empty{{end}}{{range .Nil}}x{{else}}nil{{end}}`,
	`{{range .Ptrs}}{{if .}}{{.Name}}{{else}}-{{end}},{{end}}`,
	`{{range .Items}}{{.Name}}:{{range .Tags}}{{.}}{{end}};{{end}}`,
	`{{range .Map}}{{.}}{{end}}`,
	`{{range 3}}{{.}}{{end}}`,
	`{{$x := .Count}}{{$x}}{{$x = 5}}{{$x}}{{if $y := .One}}{{$y.Name}}{{end}}`,
	`{{$x := 1}}{{range .Names}}{{$x = 2}}{{end}}{{$x}}`,
	`{{eq .Count 3}} {{eq .Kind "vote"}} {{eq .Kind "x" "vote"}} {{eq .Title "a"}} {{ne .Count 2}} {{eq .One.Count 7}} {{eq .Count .One.Count}}`,
	`{{eq .Count "3"}}`,
	`{{eq .One .One}} {{eq .Nil .Nil}} {{eq .Nil nil}} {{eq .Items .Items}}`,
	`{{lt .Count 4}} {{le .Count 3}} {{gt .Count 3}} {{ge .Count 3}} {{lt "a" "b"}} {{lt .One.Count 8}}`,
	`{{lt .Count "x"}}`,
	`{{lt true false}}`,
	`{{and .Count .Title}}|{{and .Count .Empty "x"}}|{{or .Empty .Names}}|{{or 0 ""}}|{{and 1 .Nil.Name}}|{{or 1 .Nil.Name}}`,
	`{{not .Count}} {{not .Empty}} {{not .Nil}}`,
	`{{len .Names}} {{len .Title}} {{len .Map}} {{len .Count}}`,
	`{{len .Nil}}`,
	`{{index .Names 1}} {{index .Items 1 | printf "%v"}}`,
	`{{index .Names 1}} {{(index .Items 1).Name}} {{index .Title 0}}`,
	`{{index .Names 3}}`,
	`{{index .Map "a"}}`,
	`{{up .Title}} {{join2 "a" .Kind}} {{plural 1 "vote" "votes"}} {{plural .Count "vote" "votes"}} {{add 1 .Count}} {{list .Names}} {{lang}}`,
	`{{.Title | up}} {{"x" | join2 "y"}} {{.Count | add 2}} {{.Names | list}} {{.Names | len}}`,
	`{{up .Count}}`,
	`{{up .Kind}}`,
	`{{bad}}`,
	`{{boom}}`,
	`{{double .One}} {{.One | double}} {{double .Items}}`,
	`{{anys}} {{anys 1 "a" .Count .Nil .NilAny}} {{.Title | anys 1}}`,
	`{{list names}} {{(names)}} {{len (names)}} {{(index .Items 0).Name}}`,
	`{{template "sub" .One}}{{template "sub" .One.Next}}{{template "empty"}}`,
	`{{define "forever"}}{{template "forever" .}}{{end}}{{template "forever" .}}`,
	`{{define "loop"}}{{if .}}{{.Name}}>{{template "loop" .Next}}{{end}}{{end}}{{template "loop" .One}}`,
	`{{template "vars" .}}`,
	`{{print .Count}}`,
	`{{1.5}} {{1e3}} {{0x10}} {{'a'}}`,
	`{{true}} {{"str"}} {{-3}} {{.}}`,
	`{{range .Names}}{{break}}{{end}}`,
	`{{nil}}`,
	`{{.Count 1}}`,
	`{{$.Title}}{{with .One}}{{$.Count}}{{end}}`,
}

const partials = `{{define "sub"}}<{{.Name}}:{{$.N}}>{{end}}{{define "empty"}}[{{.}}]{{end}}{{define "vars"}}{{$a := .Count}}{{range .Names}}{{$a}}{{end}}{{end}}`

func lookupText(t *texttemplate.Template) Lookup {
	return func(name string) *parse.Tree {
		if x := t.Lookup(name); x != nil {
			return x.Tree
		}
		return nil
	}
}

func lookupHTML(t *htmltemplate.Template) Lookup {
	return func(name string) *parse.Tree {
		if x := t.Lookup(name); x != nil {
			return x.Tree
		}
		return nil
	}
}

// TestProgramsRunAsTextTemplate runs every case through text/template and
// through its compiled Program: the same output, or both fail.
func TestProgramsRunAsTextTemplate(t *testing.T) {
	for i, src := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tmpl, err := texttemplate.New("main").Funcs(testFuncs).Option("missingkey=error").Parse(src)
			if err != nil {
				t.Fatalf("parse %q: %v", src, err)
			}
			if _, err := tmpl.Parse(partials); err != nil {
				t.Fatal(err)
			}
			d := sample()
			var want bytes.Buffer
			stdErr := tmpl.Execute(&want, d)
			p, compileErr := Compile("main", lookupText(tmpl), testFuncs)
			if compileErr != nil {
				if !errors.Is(compileErr, errUnsupported) && stdErr == nil {
					t.Fatalf("%q: compile: %v", src, compileErr)
				}
				if stdErr == nil && !leftToTextTemplate[src] {
					t.Errorf("%q runs in text/template but does not compile: %v", src, compileErr)
				}
				return
			}
			var got bytes.Buffer
			runErr := p.Execute(&got, d)
			switch {
			case stdErr != nil && runErr == nil:
				t.Errorf("%q: text/template fails (%v), the program wrote %q", src, stdErr, got.String())
			case stdErr == nil && runErr != nil && !leftToTextTemplate[src]:
				t.Errorf("%q: the program fails (%v), text/template wrote %q", src, runErr, want.String())
			case stdErr == nil && runErr == nil && got.String() != want.String():
				t.Errorf("%q:\n got %q\nwant %q", src, got.String(), want.String())
			}
		})
	}
}

// leftToTextTemplate are the cases text/template runs and a Program does
// not: the caller runs text/template for them.
var leftToTextTemplate = map[string]bool{
	`{{range .Map}}{{.}}{{end}}`:                                      true,
	`{{range 3}}{{.}}{{end}}`:                                         true,
	`{{index .Map "a"}}`:                                              true,
	`{{print .Count}}`:                                                true,
	`{{1.5}} {{1e3}} {{0x10}} {{'a'}}`:                                true,
	`{{range .Names}}{{break}}{{end}}`:                                true,
	`{{index .Names 1}} {{index .Items 1 | printf "%v"}}`:             true,
	`{{len .Names}} {{len .Title}} {{len .Map}} {{len .Count}}`:       false,
	`{{index .Names 1}} {{(index .Items 1).Name}} {{index .Title 0}}`: false,
}

// htmlCases put values in each context html/template escapes for.
var htmlCases = []string{
	`<p title="{{.Title}}">{{.Title}}</p>`,
	`<a href="{{.URL}}">{{.URL}}</a><a href="/x?q={{.Title}}">q</a><a href="{{.Kind}}">k</a>`,
	`<a href="javascript:alert(1)">{{.Count}}</a><a href="{{.Map.a}}:x">y</a>`,
	`<textarea>{{.Title}}{{.HTML}}</textarea><title>{{.HTML}}</title>`,
	`<div>{{.HTML}}{{safe .Title}}{{.Stamp}}{{.Any}}{{.NilAny}}{{.Nil}}{{.One.Count}}</div>`,
	`{{range .Names}}<li class="n">{{.}}</li>{{end}}{{with .One}}<b>{{.Name}}</b>{{end}}`,
	`<p title="{{.HTML}}">x</p>`,
	`{{template "sub" .One}}<p>{{template "sub" .One.Next}}</p>`,
	`<a href="{{.URL}}" title="{{.Kind}}">{{up .Title}}</a>`,
}

// TestProgramsRunAsHTMLTemplate compiles html/template's escaped trees and
// runs them beside html/template.
func TestProgramsRunAsHTMLTemplate(t *testing.T) {
	for i, src := range htmlCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			tmpl := htmltemplate.Must(htmltemplate.New("main").Funcs(testFuncs).Option("missingkey=error").Parse(src))
			htmltemplate.Must(tmpl.Parse(`{{define "sub"}}<i title="{{.Name}}">{{.Name}}</i>{{end}}`))
			var want bytes.Buffer
			if err := tmpl.Execute(&want, sample()); err != nil {
				t.Fatalf("%q: %v", src, err)
			}
			p, err := Compile("main", lookupHTML(tmpl), testFuncs)
			if err != nil {
				t.Fatalf("%q: compile: %v", src, err)
			}
			var got bytes.Buffer
			if err := p.Execute(&got, sample()); err != nil {
				if strings.Contains(src, `title="{{.HTML}}"`) && errors.Is(err, errUnsupported) {
					return // HTML in an attribute is left to html/template.
				}
				t.Fatalf("%q: %v", src, err)
			}
			if got.String() != want.String() {
				t.Errorf("%q:\n got %q\nwant %q", src, got.String(), want.String())
			}
		})
	}
}

// FuzzEscapers runs a value through each escaping context, in html/template
// and compiled.
func FuzzEscapers(f *testing.F) {
	for _, s := range []string{"", "plain", `<a href="x">&amp; 'q' +</a>`, "\x00\xff\xfe", "é ü ☃ \ufdd0", "javascript:alert(1)", "HTTPS://x/y?z=%41%zz#f", "mailto:a@b", "/rel/path?a=b&c=d", "a:b/c"} {
		f.Add(s)
	}
	tmpl := htmltemplate.Must(htmltemplate.New("main").Parse(
		`<p title="{{.}}">{{.}}</p><textarea>{{.}}</textarea><a href="{{.}}">x</a><a href="/q?{{.}}">y</a>`))
	var prime bytes.Buffer
	if err := tmpl.Execute(&prime, ""); err != nil {
		f.Fatal(err)
	}
	p, err := Compile("main", lookupHTML(tmpl), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, v := range []any{s, htmltemplate.HTML(s), htmltemplate.URL(s), named(s)} {
			var want, got bytes.Buffer
			wantErr := tmpl.Execute(&want, v)
			gotErr := p.Execute(&got, v)
			if wantErr != nil {
				if gotErr == nil {
					t.Fatalf("%T %q: html/template fails (%v), the program wrote %q", v, s, wantErr, got.String())
				}
				continue
			}
			if gotErr != nil {
				if _, isHTML := v.(htmltemplate.HTML); isHTML && errors.Is(gotErr, errUnsupported) {
					continue // HTML in an attribute is left to html/template.
				}
				t.Fatalf("%T %q: %v", v, s, gotErr)
			}
			if got.String() != want.String() {
				t.Fatalf("%T %q:\n got %q\nwant %q", v, s, got.String(), want.String())
			}
		}
	})
}

// TestProgramsRunConcurrently: one Program run by many goroutines at once,
// on values of two types that share a field's name, so that its field
// lookups change type under the others' feet.
func TestProgramsRunConcurrently(t *testing.T) {
	tmpl := texttemplate.Must(texttemplate.New("main").Funcs(testFuncs).Parse(
		`{{range .}}{{.Name}}{{with .Next}}>{{.Name}}{{end}};{{end}}`))
	p, err := Compile("main", lookupText(tmpl), testFuncs)
	if err != nil {
		t.Fatal(err)
	}
	type other struct {
		Name string
		Next *other
	}
	inputs := []any{
		[]*inner{{Name: "a", Next: &inner{Name: "b"}}, {Name: "c"}},
		[]any{&other{Name: "x", Next: &other{Name: "y"}}, &inner{Name: "z"}},
	}
	var wants []string
	for _, in := range inputs {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, in); err != nil {
			t.Fatal(err)
		}
		wants = append(wants, b.String())
	}
	done := make(chan error)
	for g := range 8 {
		go func() {
			for i := range 200 {
				k := (g + i) % len(inputs)
				var b bytes.Buffer
				if err := p.Execute(&b, inputs[k]); err != nil {
					done <- err
					return
				}
				if b.String() != wants[k] {
					done <- fmt.Errorf("got %q, want %q", b.String(), wants[k])
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
