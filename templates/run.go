package templates

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	tparse "text/template/parse"

	"github.com/mafiamail/mafiamail/internal/tmplexec"
)

// runner runs one template set's templates compiled (see
// internal/tmplexec), each compiled the first time it runs, and through
// the set itself whenever the compiled one cannot: the output and the
// errors are the set's own either way.
type runner struct {
	std    executor
	lookup tmplexec.Lookup
	funcs  map[string]any
	// escaped is true for an html/template set: a template is compiled
	// only once the set has run it, which is when html/template adds its
	// escapers to the tree, and only if that run succeeded.
	escaped  bool
	programs sync.Map // template name → *tmplexec.Program, nil if it does not compile
}

func newRunner(std executor, lookup func(string) *tparse.Tree, funcs map[string]any, escaped bool) *runner {
	return &runner{std: std, lookup: lookup, funcs: funcs, escaped: escaped}
}

// ExecuteTemplate runs the template name on data, writing to w.
func (r *runner) ExecuteTemplate(w io.Writer, name string, data any) error {
	b, isBuffer := w.(*bytes.Buffer)
	p, known := r.programs.Load(name)
	if !known && !r.escaped {
		p, known = r.compile(name), true
	}
	if !known || !isBuffer || p.(*tmplexec.Program) == nil {
		err := r.std.ExecuteTemplate(w, name, data)
		if !known && err == nil {
			r.compile(name)
		}
		return err
	}
	start := b.Len()
	err := p.(*tmplexec.Program).Execute(b, data)
	if err == nil {
		return nil
	}
	// Start again on the set itself, for its own output or error.
	b.Truncate(start)
	if stdErr := r.std.ExecuteTemplate(b, name, data); stdErr != nil {
		return stdErr
	}
	slog.Warn("templates: the compiled template failed where the standard one ran", "template", name, "err", err)
	return nil
}

// compile compiles the template name, once.
func (r *runner) compile(name string) any {
	p, err := tmplexec.Compile(name, r.lookup, r.funcs)
	if err != nil {
		// Expected of a few (see TestEveryHTMLTemplateCompilesOnceEscaped):
		// they run as they always did.
		slog.Debug("templates: template runs uncompiled", "template", name, "err", err)
		p = nil
	}
	got, _ := r.programs.LoadOrStore(name, p)
	return got
}
