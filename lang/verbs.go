package lang

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// FoldVerb is the form in which a word of a command is compared with the
// languages' verbs: upper case, accents dropped (VÉRIFIER as VERIFIER,
// PRÜFEN as PRUFEN), ß as SS, Œ as OE and typographic apostrophes as
// plain ones. Players type on any keyboard, and a phone's autocorrect
// adds or drops accents at will, so a command must not depend on them.
func FoldVerb(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		// Most words of most lines: nothing to fold but the case.
		return strings.ToUpper(s)
	}
	s = letterFold.Replace(s)
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// letterFold spells the letters that NFD does not take apart, and the
// typographic apostrophes, as plain letters and an apostrophe. It is built
// once: FoldVerb reads every word of every line that is not ASCII.
var letterFold = strings.NewReplacer("ß", "SS", "ẞ", "SS", "œ", "OE", "Œ", "OE", "’", "'", "‘", "'")

// germanFold spells umlauts the way German writes them without the
// keys for them (PRÜFEN as PRUEFEN), which FoldVerb alone would read as
// PRUFEN.
var germanFold = strings.NewReplacer("Ä", "AE", "Ö", "OE", "Ü", "UE", "ä", "ae", "ö", "oe", "ü", "ue")

// VerbPhrases lists the language's verb phrases as FoldVerb folds them,
// each with the English phrase it stands for: every spelling verbs.json
// gives, and for a phrase with umlauts also its spelling with AE, OE and
// UE, so that PRÜFEN, PRUEFEN and PRUFEN all match.
func (l *Language) VerbPhrases() map[string]string {
	out := map[string]string{}
	for _, p := range l.Verbs() {
		out[FoldVerb(p[0])] = p[1]
		out[FoldVerb(germanFold.Replace(p[0]))] = p[1]
	}
	return out
}
