package engine

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEngineIsPure keeps I/O, clocks and global randomness out of the
// engine: its non-test files may not import them.
func TestEngineIsPure(t *testing.T) {
	forbidden := map[string]bool{"net": true, "os": true, "database/sql": true, "math/rand": true,
		"math/rand/v2": true, "net/http": true, "io/ioutil": true, "log": true, "log/slog": true, "syscall": true}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] || strings.HasPrefix(path, "net/") || strings.HasPrefix(path, "os/") {
				t.Errorf("%s imports %s: the engine must stay pure", f, path)
			}
		}
		checked++
	}
	if checked < 5 {
		t.Fatalf("only %d files checked", checked)
	}
}

// TestNoClockInEngine: the wall clock and crypto/rand come in through Env,
// never from inside the engine.
func TestNoClockInEngine(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"time.Now(", "time.Since(", "time.Until(", "time.Sleep(", "time.After(", `"crypto/rand"`} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s uses %s", f, bad)
			}
		}
	}
}
