package compose_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// ruleCode matches a rule's ID as docs/rules.md numbers them ("D5",
// "(C1, C2)").
var ruleCode = regexp.MustCompile(`\b[SDNWCFT][0-9]{1,2}\b`)

// TestGoldenPlayerMailHasNoRuleCodes reads every golden message, text and
// HTML, sent to anyone but the referee (the scenarios' referee is
// ref@example.org): players do not know the rules' IDs, so their mail says
// a rule in words. Only the referee's copies may cite the IDs.
func TestGoldenPlayerMailHasNoRuleCodes(t *testing.T) {
	t.Parallel()
	texts, err := filepath.Glob(filepath.Join("testdata", "*", "*.txt.golden"))
	if err != nil || len(texts) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	players := 0
	for _, f := range texts {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		head, body, _ := strings.Cut(string(b), "\n\n")
		if strings.Contains(head, "\nTo: \"Referee\" <ref@example.org>") {
			continue
		}
		players++
		html, err := os.ReadFile(strings.TrimSuffix(f, ".txt.golden") + ".html.golden")
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]string{"text": body, "html": string(html)} {
			for i, l := range strings.Split(s, "\n") {
				if m := ruleCode.FindString(l); m != "" {
					t.Errorf("%s (%s) line %d cites rule %s: %q", f, what, i+1, m, l)
				}
			}
		}
	}
	if players < 50 {
		t.Errorf("only %d golden messages to players", players)
	}
}
