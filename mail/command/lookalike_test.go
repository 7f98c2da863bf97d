package command

import (
	"strings"
	"testing"
)

// A line that reads as a command once what only looks like Latin letters
// is read as those letters is refused, never relayed and never applied,
// with the line to send; one that reads as a command once invisible
// characters are gone is that command. Ordinary lines, in any script, stay
// discussion.
func TestLookalikeCommandsAreRefusedAndInvisibleOnesRead(t *testing.T) {
	for _, c := range []struct {
		set  Set
		line string
		// verb: read as this command; send: refused, with this line to
		// send and this kind of character named; neither: discussion.
		verb       Verb
		send, kind string
	}{
		{set: Thread, line: "V\u041eTE Frank", send: "VOTE Frank", kind: "a Cyrillic letter"},
		{set: Thread, line: "v\u043ete frank", send: "vote frank", kind: "a Cyrillic letter"},
		{set: Thread, line: "V0TE Frank", send: "VOTE Frank", kind: "a digit"},
		{set: Thread, line: "V\u039fTE Frank", send: "VOTE Frank", kind: "a Greek letter"},
		{set: Thread, line: "\uff36\uff2f\uff34\uff25 Frank", send: "VOTE Frank", kind: "a character"},
		{set: Thread, line: "*V\u041eTE: Frank*, he lied", send: "VOTE: Frank*, he lied", kind: "a Cyrillic letter"},
		{set: Thread, line: "UNV\u041eTE", send: "UNVOTE", kind: "a Cyrillic letter"},
		{set: Private, line: "K\u0406LL Bob", send: "KILL Bob", kind: "a Cyrillic letter"},
		{set: Thread, line: "K\u0406LL Bob", send: "KILL Bob", kind: "a Cyrillic letter"}, // another address's command
		{set: Mafia, line: "N\u041e KILL", send: "NO KILL", kind: "a Cyrillic letter"},
		{set: Thread, line: "ST\u0406MME FÜR Frank", send: "STIMME FÜR Frank", kind: "a Cyrillic letter"},
		{set: Referee, line: "M\u041eDKILL Bob", send: "MODKILL Bob", kind: "a Cyrillic letter"},
		{set: Thread, line: "VO\u200bTE Dave", verb: Vote},
		{set: Thread, line: "VO\u00adTE Dave", verb: Vote},
		{set: Thread, line: "\u202eVOTE Dave", verb: Vote},
		{set: Thread, line: "V\u2060O\ufe0fTE Dave", verb: Vote},
		{set: Thread, line: "L\u043eck in your votes, folks"},
		{set: Thread, line: "\u0412\u041e\u0422\u0415 \u0437\u0430 \u0424\u0440\u044d\u043d\u043a\u0430"}, // Russian prose
		{set: Thread, line: "Prüfen, ob er lügt"},
		{set: Thread, line: "2 votes on Frank now"},
		{set: Thread, line: "Ελπίζω ότι ο Frank λέει αλήθεια"},
	} {
		res := Parse(c.line, c.set)
		switch {
		case c.verb != "":
			if len(res.Commands) != 1 || res.Commands[0].Verb != c.verb {
				t.Errorf("%s %q: commands %+v, errors %+v, want %s", c.set, c.line, res.Commands, res.Errors, c.verb)
			}
		case c.send != "":
			if len(res.Errors) != 1 || res.Errors[0].Send != c.send {
				t.Errorf("%s %q: errors %+v, want one that says to send %q", c.set, c.line, res.Errors, c.send)
			} else if msg := res.Errors[0].Message; !strings.Contains(msg, c.kind+" that only looks like the Latin letter") ||
				!strings.Contains(msg, "neither done nor passed on") {
				t.Errorf("%s %q: %q does not name %s", c.set, c.line, msg, c.kind)
			}
			if len(res.Commands) != 0 {
				t.Errorf("%s %q: applied as %+v", c.set, c.line, res.Commands)
			}
		default:
			if res.Discussion != c.line || res.Lines() != 0 {
				t.Errorf("%s %q: read as %+v %+v %+v, want discussion", c.set, c.line, res.Commands, res.Errors, res.Misplaced)
			}
		}
		if c.verb != "" || c.send != "" {
			if res.Discussion != "" {
				t.Errorf("%s %q: relayed as %q", c.set, c.line, res.Discussion)
			}
		}
	}
	// Invisible characters go from the verb only: in a name they stay, for
	// the engine to refuse the name (a direction override turns a name
	// around on screen).
	for _, line := range []string{"JOIN Ali\u202ece", "JO\u00adIN Ali\u202ece"} {
		res := Parse(line, Signup)
		if len(res.Commands) != 1 || res.Commands[0].Verb != Join || res.Commands[0].Name != "Ali\u202ece" {
			t.Errorf("%q: %+v, want JOIN with the name as written", line, res.Commands)
		}
	}
}
