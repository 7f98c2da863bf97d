package engine

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// NormalizeName reduces a name to what D1 compares: case folded, spaces
// and punctuation dropped, and accents dropped from Latin, Greek and
// Cyrillic letters, so "Mary-Jo O'Neil" is "maryjo oneil" and "José" can be
// typed "jose". Marks on other scripts (Japanese dakuten, Indic vowel signs)
// change the letter and are kept. The mail layer's grammar uses this same
// function, so both agree on what the same name is.
func NormalizeName(s string) string {
	if ascii(s) {
		var b strings.Builder
		b.Grow(len(s))
		for i := 0; i < len(s); i++ {
			c := s[i]
			switch {
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
				b.WriteByte(c)
			}
		}
		return b.String()
	}
	// Bytes that are not UTF-8 are no part of a name (and normalisation
	// could join them with what follows into a letter a second pass reads
	// differently). Decompose before folding too: some compatibility
	// characters (U+03D3) decompose into capitals.
	s = strings.ToValidUTF8(s, "")
	s = norm.NFKD.String(cases.Fold().String(norm.NFKD.String(s)))
	var b strings.Builder
	b.Grow(len(s))
	// keepMarks: the last rune kept is a letter whose marks matter. Marks
	// after anything else (a Latin letter, a digit, a space that was
	// dropped) go, so that a second pass finds nothing more to drop.
	keepMarks := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Me, r):
			if keepMarks {
				b.WriteRune(r)
			}
		case unicode.IsLetter(r):
			b.WriteRune(caseClass(r))
			keepMarks = !unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic)
		case unicode.IsDigit(r):
			b.WriteRune(r)
			keepMarks = false
		default:
			keepMarks = false
		}
	}
	return norm.NFC.String(b.String())
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// caseClass maps a letter to one fixed member of its case-folding orbit:
// the lower case of its smallest member. Full case folding alone is not
// idempotent for every script (it sends lowercase Cherokee to uppercase),
// and names are compared as keys, so the same name must always give the
// same key.
func caseClass(r rune) rune {
	lowest := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < lowest {
			lowest = f
		}
	}
	return unicode.ToLower(lowest)
}

// resolve finds the player a name means among the given slots (D1): an exact
// match after normalising, else a unique prefix. A name that is exactly a
// dead player's (one not among the slots) means that player, and is refused
// as dead even when it starts a living player's name: "Bob" with Bob dead
// and Bobby alive is Bob, never Bobby; the refusal names Bobby as the one
// probably meant, for the sender to choose in a line of their own. An
// unknown or ambiguous name is refused with the candidates.
func (s *State) resolve(name string, among []int) (int, *Refusal) {
	want := NormalizeName(name)
	if want == "" {
		return 0, refuse(BadArgument, "no name given")
	}
	var prefixed []int
	for _, slot := range among {
		n := NormalizeName(s.Player(slot).Name)
		if n == want {
			return slot, nil
		}
		if strings.HasPrefix(n, want) {
			prefixed = append(prefixed, slot)
		}
	}
	if r := s.deadNamed(want, among, among, phrase.Errorf("the living players are")); r != nil {
		return 0, r
	}
	switch len(prefixed) {
	case 1:
		return prefixed[0], nil
	case 0:
		if r := s.deadTarget(want, among, among, phrase.Errorf("the living players are")); r != nil {
			return 0, r
		}
		r := refuse(UnknownName, "no player here is called %q", strings.TrimSpace(name))
		r.Candidates = s.closest(want, among)
		return 0, r
	default:
		r := refuse(AmbiguousName, "%q could be more than one player", strings.TrimSpace(name))
		for _, slot := range prefixed {
			r.Candidates = append(r.Candidates, s.Player(slot).Name)
		}
		return 0, r
	}
}

// deadNamed is the refusal of a name that is exactly a dead player's (one
// not among the slots), or nil: it says who died and who can be chosen,
// and its candidates are the choices whose names start with the name, the
// players the sender may have meant.
func (s *State) deadNamed(want string, among, choices []int, choose *phrase.Error) *Refusal {
	for i := range s.Players {
		p := &s.Players[i]
		if p.Alive || slices.Contains(among, p.Slot) || NormalizeName(p.Name) != want {
			continue
		}
		r := s.deadRefusal(p, choices, choose)
		for _, slot := range choices {
			if strings.HasPrefix(NormalizeName(s.Player(slot).Name), want) {
				r.Candidates = append(r.Candidates, s.Player(slot).Name)
			}
		}
		return r
	}
	return nil
}

// deadTarget is the refusal of a name that means a player who is no longer
// among the choices because they are dead: it says so, how they died, and
// who can be chosen instead. Deaths and their causes are public (N9, D10).
func (s *State) deadTarget(want string, among, choices []int, choose *phrase.Error) *Refusal {
	if r := s.deadNamed(want, among, choices, choose); r != nil {
		return r
	}
	var dead []*Player
	for i := range s.Players {
		p := &s.Players[i]
		if p.Alive || slices.Contains(among, p.Slot) {
			continue
		}
		if strings.HasPrefix(NormalizeName(p.Name), want) {
			dead = append(dead, p)
		}
	}
	if len(dead) != 1 {
		return nil
	}
	return s.deadRefusal(dead[0], choices, choose)
}

// deadRefusal says that p is dead, how they died, and who can be chosen.
func (s *State) deadRefusal(p *Player, choices []int, choose *phrase.Error) *Refusal {
	var names []string
	for _, slot := range choices {
		names = append(names, s.Player(slot).Name)
	}
	return refuse(Dead, "%s is dead (%s); %s %s", p.Name, CauseText(p.Cause), choose, joinAnd(names))
}

// CauseText is how a player died, in the words of the public announcement.
func CauseText(c Cause) *phrase.Error {
	switch c {
	case ByVote:
		return phrase.Errorf("eliminated by vote")
	case ByMissedVotes:
		return phrase.Errorf("removed for two missed votes")
	case ByMafia:
		return phrase.Errorf("killed by the Mafia")
	case ByVigilante, ByVigilanteDay:
		return phrase.Errorf("shot by the Vigilante")
	case ByMafiaAndVig:
		return phrase.Errorf("killed by the Mafia and the Vigilante")
	case ByModkill:
		return phrase.Errorf("removed by the referee")
	}
	return phrase.Errorf("out of the game")
}

// joinAnd lists names as "Alice, Bob and Carol", as a phrase each
// language joins its own way.
func joinAnd(names []string) *phrase.Error {
	switch len(names) {
	case 0:
		return phrase.Errorf("none")
	case 1:
		return phrase.Errorf("%s", names[0])
	}
	return phrase.Errorf("%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// closest lists up to three names nearest to want by edit distance, for the
// "did you mean" of an unknown name.
func (s *State) closest(want string, among []int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, slot := range among {
		name := s.Player(slot).Name
		n := NormalizeName(name)
		d := editDistance(want, n)
		if len(n) > len(want) && strings.HasPrefix(n, want[:1]) {
			d-- // a shortened name starting the same way is a likely meaning
		}
		if d <= max(2, len(want)/2) {
			cs = append(cs, cand{name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < 3; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// validName checks a sign-up name, or the new name of the player in slot
// self (0 for a sign-up): something to call a player by that no
// other player's name can be confused with.
func (s *State) validName(name string, self int) *Refusal {
	n := NormalizeName(name)
	switch {
	case n == "":
		return refuse(BadArgument, "a name needs at least one letter or digit")
	case len([]rune(name)) > 30:
		return refuse(BadArgument, "a name may have at most 30 characters")
	}
	return s.impersonates(name, self)
}
