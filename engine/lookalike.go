package engine

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/mtibben/confusables"
)

// Names that cannot impersonate (docs/adversaries.md, "Names"): a player's name
// may not look like another seated player's, nor like any word the host
// uses for itself or for the referee, since a player's posts are shown
// under their name and a look-alike could pass for someone else.
//
// "Look like" is the confusable skeleton of Unicode's UTS #39 (Cyrillic
// "а" for Latin "a", "0" for "O", "rn" for "m"), compared after the same
// folding as NormalizeName, so that case, accents, spaces and punctuation
// make no difference either.

// namePunctuation is the punctuation a name may hold besides letters,
// digits and spaces: what real names and nicknames use (Mary-Jo O'Neil,
// J.R., the typographic apostrophe of phones, snake_case handles).
const namePunctuation = "-'.’_"

// hostWords are the words the host writes for itself and for the referee:
// a name may not be, contain as a whole word, or look like one of them, nor
// the game's own name (the host signs its mail "Mafia GAME").
var hostWords = []string{"referee", "host", "moderator", "mafiamail", "mafia", "null"}

// lookalikeKeys are the forms in which two names that look the same
// coincide: the skeleton taken before case folding (an upper-case "I" looks
// like "l", a lower-case "i" does not) and again after it (the skeleton of
// "m" is "rn", of "M" nothing), and the skeleton of the folded name alone
// ("ALICE" and "Alice" fold alike but their skeletons differ).
func lookalikeKeys(s string) [2]string {
	sk := confusables.Skeleton
	return [2]string{NormalizeName(sk(NormalizeName(sk(s)))), NormalizeName(sk(NormalizeName(s)))}
}

// looksLike reports whether a and b could be told apart by no reader.
func looksLike(a, b string) bool {
	if NormalizeName(a) == NormalizeName(b) {
		return true
	}
	ka, kb := lookalikeKeys(a), lookalikeKeys(b)
	for _, x := range ka {
		for _, y := range kb {
			if x != "" && x == y {
				return true
			}
		}
	}
	return false
}

// nameCharacters refuses a name with anything but letters, digits, spaces
// and namePunctuation: no symbols, no brackets that could fake "Name
// (game)", no control or invisible formatting characters (a right-to-left
// override turns a name around on screen).
func nameCharacters(name string) *Refusal {
	prevLetter := false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r):
			prevLetter = true
			continue
		case unicode.Is(unicode.M, r) && prevLetter:
			continue // an accent on the letter before it
		case r == ' ' || strings.ContainsRune(namePunctuation, r):
			prevLetter = false
			continue
		case unicode.Is(unicode.Cf, r) || unicode.IsControl(r):
			return refuse(BadArgument, "a name may not hold invisible or formatting characters (it holds U+%04X); "+
				"use only letters, digits, spaces and %s", r, punctuationList())
		case unicode.IsSpace(r):
			return refuse(BadArgument, "a name may hold ordinary spaces only (it holds U+%04X)", r)
		}
		return refuse(BadArgument, "a name may hold only letters, digits, spaces and %s, not %q", punctuationList(), r)
	}
	return nil
}

func punctuationList() string {
	var parts []string
	for _, r := range namePunctuation {
		parts = append(parts, string(r))
	}
	return strings.Join(parts, " ")
}

// nameWords splits a name into its words, at spaces and punctuation.
func nameWords(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r))
	})
}

// reservedWord finds a host word that name is, holds as a whole word or as
// a run of whole words ("Mafia Mail"), or looks like. It returns the word
// and whether the name merely looks like it.
func reservedWord(name, game string) (word string, lookalike, found bool) {
	words := nameWords(name)
	reserved := append([]string{game}, hostWords...)
	for i := range words {
		for j := i + 1; j <= len(words) && j <= i+4; j++ {
			part := strings.Join(words[i:j], "")
			for _, w := range reserved {
				if w == "" {
					continue
				}
				for _, form := range []string{w, w + "s"} {
					if NormalizeName(part) == form {
						return w, false, true
					}
					if looksLike(part, form) {
						word, lookalike, found = w, true, true
					}
				}
			}
		}
	}
	return word, lookalike, found
}

// impersonates refuses a name that could pass for the host, the referee or
// a seated player other than the one in slot self (0: anyone).
func (s *State) impersonates(name string, self int) *Refusal {
	if r := nameCharacters(name); r != nil {
		return r
	}
	if w, lookalike, ok := reservedWord(name, s.Game); ok {
		what := fmt.Sprintf("holds the word %q", w)
		if lookalike {
			what = fmt.Sprintf("looks like the word %q", w)
		}
		why := "the host and the referee speak under that word"
		if w == s.Game {
			why = "it is the name of this game, which the host signs its mail with"
		}
		if w == "null" {
			why = "NULL is the placeholder vote"
		}
		return refuse(BadArgument, "%q cannot be a player's name: it %s, and %s; a player's posts must never pass for theirs. "+
			"Pick another name", name, what, why)
	}
	for _, p := range s.Players {
		if p.Slot != self && looksLike(name, p.Name) {
			if NormalizeName(name) == NormalizeName(p.Name) {
				return refuse(Duplicate, "the name %q is taken", p.Name)
			}
			return refuse(Duplicate, "%q looks the same as %q, who has joined already: others could not tell you apart. "+
				"Pick a name that looks different", name, p.Name)
		}
	}
	return nil
}
