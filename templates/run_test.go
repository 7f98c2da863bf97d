package templates

import (
	"bytes"
	"io"
	"strings"
	"testing"
	texttemplate "text/template"
	tparse "text/template/parse"

	"github.com/mafiamail/mafiamail/internal/tmplexec"
	"github.com/mafiamail/mafiamail/lang"
)

// TestEveryTextTemplateCompiles: every text template of every language
// runs compiled, none through text/template's slower walk.
func TestEveryTextTemplateCompiles(t *testing.T) {
	for _, l := range lang.All() {
		s := setFor(l.Tag)
		for _, tmpl := range s.text.Templates() {
			if tmpl.Name() == "" || tmpl.Tree == nil {
				continue
			}
			if _, err := tmplexec.Compile(tmpl.Name(), s.textRun.lookup, s.textRun.funcs); err != nil {
				t.Errorf("%s: %v", l.Tag, err)
			}
		}
	}
}

// TestEveryHTMLTemplateCompilesOnceEscaped: once html/template has
// escaped it, every HTML template runs compiled, but for those that style
// a colour in CSS (the story of a game, at its end), whose CSS escapers
// are left to html/template.
func TestEveryHTMLTemplateCompilesOnceEscaped(t *testing.T) {
	leftToHTMLTemplate := map[string]bool{"end": true, "story": true}
	for _, l := range lang.All() {
		s := setFor(l.Tag)
		for _, tmpl := range s.html.Templates() {
			name := tmpl.Name()
			if name == "" {
				continue
			}
			// html/template escapes the whole tree before it runs it;
			// with no data the run itself fails, which is of no matter.
			_ = s.html.ExecuteTemplate(io.Discard, name, nil)
			_, err := tmplexec.Compile(name, s.htmlRun.lookup, s.htmlRun.funcs)
			if leftToHTMLTemplate[name] {
				if err == nil {
					t.Errorf("%s: %s compiles: it need no longer be left to html/template", l.Tag, name)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", l.Tag, err)
			}
		}
	}
}

// TestCompiledHTMLEscapesAsBefore: the HTML of a message runs through
// html/template the first time, compiled from its escaped tree after
// that, and reads the same both times, players' markup shown as text.
func TestCompiledHTMLEscapesAsBefore(t *testing.T) {
	for _, l := range lang.All() {
		evil := `<script>alert("x")</script> & <a href="javascript:x">y</a> 'q' +1`
		m := message(t, &Section{Kind: "post", Name: `Bob"><img src=x>`, Text: evil})
		m.Lang = l.Tag
		first, err := Render("post", m)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := setFor(l.Tag).htmlRun.programs.Load("layout")
		if !ok || p.(*tmplexec.Program) == nil {
			t.Fatalf("%s: the HTML layout was not compiled after its first run", l.Tag)
		}
		second, err := Render("post", m)
		if err != nil {
			t.Fatal(err)
		}
		if second.HTML != first.HTML || second.Text != first.Text {
			t.Errorf("%s: the compiled run differs:\n%s\n---\n%s", l.Tag, first.HTML, second.HTML)
		}
		for _, bad := range []string{"<script", "<img", `<a href="javascript`} {
			if strings.Contains(second.HTML, bad) {
				t.Errorf("%s: the HTML part holds %q", l.Tag, bad)
			}
		}
	}
}

// TestRunnerFallsBackToTheStandardRun: what a compiled template leaves to
// text/template (a range over a map) still runs, and an error is
// text/template's own.
func TestRunnerFallsBackToTheStandardRun(t *testing.T) {
	std := texttemplate.Must(texttemplate.New("").Option("missingkey=error").Parse(
		`{{define "map"}}{{range .}}{{.}};{{end}}{{end}}{{define "bad"}}a{{.Nope}}{{end}}`))
	r := newRunner(std, func(name string) *tparse.Tree {
		if x := std.Lookup(name); x != nil {
			return x.Tree
		}
		return nil
	}, nil, false)
	for range 2 {
		var b bytes.Buffer
		b.WriteString("kept:")
		if err := r.ExecuteTemplate(&b, "map", map[string]int{"b": 2, "a": 1}); err != nil {
			t.Fatal(err)
		}
		if b.String() != "kept:1;2;" {
			t.Errorf("map: %q", b.String())
		}
	}
	var want, got bytes.Buffer
	wantErr := std.ExecuteTemplate(&want, "bad", map[string]int{})
	gotErr := r.ExecuteTemplate(&got, "bad", map[string]int{})
	if wantErr == nil || gotErr == nil || gotErr.Error() != wantErr.Error() || got.String() != want.String() {
		t.Errorf("bad: got %q, %v; want %q, %v", got.String(), gotErr, want.String(), wantErr)
	}
}
