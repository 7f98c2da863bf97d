package lang

import (
	"io/fs"
	"strings"
	"testing"
)

// TestEveryLanguageHasChatter: every language a game can be played in,
// and every language folder waiting to be registered, has at least a dozen
// lines of a bot's chatter, each naming the player voted for exactly once:
// a bot's thread should not repeat itself at once, and a line with no %s
// or two would print a Go formatting error into the thread.
func TestEveryLanguageHasChatter(t *testing.T) {
	seen := map[string]bool{}
	check := func(tag string, lines []string) {
		t.Helper()
		seen[tag] = true
		if len(lines) < 12 {
			t.Errorf("%s: %d lines of chatter, want at least 12", tag, len(lines))
		}
		for _, l := range lines {
			if strings.Count(l, "%") != 1 || strings.Count(l, "%s") != 1 {
				t.Errorf("%s: %q must hold exactly one %%s and no other %%", tag, l)
			}
		}
	}
	for _, l := range All() {
		b, err := fs.ReadFile(l.Files(), "chatter.txt")
		if err != nil {
			t.Errorf("%s: %v", l.Tag, err)
			continue
		}
		if got, want := len(l.Chatter()), len(nonBlank(b)); got != want {
			t.Errorf("%s: Chatter has %d lines, chatter.txt %d", l.Tag, got, want)
		}
		check(l.Tag, l.Chatter())
	}
	// Folders of languages not registered yet are checked as files.
	dirs, err := fs.ReadDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || seen[d.Name()] {
			continue
		}
		b, err := fs.ReadFile(files, d.Name()+"/chatter.txt")
		if err != nil {
			t.Errorf("%s: %v", d.Name(), err)
			continue
		}
		check(d.Name(), nonBlank(b))
	}
}

func nonBlank(b []byte) []string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
