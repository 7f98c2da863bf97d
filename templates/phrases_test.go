package templates

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/lang"
)

// TestEveryLanguageWordsEveryPhrase: every English phrase the code builds
// a sentence from — the engine's refusals, the grammar's errors, the
// host's answers, compose's lines, the command lists — has its wording in
// every language, with the same placeholders (%s, %d, %q, in any order a
// translation needs).
func TestEveryLanguageWordsEveryPhrase(t *testing.T) {
	keys := EnglishPhrases(t)
	if len(keys) < 150 {
		t.Fatalf("found only %d phrases in the code; the search is broken", len(keys))
	}
	for _, l := range lang.All()[1:] {
		for _, k := range keys {
			w := l.Phrase(k)
			if !l.Has(k) && !sameInEveryLanguage(k) {
				// Every one, so that a new language's list of what is left
				// is this test's output.
				t.Errorf("%s lacks the phrase %q", l.Tag, k)
				continue
			}
			if got, want := verbs(w), verbs(k); got != want {
				t.Errorf("%s words %q as %q: placeholders %s, English has %s", l.Tag, k, w, got, want)
			}
		}
	}
}

// sameInEveryLanguage: phrases that are no words, such as "%s: %s".
func sameInEveryLanguage(k string) bool {
	return strings.Trim(printfVerb.ReplaceAllString(k, ""), " :;,.()%-/") == ""
}

var printfVerb = regexp.MustCompile(`%(\[(\d+)\])?[-+# 0]*\d*(\.\d+)?([a-zA-Z%])`)

// verbs lists a format's verbs, sorted, ignoring explicit argument
// indexes: a translation may reorder them, not change them.
func verbs(f string) string {
	var out []string
	for _, m := range printfVerb.FindAllStringSubmatch(f, -1) {
		if m[4] == "%" {
			continue
		}
		out = append(out, m[4])
	}
	sort.Strings(out)
	return strings.Join(out, "")
}

// EnglishPhrases finds the phrases in the module's code: the literal
// formats given to phrase.Errorf, to the engine's refuse, to a language's
// Sprintf, Phrase, Count and Key, and the command lists' syntax and
// descriptions.
func EnglishPhrases(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	root := filepath.Join("..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testkit") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			var recv string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
				if id, ok := fn.X.(*ast.Ident); ok {
					recv = id.Name
				}
			}
			var args []ast.Expr
			switch {
			case name == "Errorf" && recv == "phrase":
				args = call.Args[:1]
			case name == "refuse" && len(call.Args) > 1:
				args = call.Args[1:2]
			case (name == "Sprintf" || name == "Phrase" || name == "Key") && recv != "fmt" && len(call.Args) > 0 && isSelector(call.Fun):
				args = call.Args[:1]
			case name == "Key" && recv == "lang":
				args = call.Args[:1]
			case name == "Count" && len(call.Args) == 3:
				args = call.Args[1:3]
			}
			for _, a := range args {
				if s, ok := literal(a); ok {
					// phrase.Errorf keeps %w as %v (lang/phrase).
					seen[strings.ReplaceAll(s, "%w", "%v")] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	lists := [][]Command{ThreadCommands, privateCommands, DeadCommands, MafiaCommands, ObserverCommands, SignupCommands,
		RefereeCommands, {RenameCommand}}
	for _, r := range []string{"Mafia", "Inspector", "Doctor", "Vigilante"} {
		lists = append(lists, RoleCommands(r))
	}
	for _, l := range lists {
		for _, c := range l {
			seen[c.What] = true
			if strings.ToUpper(c.Syntax) != c.Syntax {
				seen[c.Syntax] = true // "VOTE Name": the placeholder is a word
			}
		}
	}
	for _, r := range []string{"Townsperson", "Mafia", "Inspector", "Doctor", "Vigilante", "Town"} {
		seen[r] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		if strings.TrimSpace(k) != "" && !strings.HasPrefix(k, "@") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// literal is the value of a string literal, or of literals joined by +.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok1 && ok2
	case *ast.ParenExpr:
		return literal(e.X)
	}
	return "", false
}
func isSelector(e ast.Expr) bool {
	_, ok := e.(*ast.SelectorExpr)
	return ok
}
