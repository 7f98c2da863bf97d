// Package binary builds one of the repository's commands once for a test
// binary, for the tests that run it as a user would. A package's TestMain
// removes it after its tests:
//
//	var mafiamail = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail")
//
//	func TestMain(m *testing.M) { binary.RunTests(m, mafiamail) }
//
// and a test calls mafiamail.Path(t), which builds it on the first call.
package binary

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

// Binary is a command built at most once.
type Binary struct {
	pkg  string
	once sync.Once
	dir  string
	path string
	err  error
}

// New is the command of the package at import path pkg, not built yet.
func New(pkg string) *Binary { return &Binary{pkg: pkg} }

// Path builds the command on the first call and returns its file; a
// failed build fails t, then and on every later call. It is built without
// the race detector on purpose: a whole game is thousands of messages, and
// the packages the command is made of run their own tests under -race.
func (b *Binary) Path(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "mafiamail-test-bin-")
		if b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, path.Base(b.pkg))
		// With the environment of the tests' own build, so that the build
		// cache they filled serves it.
		cmd := exec.Command("go", "build", "-o", b.path, b.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Remove deletes the built command, if any.
func (b *Binary) Remove() {
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// RunTests is a TestMain that runs m's tests and then removes the built
// commands.
func RunTests(m *testing.M, commands ...*Binary) {
	code := m.Run()
	for _, b := range commands {
		b.Remove()
	}
	os.Exit(code)
}
