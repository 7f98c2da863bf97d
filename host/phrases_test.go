package host

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// phrasesList is the list of the English formats that the host and the
// inbound checks build their sentences from, for translators.
const phrasesList = "../lang/en/phrases-host.list"

// TestPhrasesListed: the list names every format of phrase.Errorf in
// package host and package inbound, and no other, sorted, one a line.
func TestPhrasesListed(t *testing.T) {
	var got []string
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range []string{".", "../mail/inbound"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(af, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := c.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Errorf" {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "phrase" || len(c.Args) == 0 {
					return true
				}
				s, ok := constantString(c.Args[0])
				if !ok {
					t.Errorf("%s: the format of phrase.Errorf is not a constant string", fset.Position(c.Pos()))
					return true
				}
				if !seen[s] {
					seen[s] = true
					got = append(got, s)
				}
				return true
			})
		}
	}
	slices.Sort(got)
	b, err := os.ReadFile(phrasesList)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for _, s := range got {
		if !slices.Contains(want, s) {
			t.Errorf("%s lacks %q", phrasesList, s)
		}
	}
	for _, s := range want {
		if !seen[s] {
			t.Errorf("%s lists %q, which no code uses", phrasesList, s)
		}
	}
	if !slices.IsSorted(want) {
		t.Errorf("%s is not sorted", phrasesList)
	}
}

// constantString is a string literal, or a sum of them.
func constantString(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		a, ok1 := constantString(e.X)
		b, ok2 := constantString(e.Y)
		return a + b, ok1 && ok2 && e.Op == token.ADD
	case *ast.ParenExpr:
		return constantString(e.X)
	}
	return "", false
}
