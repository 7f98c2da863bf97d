package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// TestRulesLinkThePlayersRules: the referee's rulebook points to the
// rules as players read them, which HELP RULES mails, so that a change of
// a rule is made in both.
func TestRulesLinkThePlayersRules(t *testing.T) {
	b, err := os.ReadFile("rules.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "](../lang/en/rules.md)") {
		t.Error("rules.md does not link to lang/en/rules.md, the players' rules")
	}
	if r := lang.Get(lang.Default).Rules(); len(r) < 2000 {
		t.Errorf("English's players' rules are %d bytes", len(r))
	}
}

// TestPlayersRulesInPlainWords: the players' rules cite no rule by its ID,
// names every command a player has, and gives the lengths the built-in
// setups use.
func TestPlayersRulesInPlainWords(t *testing.T) {
	r := lang.Get(lang.Default).Rules()
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

// TestRefereeGuideListsEverySetupKey: the table of SETUP keys in
// referee.md has a row for every key SETUP takes and for no other, and
// each documented default is the built-in setups' own: SETUP classic with
// that key at its default changes nothing in classic, nor SETUP mafia150
// in mafia150 (whose value follows "mafia150:" where it differs).
func TestRefereeGuideListsEverySetupKey(t *testing.T) {
	b, err := os.ReadFile("referee.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)`[^|]*\\| ([^|]*) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		documented[m[1]] = m[2]
	}
	keys := engine.SetupKeys()
	if len(keys) < 20 {
		t.Fatalf("SETUP takes %d keys, fewer than the guide's table was written for", len(keys))
	}
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k] = true
		if _, ok := documented[k]; !ok {
			t.Errorf("referee.md has no row for the SETUP key %s", k)
		}
	}
	// effective reads the settings whose zero stands for a default as
	// that default, so that a setup that names it compares equal.
	effective := func(s engine.Setup) engine.Setup {
		s.Name = ""
		s.HeldMailGrace = s.SendingGrace()
		if zone, on := s.WeekendWindow(); on {
			s.WeekendZone = zone
		}
		s.PostGameTalk = s.TalkAfterEnd()
		if s.MailGrace == 0 {
			s.MailGrace = host.DefaultMailGrace
		}
		return s
	}
	value := regexp.MustCompile("^`?([^` ]+)`?")
	variant := regexp.MustCompile("\\(`mafia150`: `?([^`)]+)`?\\)")
	for key, cell := range documented {
		if !isKey[key] {
			t.Errorf("referee.md documents %s, which SETUP does not take", key)
			continue
		}
		if key == "language" {
			continue // the host's language: the configuration's, not the setup's
		}
		for _, setup := range []engine.Setup{engine.Classic(), engine.Mafia150()} {
			v := value.FindStringSubmatch(cell)[1]
			if m := variant.FindStringSubmatch(cell); m != nil && setup.Name == "mafia150" {
				v = m[1]
			}
			got, err := engine.ParseSetup(setup, setup.Name+" "+key+"="+v)
			if err != nil {
				t.Errorf("referee.md: SETUP %s=%s in %s: %v", key, v, setup.Name, err)
				continue
			}
			if effective(got) != effective(setup) {
				t.Errorf("referee.md gives %s=%s as the default, which changes %s", key, v, setup.Name)
			}
		}
	}
}

// TestHostingGuideListsEveryConfigKey: the configuration reference of
// hosting.md names every key a configuration file may hold, with its
// section, and no key the configuration does not take.
func TestHostingGuideListsEveryConfigKey(t *testing.T) {
	b, err := os.ReadFile("hosting.md")
	if err != nil {
		t.Fatal(err)
	}
	_, reference, ok := strings.Cut(string(b), "## Configuration reference")
	if !ok {
		t.Fatal("hosting.md has no configuration reference")
	}
	// A row's first cell names its keys: `[imap]`/`[smtp] auth` is auth in
	// both sections, `[smtp] url`, `username` three keys of one section.
	cell := regexp.MustCompile(`(?m)^\| ([^|]+) \|`)
	code := regexp.MustCompile("`([^`]+)`")
	documented := map[string]bool{}
	for _, c := range cell.FindAllStringSubmatch(reference, -1) {
		var sections, keys []string
		for _, m := range code.FindAllStringSubmatch(c[1], -1) {
			s := m[1]
			if strings.HasPrefix(s, "[") {
				section, key, _ := strings.Cut(strings.TrimPrefix(s, "["), "]")
				sections = append(sections, section)
				s = strings.TrimSpace(key)
			}
			if s != "" {
				keys = append(keys, s)
			}
		}
		if len(sections) == 0 {
			sections = []string{""}
		}
		for _, section := range sections {
			for _, key := range keys {
				documented[strings.TrimPrefix(section+"."+key, ".")] = true
			}
		}
	}
	want := tomlKeys(reflect.TypeFor[config.Config](), "")
	if len(want) < 30 {
		t.Fatalf("found %d keys in config.Config, fewer than the reference was written for", len(want))
	}
	for _, k := range want {
		if !documented[k] {
			t.Errorf("hosting.md's configuration reference does not name %s", k)
		}
		delete(documented, k)
	}
	for k := range documented {
		t.Errorf("hosting.md's configuration reference names %s, which the configuration does not take", k)
	}
}

// tomlKeys lists the keys of a configuration struct as section.key,
// with the fields of an embedded struct in their section.
func tomlKeys(t reflect.Type, section string) []string {
	var keys []string
	for f := range t.Fields() {
		tag := f.Tag.Get("toml")
		switch {
		case f.Anonymous && tag == "":
			keys = append(keys, tomlKeys(f.Type, section)...)
		case tag == "" || tag == "-":
		case f.Type.Kind() == reflect.Struct && section == "":
			keys = append(keys, tomlKeys(f.Type, tag)...)
		default:
			keys = append(keys, strings.TrimPrefix(section+"."+tag, "."))
		}
	}
	return keys
}

// TestRelativeLinksResolve: every relative link of README.md,
// CONTRIBUTING.md and docs/*.md names a file of the repository, and a
// link to a heading (#anchor) names a heading of that file, as GitHub
// makes its anchors.
func TestRelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"../README.md", "../CONTRIBUTING.md"}, pages...)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(prose(string(b), false), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
			}
			checked++
			text, err := os.ReadFile(resolved)
			if err != nil {
				t.Errorf("%s links to %s, which does not exist", file, target)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(string(text)), anchor) {
				t.Errorf("%s links to %s, whose file has no heading %q", file, target, anchor)
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d relative links, fewer than the documents hold", checked)
	}
}

// prose is markdown text without its code, where a link is not a link:
// fenced blocks, and code spans unless keepSpans (a heading's anchor
// keeps the text of its code spans).
func prose(text string, keepSpans bool) string {
	var b strings.Builder
	span := regexp.MustCompile("`[^`]*`")
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if keepSpans {
			line = strings.ReplaceAll(line, "`", "")
		} else {
			line = span.ReplaceAllString(line, "")
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// anchors are the names GitHub gives the headings of markdown text: the
// heading in lower case, without punctuation, its spaces as hyphens.
func anchors(text string) []string {
	var names []string
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, line := range strings.Split(prose(text, true), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		names = append(names, strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-"))
	}
	return names
}
