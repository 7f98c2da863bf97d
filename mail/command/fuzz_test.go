package command

import (
	"strings"
	"testing"
)

var allSets = []Set{Thread, Private, Mafia, Referee, Host, Signup}

func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{
		"VOTE Alice", "Alice >> Bob", "vote null.", "*VOTE: Mary Ann*, she lied", "NO KILL tonight",
		"ADD Bob bob@example.org<mailto:bob@example.org>", "REPLACE Ann WITH <x@y.z>", "REJECT 3 SUSPEND",
		"EXTEND 1d 6h", "DEADLINE 2025-03-07 18:00 Europe/Berlin", "NEW GAME oak", "JOIN Zoë", "ANNOUNCE hi\nthere",
		"Lock in your votes", "KILL Bob", "Status update: quiet", "\u200bVOTE\u00a0Bob", "##vote for bob", "GRANT 99999999999999999999h",
		// The languages' own verbs, and prose that starts like them.
		"Stimme für Bob, er lügt", "STIMME FUER mary ann", "Töten, Schützen, Prüfen", "Kein Mord?", "Sprache de",
		"Erschießen Bob", "Voter pour : Bob", "VÉRIFIER Dana", "Aide !", "Inscris-moi : Jean",
		"Fuseau horaire Europe/Paris", "¡Ayuda!", "Voto por María José, miente", "No matar a nadie.",
		"Proteger a Ana, ¿lo hizo el médico?", "Idioma: español, por favor", "LANGUAGE de",
		// Look-alikes: refused with the line to send; invisible characters:
		// read as if they were not there.
		"V\u041eTE Frank", "V0TE Frank", "\uff36\uff2f\uff34\uff25 Frank", "ST\u0406MME FÜR Frank", "N\u041e KILL",
		"VO\u200bTE Dave", "VO\u00adTE Dave", "\u202eVOTE Dave", "L\u043eck in your votes",
		// Near misses: misspelt verbs, and commands inside sentences;
		// and ordinary lines close to them.
		"VOET Mallory", "MODKIL Grace", "INSPCT Carol", "STAUTS", "EXTNED 12h", "Voet Mary Ann", "STIMEM FÜR Bob",
		"VOTER PUOR Bob", "VTOO POR Bob", "NO KIL", "WEEKEND CLOES", "I vote Mallory too.", "my vote: Mallory",
		"Oh, I see I am not on the tally. VOTE Mallory", "vote for mallory please", "Je vote pour Bob, il ment",
		"Ich stimme für Bob, weil er lügt.", "Mi voto es para Bob, miente.", "Mon vote : Bob", "I vote Bob, if nobody claims",
		"I don't think we should vote Bob yet?", "Done.", "NOTE: Bob lied", "Am I not on the tally? VOTE Mallory",
		"Agreed. KILL Bob", "i vote mallory", "I’m voting Mallory — she lied",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, set := range allSets {
			cmd, ok, err := ParseLine(line, set)
			if err != nil && !ok {
				t.Fatalf("%s %q: an error line must be ok", set, line)
			}
			if ok && err == nil && !inSet[set][cmd.Verb] {
				t.Fatalf("%s %q: verb %q is not in the set", set, line, cmd.Verb)
			}
			if ok && err == nil && (cmd.Verb == Kill || cmd.Verb == Inspect || cmd.Verb == Protect || cmd.Verb == Shoot) && cmd.Target == "" {
				t.Fatalf("%s %q: %s without a target", set, line, cmd.Verb)
			}
			res := Parse(line, set)
			if res.Lines() > strings.Count(line, "\n")+strings.Count(line, "\r")+1 {
				t.Fatalf("%s %q: more command lines than lines", set, line)
			}
			// A look-alike's or a near miss's line to send reads as a
			// command, here or at another address; a misspelt command is
			// never relayed, a sentence with a command inside always is.
			for _, e := range res.Errors {
				if e.Send == "" {
					continue
				}
				_, ok, _ := ParseLine(e.Send, set)
				if _, mis := misplaced(e.Send, set); !ok && !mis {
					t.Fatalf("%s %q: the line to send, %q, is no command", set, line, e.Send)
				}
				if e.Relayed() != hasLine(res.Discussion, e.Text) {
					t.Fatalf("%s %q: %q relayed: %v, in the discussion %q", set, line, e.Text, e.Relayed(), res.Discussion)
				}
				if e.Near == nil {
					continue
				}
				if len(e.Near.Homes) == 0 {
					t.Fatalf("%s %q: no home for the line to send %q", set, line, e.Send)
				}
				for _, h := range e.Near.Homes {
					if cmd, ok, err := ParseLine(e.Send, h); !ok || err != nil || cmd.Verb != e.Near.Command {
						t.Fatalf("%s %q: %q at %s reads as %+v, %v, %v, not %s", set, line, e.Send, h, cmd, ok, err, e.Near.Command)
					}
				}
				// Near misses are asked about in a game's channels only
				// (a look-alike, which names no slip, anywhere).
				if e.Near.Typed != "" && authorSets(set) == nil {
					t.Fatalf("%s %q: a near miss at an address that asks none", set, line)
				}
			}
			// A misplaced line belongs to other sets, never to this one.
			for _, m := range res.Misplaced {
				if len(m.Homes) == 0 || inSet[set][m.Verb] {
					t.Fatalf("%s %q: misplaced %+v", set, line, m)
				}
				for _, h := range m.Homes {
					if h == set || !inSet[h][m.Verb] {
						t.Fatalf("%s %q: misplaced %+v names home %s", set, line, m, h)
					}
				}
			}
		}
		n := NormalizeName(line)
		if NormalizeName(n) != n {
			t.Fatalf("NormalizeName is not idempotent on %q: %q then %q", line, n, NormalizeName(n))
		}
	})
}

// hasLine reports whether one of text's lines is line, but for the space
// around it: whether the line was relayed as written, rather than as part
// of another line that holds its words ("VOT M" inside "0VOT M0").
func hasLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
