package command

import (
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
)

// The languages' own verbs (lang/TAG/verbs.json) are read after the
// English ones, in every game whatever its language: a German game with
// French and Spanish players understands all three. A line that is an
// English command of the set is never read in another language, so a
// language's phrase can neither shadow nor change an English command.
//
// English verbs are rare words in other languages' prose; a language's
// own verbs are everyday words of its players' discussion ("Hilfe, ich
// verstehe das nicht", "Voter maintenant serait idiot"). So a localized
// line is read more strictly than an English one:
//
//   - a line that asks anything ("Töten wir Bob?", "Protéger Anna ? Le
//     docteur l'a fait") or ends in a colon (a heading, "Regeln:") is never
//     a command;
//   - a phrase followed by a comma starts a list or a clause ("Töten,
//     Schützen, Prüfen – die Nacht ist voll"), not a command;
//   - a phrase that takes no name or value (HILFE, PASSER, VOTO NULO, ...)
//     is a command only alone on its line, with no more than punctuation;
//   - a name after a phrase is one or two words, and, where the phrase is
//     written as the start of a sentence ("Stimme für"), starts with a
//     capital, as names do and the next word of a sentence does not; a
//     phrase typed all in lower case takes a one-word name;
//   - a zone, a language or a length after a phrase must read as one, and
//     words after a phrase that the English grammar cannot read are prose,
//     not an error line: the phrase alone, with nothing after it, is
//     still answered with the English grammar's help ("VOTE needs a name").

// localPhrase is one phrase of a language, folded word by word.
type localPhrase struct {
	words   []string
	english string
}

// localPhrases holds every registered language's phrases by their first
// folded word, longest first, so that the longest phrase that matches
// wins ("PROTEGER A Ana" protects Ana, not "A Ana"). A phrase that two
// languages spell alike keeps the first language's meaning;
// TestLanguagesAgreeOnSharedPhrases keeps that from mattering.
var localPhrases = sync.OnceValue(func() map[string][]localPhrase {
	seen := map[string]bool{}
	m := map[string][]localPhrase{}
	for _, l := range lang.All() {
		ps := l.VerbPhrases()
		keys := make([]string, 0, len(ps))
		for k := range ps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if seen[k] {
				continue
			}
			seen[k] = true
			w := strings.Fields(k)
			if len(w) == 0 {
				continue
			}
			m[w[0]] = append(m[w[0]], localPhrase{words: w, english: ps[k]})
		}
	}
	for _, ps := range m {
		sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].words) > len(ps[j].words) })
	}
	return m
})

// argVerbs are the English phrases that take a name or a value after
// them; every other phrase stands alone on its line.
var argVerbs = map[string]bool{
	string(Vote): true, string(Kill): true, string(Inspect): true, string(Protect): true,
	string(Shoot): true, string(Join): true, string(Zone): true, string(Language): true, string(Extend): true,
}

// ParseLine reads one line. It returns ok=false for discussion, and a non-nil
// error for a line that starts with a verb of set but cannot be read.
func ParseLine(line string, set Set) (cmd Command, ok bool, err error) {
	cmd, ok, err = parseAnyLanguage(line, set)
	if ok || strings.IndexFunc(line, invisible) < 0 {
		return cmd, ok, err
	}
	// Invisible characters in the verb change nothing its reader sees:
	// the line is read without them, word by word, so that one in a name
	// after the verb stays for the engine to refuse.
	prev := line
	for n := 1; n <= maxPhraseWords; n++ {
		folded := withoutInvisible(line, n)
		if folded == prev {
			continue
		}
		prev = folded
		if cmd, ok, err = parseAnyLanguage(folded, set); ok {
			cmd.Raw = strings.TrimSpace(line)
			return cmd, ok, err
		}
	}
	return Command{}, false, nil
}

// parseAnyLanguage reads one line by the English verbs, then by the
// languages' own.
func parseAnyLanguage(line string, set Set) (cmd Command, ok bool, err error) {
	cmd, ok, err = parseEnglish(line, set)
	if ok || inSet[set] == nil {
		return cmd, ok, err
	}
	return parseLocal(line, set)
}

// parseLocal reads a line that starts with a phrase of one of the
// languages: the phrase is put in English and the line read by the
// English grammar, under the rules at the top of this file.
func parseLocal(line string, set Set) (Command, bool, error) {
	raw := strings.TrimSpace(line)
	s := clean(raw)
	if s == "" || strings.ContainsAny(s, "?¿") || strings.HasSuffix(s, ":") {
		return Command{}, false, nil
	}
	// Most lines are discussion whose first word starts no phrase: look
	// that up before splitting the whole line.
	first, _, _ := strings.Cut(s, " ")
	if i := strings.IndexFunc(first, unicode.IsSpace); i >= 0 {
		first = first[:i]
	}
	candidates := localPhrases()[foldWord(first)]
	if len(candidates) == 0 {
		return Command{}, false, nil
	}
	fields := strings.Fields(s)
	var match *localPhrase
	for _, p := range candidates {
		if len(p.words) > len(fields) {
			continue
		}
		same := true
		for i, w := range p.words[1:] {
			if foldWord(fields[i+1]) != w {
				same = false
				break
			}
		}
		if same {
			match = &p
			break
		}
	}
	if match == nil {
		return Command{}, false, nil
	}
	typed := strings.Join(fields[:len(match.words)], " ")
	rest := trimLead(afterFields(s, len(match.words)))

	if trimPunct(rest) == "" {
		// The phrase alone: what the English verb alone is, help included.
		cmd, ok, err := parseEnglish(match.english, set)
		if ok {
			cmd.Raw = raw
		}
		return cmd, ok, err
	}
	if !argVerbs[match.english] || strings.HasSuffix(fields[len(match.words)-1], ",") ||
		strings.HasSuffix(fields[len(match.words)-1], ";") {
		return Command{}, false, nil
	}
	cmd, ok, err := parseEnglish(match.english+" "+rest, set)
	if !ok || err != nil {
		return Command{}, false, nil
	}
	cmd.Raw = raw
	switch cmd.Verb {
	case Vote:
		if cmd.Target != NullTarget && !nameLike(typed, cmd.Target) {
			return Command{}, false, nil
		}
	case Kill, Inspect, Protect, Shoot:
		if !nameLike(typed, cmd.Target) {
			return Command{}, false, nil
		}
	case Join:
		if !nameLike(typed, cmd.Name) {
			return Command{}, false, nil
		}
	case Zone:
		if _, err := engine.ReadZone(cmd.Text); err != nil {
			return Command{}, false, nil
		}
	case Language:
		if !languageLike(cmd.Text) {
			return Command{}, false, nil
		}
	}
	return cmd, true, nil
}

// nameLike reports whether what follows a localized phrase reads as a
// player's name rather than as the rest of a sentence (see the top of
// this file).
func nameLike(typed, name string) bool {
	words := strings.Fields(name)
	if len(words) == 0 || len(words) > 2 {
		return false
	}
	switch {
	case typed == strings.ToUpper(typed):
		return true
	case typed == strings.ToLower(typed):
		return len(words) == 1
	}
	r := []rune(name)[0]
	return unicode.IsUpper(r) || unicode.IsDigit(r)
}

// languageLike reports whether s names a language the host speaks, or
// looks like a language's tag ("it"), which the host answers with the
// list of those it has.
func languageLike(s string) bool {
	if _, ok := lang.Match(s); ok {
		return true
	}
	return len(s) == 2 && strings.IndexFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z')
	}) < 0
}

// foldWord is a word of a line as it is compared with the phrases:
// without the punctuation around it ("¡Ayuda!", "Hilfe.") and folded.
func foldWord(w string) string {
	w = strings.TrimLeft(w, "¡¿*_\"'«“")
	w = strings.TrimRight(w, `.,;:!*_"'»”`)
	return lang.FoldVerb(w)
}

// afterFields is what follows the first n words of s.
func afterFields(s string, n int) string {
	i := 0
	for k := 0; k < n; k++ {
		i = len(s) - len(strings.TrimLeftFunc(s[i:], unicode.IsSpace))
		j := strings.IndexFunc(s[i:], unicode.IsSpace)
		if j < 0 {
			return ""
		}
		i += j
	}
	return s[i:]
}
