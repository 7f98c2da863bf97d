package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/docs"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/templates"
)

// TestPlayersRulesAreRulesMd: the rules HELP RULES mails are the players'
// part of rules.md as it is on disk, not a copy that could drift from it.
func TestPlayersRulesAreRulesMd(t *testing.T) {
	b, err := os.ReadFile("rules.md")
	if err != nil {
		t.Fatal(err)
	}
	got := docs.PlayersRules()
	if len(got) < 2000 || !strings.Contains(string(b), strings.TrimSpace(got)) {
		t.Fatalf("the embedded players' rules (%d bytes) are not a part of rules.md", len(got))
	}
}

// TestPlayersRulesInPlainWords: the players' part cites no rule by its ID,
// names every command a player has, and gives the lengths the built-in
// setups use.
func TestPlayersRulesInPlainWords(t *testing.T) {
	r := docs.PlayersRules()
	if m := regexp.MustCompile(`\b[SDNWCFT][0-9]{1,2}\b`).FindString(r); m != "" {
		t.Errorf("the players' rules cite rule %s", m)
	}
	var cmds []templates.Command
	cmds = append(cmds, templates.ThreadCommands...)
	cmds = append(cmds, templates.PrivateCommands("")...)
	for _, role := range []string{"Mafia", "Inspector", "Doctor", "Vigilante"} {
		cmds = append(cmds, templates.RoleCommands(role)...)
	}
	for _, c := range cmds {
		verb := strings.TrimSuffix(c.Syntax, " Name")
		if verb == "TALLY" || verb == "EXTEND" && strings.Contains(r, "`EXTEND`") {
			continue
		}
		if !strings.Contains(r, "`"+verb) {
			t.Errorf("the players' rules never name %s", c.Syntax)
		}
	}
	for _, setup := range []engine.Setup{engine.Classic(), engine.Mafia150()} {
		for what, d := range map[string]int{
			"a day's first round": int(setup.DayLength.Hours()),
			"a runoff":            int(setup.RunoffLength.Hours()),
			"a night at most":     int(setup.NightLength.Hours()),
			"a night's step":      int(setup.NightStep.Hours()),
		} {
			if !regexp.MustCompile(fmt.Sprintf(`\b%d\b`, d)).MatchString(r) {
				t.Errorf("%s: %s lasts %d hours, which the players' rules do not say", setup.Name, what, d)
			}
		}
	}
}
