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
