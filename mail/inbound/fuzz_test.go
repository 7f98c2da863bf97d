package inbound

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzInspect(f *testing.F) {
	files, err := filepath.Glob("testdata/*.msg")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r := Inspect(raw, testConfig, testDirectory)
		checkInvariants(t, r)
		if _, err := r.JSON(); err != nil {
			t.Fatal(err)
		}
	})
}
