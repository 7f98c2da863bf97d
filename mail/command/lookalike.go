package command

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/lang/phrase"
)

// A line can be written to look like a command and not be one: "VОTE
// Frank" with a Cyrillic "О", "V0TE Frank" with a zero. Relayed in a post,
// it shows every reader a vote that was never cast. Such a line is never
// applied (a guess at what a player meant must not change the game where
// it could be wrong) and never relayed: it is refused, and the answer names
// the character and the line to send. Invisible characters are another
// matter: they change nothing a reader sees, so a verb is read without
// them ("VO\u200bTE Dave" is a vote; see ParseLine).

// lookalike is a line that reads as a command once characters that only
// look like Latin letters are read as those letters.
type lookalike struct {
	// Send is the line as it reads: the command to send instead.
	Send string
	// Odd is the first character that only looks like a Latin letter, and
	// Like that letter.
	Odd, Like rune
}

// Error is the sentence the sender's answer gives for the line.
func (l lookalike) Error() *phrase.Error {
	return phrase.Errorf("%q in this line is %s that only looks like the Latin letter %q: "+
		"the line is no command, and it was neither done nor passed on", string(l.Odd), runeKind(l.Odd), string(l.Like))
}

// runeKind says in words what kind of character r is.
func runeKind(r rune) *phrase.Error {
	switch {
	case unicode.In(r, unicode.Cyrillic):
		return phrase.Errorf("a Cyrillic letter")
	case unicode.In(r, unicode.Greek):
		return phrase.Errorf("a Greek letter")
	case unicode.IsDigit(r):
		return phrase.Errorf("a digit")
	}
	return phrase.Errorf("a character")
}

// verbPhrase is a verb as the words that spell it, each folded (FoldVerb).
type verbPhrase []string

// verbPhrases are the English verbs and every language's phrases, longest
// first, each once.
var verbPhrases = sync.OnceValue(func() []verbPhrase {
	seen := map[string]bool{}
	var out []verbPhrase
	add := func(words []string) {
		k := strings.Join(words, " ")
		if len(words) == 0 || seen[k] {
			return
		}
		seen[k] = true
		out = append(out, words)
	}
	for _, vs := range verbs {
		for _, v := range vs {
			add(strings.Fields(string(v)))
		}
	}
	add([]string{"NOKILL"})
	for _, ps := range localPhrases() {
		for _, p := range ps {
			add(p.words)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return strings.Join(out[i], " ") < strings.Join(out[j], " ")
	})
	return out
})

// maxPhraseWords is the most words a verb phrase has.
const maxPhraseWords = 3

// findLookalike reports whether line, which is no command of set nor of
// another set, reads as one once the characters of its first words that
// only look like Latin letters (Cyrillic and Greek letters, digits,
// full-width and other compatibility forms; Unicode's confusables, UTS
// #39) are read as those letters, and its invisible characters dropped.
func findLookalike(line string, set Set) (lookalike, bool) {
	s := clean(withoutInvisible(strings.TrimSpace(line), maxPhraseWords))
	fields := strings.Fields(s)
	if len(fields) > maxPhraseWords {
		fields = fields[:maxPhraseWords]
	}
	if !oddLetters(fields) {
		return lookalike{}, false
	}
	for _, p := range verbPhrases() {
		if len(p) > len(fields) {
			continue
		}
		var fixed []string
		var found lookalike
		match := true
		for i, w := range p {
			f, odd, like, ok := lookalikeWord(fields[i], w)
			if !ok {
				match = false
				break
			}
			if found.Odd == 0 && odd != 0 {
				found.Odd, found.Like = odd, like
			}
			fixed = append(fixed, f)
		}
		if !match || found.Odd == 0 {
			continue
		}
		send := strings.Join(fixed, " ") + afterFields(s, len(p))
		_, ok, _ := ParseLine(send, set)
		if !ok {
			_, ok = misplaced(send, set)
		}
		if ok {
			found.Send = send
			return found, true
		}
	}
	return lookalike{}, false
}

// oddLetters reports whether words hold a character that might only look
// like a Latin letter: one beyond ASCII, or a digit. Most lines hold none,
// and cost nothing more.
func oddLetters(words []string) bool {
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if c := w[i]; c >= utf8.RuneSelf || ('0' <= c && c <= '9') {
				return true
			}
		}
	}
	return false
}

// lookalikeWord matches a word of a line, with the punctuation around it,
// against a folded word of a verb: each of its letters is the verb's own
// (in any case, accents aside) or only looks like it. fixed is the word
// with those read as the verb's letters; odd is the first such character
// (0: the word is the verb's as it stands) and like the letter it looks
// like.
func lookalikeWord(field, verb string) (fixed string, odd, like rune, ok bool) {
	core := strings.TrimLeft(field, "¡¿*_\"'«“")
	pre := field[:len(field)-len(core)]
	trimmed := strings.TrimRight(core, `.,;:!*_"'»”`)
	post := core[len(trimmed):]
	word := []rune(norm.NFC.String(trimmed))
	want := []rune(verb)
	if len(word) != len(want) {
		return "", 0, 0, false
	}
	lower := false
	for _, r := range word {
		if unicode.IsUpper(r) {
			lower = false
			break
		}
		if unicode.IsLower(r) {
			lower = true
		}
	}
	out := make([]rune, len(word))
	for i, r := range word {
		v := want[i]
		switch {
		case lang.FoldVerb(string(r)) == string(v):
			out[i] = r
			continue
		case r < utf8.RuneSelf && unicode.IsLetter(r), !looksLike(r, v):
			return "", 0, 0, false
		}
		if odd == 0 {
			odd, like = r, v
		}
		out[i] = v
		if lower {
			out[i] = unicode.ToLower(v)
		}
	}
	return pre + string(out) + post, odd, like, true
}

// looksLike reports whether r, no ASCII letter, is read as the letter v:
// its compatibility form is v (full-width "Ｖ"), or its confusable
// skeleton is v's in either case (Cyrillic "О", Greek "Ο", the digit "0").
func looksLike(r, v rune) bool {
	if n := strings.ToUpper(norm.NFKC.String(string(r))); n == string(v) {
		return true
	}
	sk := confusables.Skeleton
	return sk(string(unicode.ToUpper(r))) == sk(string(v)) ||
		sk(string(unicode.ToLower(r))) == sk(string(unicode.ToLower(v)))
}
