package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRefusalsInPlainWords: the sentences the engine writes for players (a
// refusal, a tally note, a held post's or a suspension's reason) reach
// their mail as written, so they say a rule in words, never by its ID
// (docs/rules.md numbers the rules for the referee and the code).
func TestRefusalsInPlainWords(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	code := regexp.MustCompile(`\b[SDNWCFT][0-9]{1,2}\b`)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "refuse(") && !strings.Contains(l, "notes = append") &&
				!strings.Contains(l, "Reason:") && !strings.Contains(l, "reason = ") {
				continue
			}
			for _, s := range literal.FindAllString(l, -1) {
				checked++
				if m := code.FindString(s); m != "" {
					t.Errorf("%s:%d: %s cites rule %s", f, i+1, s, m)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d sentences checked", checked)
	}
}
