package lang

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
)

// TestEveryLanguageHasChatter: every language folder has at least a dozen
// lines of a bot's chatter of its own (not English's, which Chatter falls
// back to), each naming the player voted for exactly once: a bot's thread
// should not repeat itself at once, and a line with no %s or two would
// print a Go formatting error into the thread.
func TestEveryLanguageHasChatter(t *testing.T) {
	dirs, err := fs.ReadDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		b, err := fs.ReadFile(files, d.Name()+"/chatter.json")
		if err != nil {
			t.Errorf("%s: %v", d.Name(), err)
			continue
		}
		var lines []string
		if err := json.Unmarshal(b, &lines); err != nil {
			t.Errorf("%s: chatter.json: %v", d.Name(), err)
			continue
		}
		if len(lines) < 12 {
			t.Errorf("%s: %d lines of chatter, want at least 12", d.Name(), len(lines))
		}
		for _, l := range lines {
			if strings.Count(l, "%") != 1 || strings.Count(l, "%s") != 1 {
				t.Errorf("%s: %q must hold exactly one %%s and no other %%", d.Name(), l)
			}
		}
		if Known(d.Name()) && strings.Join(Get(d.Name()).Chatter(), "\n") != strings.Join(lines, "\n") {
			t.Errorf("%s: Chatter does not read chatter.json", d.Name())
		}
	}
}
