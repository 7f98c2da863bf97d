package command

import (
	"slices"
	"strings"
	"testing"
)

// asked are the lines of the discussion corpora that draw a question:
// each says its author's vote in a sentence, which is what a question is
// for. They are discussion all the same, and relayed.
var asked = map[string]string{
	"Ich stimme für Bob, weil er gestern so still war.": "STIMME FÜR Bob",
	"Je vote pour Bob, il ment depuis hier.":            "VOTER POUR Bob",
}

// TestNearMissesAreAskedAbout: every near miss of the corpora, misspelt
// commands and commands inside sentences in each language, is neither
// applied nor taken for another command; it names the command it looks
// like and the exact line to send, which is a command where its author
// writes; and it is relayed exactly when it is a sentence.
func TestNearMissesAreAskedAbout(t *testing.T) {
	for _, tag := range []string{"en", "de", "fr", "es"} {
		t.Run(tag, func(t *testing.T) {
			registered(t, tag)
			for _, l := range corpus(t, "nearmiss-"+tag+".txt") {
				f := strings.Split(l, "|")
				if len(f) != 4 {
					t.Fatalf("nearmiss-%s.txt: %q is not SET | withheld/relayed | send | line", tag, l)
				}
				set, kind, send, line := Set(strings.TrimSpace(f[0])), strings.TrimSpace(f[1]), strings.TrimSpace(f[2]), strings.TrimSpace(f[3])
				res := Parse(line, set)
				if len(res.Commands) != 0 || len(res.Misplaced) != 0 || len(res.Errors) != 1 {
					t.Errorf("%s %q: commands %+v misplaced %+v errors %+v, want one near miss", set, line, res.Commands, res.Misplaced, res.Errors)
					continue
				}
				e := res.Errors[0]
				if e.Near == nil || e.Send != send {
					t.Errorf("%s %q: near %+v, send %q, want %q", set, line, e.Near, e.Send, send)
					continue
				}
				verb := e.Near.Verb
				if !strings.HasPrefix(strings.ToUpper(send), strings.ToUpper(verb)) || !strings.Contains(e.Message, verb) {
					t.Errorf("%s %q: says it looks like %q (%q), send %q", set, line, verb, e.Message, send)
				}
				relayed := kind == "relayed"
				if e.Near.Sentence != relayed || e.Relayed() != relayed {
					t.Errorf("%s %q: sentence %v, want %s", set, line, e.Near.Sentence, kind)
				}
				if (res.Discussion == line) != relayed || (!relayed && res.Discussion != "") {
					t.Errorf("%s %q: relayed as %q, want %s", set, line, res.Discussion, kind)
				}
				if want := 1; relayed {
					want = 0
					if res.Lines() != want {
						t.Errorf("%s %q: counts as %d command lines, want %d", set, line, res.Lines(), want)
					}
				}
				// The line to send is a command of the author's own
				// channels, read without an error where Homes says.
				if len(e.Near.Homes) == 0 {
					t.Errorf("%s %q: no home for %q", set, line, send)
				}
				for _, h := range e.Near.Homes {
					cmd, ok, err := ParseLine(send, h)
					if !ok || err != nil || cmd.Verb != e.Near.Command || !authorSets(set)[h] {
						t.Errorf("%s %q: %q at %s reads as %+v, %v, %v", set, line, send, h, cmd, ok, err)
					}
				}
				// The host, which knows no languages, never sees the
				// line as a command of another address either.
				for _, other := range []Set{Thread, Private, Mafia, Referee} {
					if other == set {
						continue
					}
					if r := Parse(line, other); len(r.Commands) != 0 {
						t.Errorf("%s %q is a command at %s: %+v", set, line, other, r.Commands)
					}
				}
			}
		})
	}
}

// TestDiscussionDrawsNoQuestion: no line of the discussion corpora of any
// language, nor anything the demo's bots say, is a near miss, wherever it
// is written, but for the votes said in a sentence of asked; and the
// addresses where no near miss is asked about (the host's own, a sign-up
// address) never see one.
func TestDiscussionDrawsNoQuestion(t *testing.T) {
	var lines []string
	for _, tag := range []string{"en", "de", "fr", "es"} {
		registered(t, tag)
		lines = append(lines, corpus(t, "discussion-"+tag+".txt")...)
	}
	if n := len(corpus(t, "discussion-en.txt")); n < 60 {
		t.Errorf("discussion-en.txt has %d lines, want at least 60", n)
	}
	seen := map[string]bool{}
	for _, line := range lines {
		for _, set := range []Set{Thread, Mafia, Private, Referee, Host, Signup} {
			res := Parse(line, set)
			if set == Thread || set == Mafia {
				// Where discussion is written, it is discussion. (The
				// other addresses read a few of these lines as a
				// command with words it does not take, such as "Status
				// quo is bad for town." in a private channel: an error
				// line, answered as such.)
				if len(res.Commands)+len(res.Misplaced) != 0 {
					t.Errorf("%s %q: commands %+v misplaced %+v", set, line, res.Commands, res.Misplaced)
					continue
				}
				if res.Discussion != strings.TrimSpace(line) {
					t.Errorf("%s %q: discussion %q", set, line, res.Discussion)
				}
			}
			for _, e := range res.Errors {
				if e.Near == nil {
					continue
				}
				send, ok := asked[line]
				if !ok || !e.Relayed() || e.Send != send || (set != Thread && set != Private) {
					t.Errorf("%s %q: %s (send %q)", set, line, e.Message, e.Send)
				}
				seen[line] = true
			}
		}
	}
	for line := range asked {
		if !seen[line] {
			t.Errorf("%q draws no question", line)
		}
	}
}

// TestNearMissesNeverShadowCommands: a line that is a command stays that
// command; near misses are read only from what is no command at all.
func TestNearMissesNeverShadowCommands(t *testing.T) {
	for _, c := range []struct {
		set  Set
		line string
		verb Verb
	}{
		{Thread, "VOTE Mallory", Vote},
		{Thread, "vote for mallory please", Vote}, // the engine answers for the name
		{Thread, "LOCK", Lock},
		{Referee, "MODKILL Grace", Modkill},
		{Private, "INSPECT Carol", Inspect},
		{Thread, "Alice >> Bob", Vote},
	} {
		res := Parse(c.line, c.set)
		if len(res.Commands) != 1 || res.Commands[0].Verb != c.verb || len(res.Errors) != 0 {
			t.Errorf("%s %q: commands %+v errors %+v, want %s", c.set, c.line, res.Commands, res.Errors, c.verb)
		}
	}
}

// TestNearMissesOnlyWhereTheAuthorWrites: a player's near miss is one of a
// player's commands, the referee's one of the referee's; the host's own
// address and a sign-up address, which answer every message that holds no
// command anyway, see none; and the mafia list is asked about its own
// commands only, not about the day's votes it plans.
func TestNearMissesOnlyWhereTheAuthorWrites(t *testing.T) {
	for _, c := range []struct {
		set  Set
		line string
		send string // "": discussion, no question
	}{
		{Thread, "MODKIL Grace", ""},
		{Private, "CLSOE", ""},
		{Referee, "VOET Mallory", ""},
		{Referee, "I vote Mallory.", ""},
		{Mafia, "I vote Mallory.", ""},
		{Mafia, "Agreed. VOTE Mallory", ""},
		{Mafia, "VOET Mallory", "VOTE Mallory"},
		{Host, "VOET Mallory", ""},
		{Signup, "JION Mallory", ""},
		{Signup, "I vote Mallory.", ""},
	} {
		res := Parse(c.line, c.set)
		switch {
		case c.send == "" && len(res.Errors) != 0:
			t.Errorf("%s %q: %+v, want no question", c.set, c.line, res.Errors)
		case c.send != "" && (len(res.Errors) != 1 || res.Errors[0].Send != c.send):
			t.Errorf("%s %q: %+v, want the line %q", c.set, c.line, res.Errors, c.send)
		}
	}
}

// TestNearMissHomes: the line to send names where it belongs, for the
// host to send the author there.
func TestNearMissHomes(t *testing.T) {
	for _, c := range []struct {
		set   Set
		line  string
		homes []Set
	}{
		{Thread, "VOET Mallory", []Set{Thread}},
		{Private, "VOET Mallory", []Set{Thread}},
		{Thread, "INSPCT Carol", []Set{Private}},
		{Mafia, "KLIL Bob", []Set{Private, Mafia}},
		{Private, "HLEP", []Set{Thread, Private, Mafia}},
		{Referee, "STAUTS", []Set{Referee}},
		{Thread, "V\u041eTE Frank", []Set{Thread}}, // a look-alike
	} {
		res := Parse(c.line, c.set)
		if len(res.Errors) != 1 || res.Errors[0].Near == nil || !slices.Equal(res.Errors[0].Near.Homes, c.homes) {
			t.Errorf("%s %q: %+v, want homes %v", c.set, c.line, res.Errors, c.homes)
		}
	}
}

// TestOneEdit: the slips a misspelt verb is read through, and those it is
// not.
func TestOneEdit(t *testing.T) {
	for _, c := range []struct {
		typed, want string
		e           edit
		ok          bool
	}{
		{"VOET", "VOTE", swapped, true},
		{"VTOE", "VOTE", swapped, true},
		{"VITE", "VOTE", changed, true},
		{"VOOTE", "VOTE", doubled, true},
		{"VOTEX", "VOTE", added, true},
		{"INSPCT", "INSPECT", dropped, true},
		{"MODKIL", "MODKILL", undoubled, true},
		{"VOTE", "VOTE", 0, false},
		{"VEOT", "VOTE", 0, false},
		{"OVET", "VOTE", 0, false},
		{"VO", "VOTE", 0, false},
	} {
		e, ok := oneEdit([]rune(c.typed), []rune(c.want))
		if ok != c.ok || (ok && e != c.e) {
			t.Errorf("oneEdit(%s, %s) = %v, %v; want %v, %v", c.typed, c.want, e, ok, c.e, c.ok)
		}
	}
}
