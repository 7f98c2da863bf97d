package command

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/lang/phrase"
)

// A line can be no command and still be meant as one: its verb misspelt
// ("VOET Mallory", "MODKIL Grace", "INSPCT Carol"), or the command written
// inside a sentence ("I vote Mallory too.", "Oh, I see I am not on the
// tally. VOTE Mallory"). Such a line is never applied: the host cannot
// tell a slip from prose, and a guess must not change the game where it
// could be wrong. Nor is it dropped without a word: it is a near miss, and
// the author is asked, in private, with the exact line to send.
//
//   - A line that starts with a misspelt verb is no discussion: it is not
//     relayed (readers would take it for the command, or for noise).
//   - A sentence with a command inside is discussion, and is relayed as
//     such; its author is asked all the same.
//
// Ordinary discussion must not draw a question every other post, so both
// are read narrowly (the corpora of discussion in testdata are the test):
//
//   - a misspelt verb is one edit away from a verb of four letters or
//     more, of English or of any language (one letter left out, added,
//     changed, or two swapped); written in lower case only a swap or a
//     doubled letter counts, and for English's longer verbs a letter left
//     out, since other edits make ordinary words ("Look!", "Done.",
//     "Will Bob…"); a few words often written in capitals for emphasis
//     are no verb's misspelling whatever their case (nearStop);
//   - a command inside a sentence is either a sentence of its own after
//     the first, whose verb is written in capitals as commands are and
//     takes an argument ("… tally. VOTE Mallory"; a verb alone there is
//     more often the next sentence's first word, cut by a line break, and
//     a line with several verbs in capitals lists them), or a vote said
//     in the first person ("I vote
//     Mallory", "my vote: Mallory", "Je vote pour Bob", "Ich stimme für
//     Bob"), which is asked about in the town thread and the private
//     channel only: in the mafia list it is planning, and the referee
//     does not vote;
//   - in every case what follows the verb must read as the command's
//     argument: a name is one or two words, capitalized as names are
//     (unless the whole line is in lower case), followed by nothing, by a
//     clause set off by punctuation, or by a word such as "too",
//     "please" or "because"; a line that asks anything ("?") is never a
//     near miss;
//   - the line to send must be a command where the author writes: a
//     player's verbs in the town thread, the private channel and the mafia
//     list, the referee's in the referee's channel; the host's own and
//     sign-up addresses answer every message that holds no command anyway.
//
// Which of these questions the author gets is the host's to decide last:
// a vote said in a sentence is asked about only where sending the line
// would cast a vote (host/nearmiss.go).

// NearMiss is what a line that is no command looks like.
type NearMiss struct {
	// Sentence is set for a command inside a sentence: the line is
	// discussion, relayed as any other. Otherwise the line is a command
	// with its verb misspelt, or written with characters that only look
	// like Latin letters (lookalike.go), and is not relayed.
	Sentence bool `json:"sentence,omitempty"`
	// Typed is what stands for the verb, as written ("VOET", "I vote"),
	// and Verb the verb as the line to send spells it ("VOTE",
	// "STIMME FÜR").
	Typed string `json:"typed"`
	Verb  string `json:"verb"`
	// Command is the line to send's verb.
	Command Verb `json:"command"`
	// Target is the name the line to send names, if any.
	Target string `json:"target,omitempty"`
	// Homes are the sets that read the line to send as a command, in the
	// order of Misplaced.Homes.
	Homes []Set `json:"homes"`
}

// nearVerb is a verb a misspelling is compared with: an English verb or a
// language's phrase.
type nearVerb struct {
	words   []string // folded, as FoldVerb folds them
	runes   [][]rune // the same, as runes
	spelled string   // as the line to send writes it: "VOTE", "STIMME FÜR"
	english bool
}

// nearVerbs are the English verbs and every language's phrases, longest
// first. ANNOUNCE is left out, as it takes any text; so are NEW GAME,
// which belongs to the host's own address, and verbs of three letters (a
// slip of ADD or END is any other short word).
var nearVerbs = sync.OnceValue(func() []nearVerb {
	var out []nearVerb
	seen := map[string]int{} // folded words: index in out
	add := func(spelled string, english bool) {
		words := strings.Fields(lang.FoldVerb(spelled))
		k := strings.Join(words, " ")
		if len(words) == 0 {
			return
		}
		if i, dup := seen[k]; dup {
			// VÉRIFIER and VERIFIER: the line to send is written as
			// the language writes it.
			if ascii(out[i].spelled) && !ascii(spelled) && !out[i].english {
				out[i].spelled = spelled
			}
			return
		}
		seen[k] = len(out)
		v := nearVerb{words: words, spelled: spelled, english: english}
		for _, w := range words {
			v.runes = append(v.runes, []rune(w))
		}
		out = append(out, v)
	}
	for _, set := range []Set{Thread, Private, Mafia, Referee} {
		for _, v := range verbs[set] {
			switch v {
			case Announce, NewGame, Add, End:
				continue
			}
			add(string(v), true)
		}
	}
	for _, l := range lang.All() {
		for _, p := range l.Verbs() {
			add(p[0], false)
		}
	}
	// Longest first; among as long, English first, then a phrase as
	// its language spells it (PRÜFEN) before its spelling without the
	// accents (PRUEFEN), so that the line to send reads as the language
	// writes it.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if len(a.words) != len(b.words) {
			return len(a.words) > len(b.words)
		}
		if a.english != b.english {
			return a.english
		}
		if ai, bi := ascii(a.spelled), ascii(b.spelled); ai != bi {
			return bi // PRÜFEN before PRUEFEN
		}
		return a.spelled < b.spelled
	})
	return out
})

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// verbWords are the folded words of every verb and phrase: a word that is
// one of them is no misspelling of another.
var verbWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, v := range nearVerbs() {
		for _, w := range v.words {
			m[w] = true
		}
	}
	for _, vs := range verbs {
		for _, v := range vs {
			for _, w := range strings.Fields(string(v)) {
				m[w] = true
			}
		}
	}
	return m
})

// nearStop are words one edit away from a verb that people write, alone
// or before a name, in capitals for emphasis as much as in lower case:
// "DONE.", "LOOK!", "NOTE: Bob", "VOTED Bob yesterday". They are never
// taken for a misspelt verb.
var nearStop = map[string]bool{
	"NOTE": true, "NOTED": true, "VOTED": true, "VOTES": true, "VOTER": true, "DONE": true, "NONE": true, "GONE": true, "TONE": true,
	"LOOK": true, "LUCK": true, "LACK": true, "ROCK": true, "CLOCK": true, "BLOCK": true,
	"HELL": true, "HELD": true, "WILL": true, "BILL": true, "TILL": true,
	"MAIN": true, "EMAIL": true, "FAIL": true, "MALL": true, "STAR": true, "STARS": true, "STAT": true,
	"STATS": true, "SMART": true, "STARE": true, "CAUSE": true, "CHOSE": true, "LOSE": true, "CLOSED": true,
	"CLOSER": true, "SHOT": true, "SHORT": true, "SHOUT": true, "TALL": true, "ALLY": true, "RALLY": true,
	"PAST": true, "MASS": true, "DELAY": true, "RELAX": true, "RELY": true, "GRAND": true, "GIANT": true,
	"EXTENT": true, "PROJECT": true, "PROTEST": true, "INSECT": true, "EJECT": true, "COIN": true,
	"JOINT": true, "JOHN": true, "DENNY": true,
}

// playerHomes and refereeHomes are where the line to send of a near miss
// written to a set may belong: a player's near miss is one of the
// player's own commands, the referee's one of the referee's.
var (
	playerHomes  = map[Set]bool{Thread: true, Private: true, Mafia: true}
	refereeHomes = map[Set]bool{Referee: true}
	everyHome    = map[Set]bool{Thread: true, Private: true, Mafia: true, Referee: true, Signup: true, Host: true}
)

func authorSets(set Set) map[Set]bool {
	switch set {
	case Thread, Private, Mafia:
		return playerHomes
	case Referee:
		return refereeHomes
	}
	return nil
}

// near is a near miss found in a line, with the line to send.
type near struct {
	NearMiss
	send string
}

// Error is the sentence that says what became of the line.
func (n near) Error() *phrase.Error {
	if n.Sentence {
		return phrase.Errorf("this line was read as discussion, so nothing in it was done: %s counts only at the start of a line of its own", n.Verb)
	}
	return phrase.Errorf(`"%s" is no command word, so this line was neither done nor passed on; it looks like %s`, n.Typed, n.Verb)
}

// findNearMiss reports whether line, which is no command of set nor of
// another set, nor a look-alike, is a near miss.
func findNearMiss(line string, set Set) (near, bool) {
	allowed := authorSets(set)
	if allowed == nil {
		return near{}, false
	}
	s := clean(withoutInvisible(strings.TrimSpace(line), maxPhraseWords))
	if s == "" || strings.HasSuffix(s, ":") {
		return near{}, false
	}
	if !strings.ContainsAny(s, "?¿") {
		if n, ok := findTypo(s, allowed); ok {
			return n, true
		}
	}
	return findSentence(s, set, allowed)
}

// findTypo reads a line that starts with a misspelt verb.
func findTypo(s string, allowed map[Set]bool) (near, bool) {
	fields := strings.Fields(s)
	// Each of the first words once, folded: every line is compared with
	// every verb.
	n := min(len(fields), maxPhraseWords)
	folded, runes := make([]string, n), make([][]rune, n)
	for i := range folded {
		folded[i] = foldWord(fields[i])
	}
	for _, v := range nearVerbs() {
		n := len(v.words)
		if n > len(folded) {
			continue
		}
		k := -1 // the one word of the phrase that is misspelt
		for i, w := range v.words {
			if folded[i] == w {
				continue
			}
			if d := len(folded[i]) - len(w); k >= 0 || d < -2 || d > 2 {
				// Two words wrong, or one too long or short to be
				// one slip of the other (in bytes: an accent folded
				// away may leave two).
				k = -2
				break
			}
			k = i
		}
		if k < 0 {
			continue
		}
		if runes[k] == nil {
			runes[k] = []rune(folded[k])
		}
		e, ok := oneEdit(runes[k], v.runes[k])
		if !ok || !misspelt(wordCore(fields[k]), folded[k], e, v, k) {
			continue
		}
		typedPhrase := strings.Join(fields[:n], " ")
		cmd, homes := readsAs(strings.TrimSpace(v.spelled+afterFields(s, n)), allowed)
		if len(homes) == 0 || !argumentLike(cmd, typedPhrase) {
			continue
		}
		// The line to send leaves out a note and closing punctuation, where
		// it still reads as the same command without them; else it is the
		// line as it was read.
		send := withoutNote(v.spelled, cmd)
		if again, hs := readsAs(send, allowed); len(hs) == 0 || again.Verb != cmd.Verb {
			send = cmd.Raw
		}
		return near{NearMiss: NearMiss{Typed: wordCore(typedPhrase), Verb: v.spelled, Command: cmd.Verb,
			Target: cmd.Target, Homes: homes}, send: send}, true
	}
	return near{}, false
}

// misspelt reports whether typed, folded as folded, one slip e away from
// the word k of the verb v, is a misspelling of it (see the top of this
// file). A word of a phrase whose other words are written right may be a
// shorter one: "STIMME FRÜ".
func misspelt(typed, folded string, e edit, v nearVerb, k int) bool {
	short := 4
	if len(v.words) > 1 {
		short = 3
	}
	want := len(v.runes[k])
	if want < short || nearStop[folded] || verbWords()[folded] {
		return false
	}
	for _, r := range typed {
		if !unicode.IsLetter(r) && r != '\'' {
			return false
		}
	}
	if capitals(typed) {
		return true
	}
	switch e {
	case swapped, doubled:
		return true
	case dropped, undoubled:
		return v.english && want >= 6
	}
	return false
}

// capitals reports whether word is written in capitals: at least two
// letters, none of them lower case.
func capitals(word string) bool {
	n := 0
	for _, r := range word {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n >= 2
}

// edit is the kind of a one-letter slip.
type edit int

const (
	changed   edit = iota // a letter for another: VITE
	swapped               // two letters side by side swapped: VOET
	added                 // a letter too many: VOTEE
	doubled               // a letter typed twice: VOOTE
	dropped               // a letter left out: INSPCT
	undoubled             // a double letter typed once: MODKIL
)

// oneEdit reports whether typed is one slip away from want, and which.
func oneEdit(typed, want []rune) (edit, bool) {
	i := 0
	for i < len(typed) && i < len(want) && typed[i] == want[i] {
		i++
	}
	switch len(typed) - len(want) {
	case 0:
		if i == len(typed) {
			return 0, false // the same word
		}
		if slices.Equal(typed[i+1:], want[i+1:]) {
			return changed, true
		}
		if i+1 < len(typed) && typed[i] == want[i+1] && typed[i+1] == want[i] && slices.Equal(typed[i+2:], want[i+2:]) {
			return swapped, true
		}
	case 1:
		if !slices.Equal(typed[i+1:], want[i:]) {
			return 0, false
		}
		if (i > 0 && typed[i] == typed[i-1]) || (i+1 < len(typed) && typed[i] == typed[i+1]) {
			return doubled, true
		}
		return added, true
	case -1:
		if !slices.Equal(typed[i:], want[i+1:]) {
			return 0, false
		}
		if (i > 0 && want[i] == want[i-1]) || (i+1 < len(want) && want[i] == want[i+1]) {
			return undoubled, true
		}
		return dropped, true
	}
	return 0, false
}

// readsAs is the command line reads as in the sets allowed, and those
// sets, in the order of homes. Only a command read without an error and
// without words after it that are no part of it counts.
func readsAs(line string, allowed map[Set]bool) (Command, []Set) {
	var first Command
	var out []Set
	for _, h := range homes {
		if !allowed[h] {
			continue
		}
		cmd, ok, err := ParseLine(line, h)
		if !ok || err != nil || !commandLike(cmd) {
			continue
		}
		if len(out) == 0 {
			first = cmd
		}
		if cmd.Verb == first.Verb {
			out = append(out, h)
		}
	}
	return first, out
}

// takesName are the verbs whose argument is a player's name.
var takesName = map[Verb]bool{Vote: true, Kill: true, Inspect: true, Protect: true, Shoot: true, Modkill: true}

// argumentLike reports whether what follows a misspelt verb reads as its
// argument (see the top of this file).
func argumentLike(c Command, typed string) bool {
	switch {
	case c.Voter != "":
		return false
	case c.Verb == Vote && c.Target == NullTarget:
		return true
	case takesName[c.Verb]:
		return nameLike(typed, c.Target)
	case c.Verb == Join:
		return nameLike(typed, c.Name)
	case c.Verb == Replace:
		return nameLike(typed, c.Target)
	}
	return true
}

// withoutNote is the line to send for a command read from a near miss,
// whose verb the line spells as spelled: the line as read, or, where
// words after the command are no part of it, the verb and the argument.
func withoutNote(spelled string, c Command) string {
	switch {
	case c.Note == "":
		return strings.TrimRight(c.Raw, ".!;, ")
	case c.Target == NullTarget:
		if NormalizeName(spelled) == NormalizeName(string(Vote)) {
			return spelled + " NULL"
		}
		return spelled // VOTE NULL as a language says it (LEERSTIMME)
	case c.Target != "":
		return spelled + " " + c.Target
	}
	return spelled
}

// wordCore is a word or words without the punctuation around them.
func wordCore(w string) string {
	w = strings.TrimLeft(w, "¡¿*_\"'«“(")
	return strings.TrimRight(w, `.,;:!*_"'»”)`)
}

// A command inside a sentence: after a sentence of its own, or said.

// sentenceStarts are the offsets in s where a sentence or a clause
// begins: 0, and after ". ", "! ", "? ", "; ", ", ", ": ", "… " and a
// dash between spaces.
func sentenceStarts(s string) []int {
	starts := []int{0}
	for i, r := range s {
		switch r {
		case '.', '!', '?', ';', ',', ':', '…', '-', '–', '—':
		default:
			continue
		}
		j := i + utf8.RuneLen(r)
		if j >= len(s) || (s[j] != ' ' && s[j] != '\t') {
			continue
		}
		if (r == '-' || r == '–' || r == '—') && (i == 0 || s[i-1] != ' ') {
			continue
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) {
			starts = append(starts, j)
		}
	}
	return starts
}

// findSentence reads a line that holds a command inside a sentence.
func findSentence(s string, set Set, allowed map[Set]bool) (near, bool) {
	starts := sentenceStarts(s)
	for _, at := range starts[1:] {
		if strings.HasSuffix(strings.TrimRight(s[:at], " \t"), ":") {
			// "…all done: VOTE Erin." says what a command did.
			continue
		}
		if first, _, _ := strings.Cut(s[at:], " "); !capitals(wordCore(first)) {
			continue
		}
		if capitalVerbs(s) > 1 {
			// "STATUS for your position, TALLY, EXTEND, HELP": a list
			// of commands, not one.
			break
		}
		n, ok := commandAfter(s[at:], allowed)
		if ok && set == Mafia && !slices.Contains(n.Homes, Mafia) {
			// The mafia list talks of the day's votes: only its own
			// commands are asked about there.
			ok = false
		}
		if ok {
			return n, true
		}
	}
	if set != Thread && set != Private {
		return near{}, false
	}
	lower := s == strings.ToLower(s)
	for _, at := range starts {
		if n, ok := voteSaid(s[at:], lower, allowed); ok {
			return n, true
		}
	}
	return near{}, false
}

// commandAfter reads a command written as a sentence after the first,
// with its verb in capitals: "…not on the tally. VOTE Mallory".
func commandAfter(rest string, allowed map[Set]bool) (near, bool) {
	first, _, _ := strings.Cut(rest, " ")
	if !capitals(wordCore(first)) || strings.ContainsAny(rest, "?¿") {
		return near{}, false
	}
	cmd, homes := readsAs(rest, allowed)
	if len(homes) == 0 || !hasArgument(cmd) {
		return near{}, false
	}
	arg := strings.TrimSpace(afterVerb(rest, cmd))
	typed := strings.TrimSpace(strings.TrimSuffix(rest, arg))
	spelled := strings.ToUpper(wordCore(typed))
	found := near{NearMiss: NearMiss{Sentence: true, Typed: wordCore(typed), Verb: spelled, Command: cmd.Verb,
		Target: cmd.Target, Homes: homes}}
	if !takesName[cmd.Verb] || cmd.Target == NullTarget {
		if cmd.Note != "" || !argumentLike(cmd, typed) {
			return near{}, false
		}
		found.send = strings.TrimRight(rest, ".!;, ")
		return found, true
	}
	words := strings.Fields(arg)
	if cmd.Verb == Vote && len(words) > 1 && votePrepositions[foldWord(words[0])] {
		words = words[1:]
	}
	name, ok := sentenceName(strings.Join(words, " "), false)
	if !ok {
		return near{}, false
	}
	found.send = spelled + " " + name
	c, hs := readsAs(found.send, allowed)
	if len(hs) == 0 {
		return near{}, false
	}
	found.Target, found.Homes = c.Target, hs
	return found, true
}

// hasArgument reports whether c carries what its verb acts on: a name,
// a length, a value. A verb alone at the end of a sentence ("… the host
// reads it. HELP") is most often the start of the next one, cut where
// the mail was wrapped.
func hasArgument(c Command) bool {
	return c.Target != "" || c.Name != "" || c.Address != "" || c.Text != "" || c.Duration != 0 || c.Held != 0
}

// capitalVerbs counts the verbs of s written in capitals: runs of words
// of verbs ("STIMME FÜR" is one).
func capitalVerbs(s string) int {
	n, in := 0, false
	for _, f := range strings.Fields(s) {
		w := wordCore(f)
		verb := capitals(w) && verbWords()[lang.FoldVerb(w)]
		if verb && !in {
			n++
		}
		in = verb && w == f
	}
	return n
}

// afterVerb is what follows the verb of a line read as c: the line
// without as many words as the verb has, English's or a language's.
func afterVerb(line string, c Command) string {
	fields := strings.Fields(line)
	for _, v := range nearVerbs() {
		if len(v.words) > len(fields) {
			continue
		}
		same := true
		for i, w := range v.words {
			if foldWord(fields[i]) != w {
				same = false
				break
			}
		}
		if same {
			return afterFields(line, len(v.words))
		}
	}
	return afterFields(line, len(strings.Fields(string(c.Verb))))
}

// voteStatement is a way to say one's vote in a sentence, in folded
// words, and the verb of the line to send for it in that language.
type voteStatement struct {
	words []string
	send  string
}

// voteStatements are the first-person ways to say a vote, longest first.
var voteStatements = func() []voteStatement {
	var out []voteStatement
	for send, ways := range map[string][]string{
		"VOTE": {"I VOTE", "I'M VOTING", "IM VOTING", "I AM VOTING", "I'LL VOTE", "I WILL VOTE",
			"I'M GOING TO VOTE", "MY VOTE IS", "MY VOTE GOES TO", "MY VOTE'S", "MY VOTE", "VOTING"},
		"STIMME FÜR": {"ICH STIMME FUR", "ICH STIMME FUER", "MEINE STIMME GEHT AN", "MEINE STIMME GEHT AUF",
			"MEINE STIMME BEKOMMT", "MEINE STIMME GILT", "MEINE STIMME"},
		"VOTER POUR": {"JE VOTE POUR", "JE VOTE CONTRE", "JE VOTE", "MON VOTE VA A", "MON VOTE VA POUR",
			"MON VOTE VA CONTRE", "MON VOTE EST POUR", "MON VOTE EST CONTRE", "MON VOTE EST", "MON VOTE"},
		"VOTO POR": {"YO VOTO POR", "YO VOTO A", "YO VOTO", "MI VOTO ES PARA", "MI VOTO VA PARA", "MI VOTO VA A",
			"MI VOTO ES", "MI VOTO PARA", "MI VOTO"},
	} {
		for _, w := range ways {
			out = append(out, voteStatement{words: strings.Fields(w), send: send})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].words) != len(out[j].words) {
			return len(out[i].words) > len(out[j].words)
		}
		return strings.Join(out[i].words, " ") < strings.Join(out[j].words, " ")
	})
	return out
}()

// voteStarts are the first words of voteStatements: a sentence that
// starts with none of them says no vote.
var voteStarts = func() map[string]bool {
	m := map[string]bool{}
	for _, vs := range voteStatements {
		m[vs.words[0]] = true
	}
	return m
}()

// votePrepositions may stand between a vote said and the name.
var votePrepositions = map[string]bool{"FOR": true, "ON": true, "FUR": true, "FUER": true, "AN": true,
	"AUF": true, "POUR": true, "CONTRE": true, "POR": true, "PARA": true, "A": true}

// voteSaid reads a vote said in the first person at the start of rest:
// "I vote Mallory too.", "my vote: Mallory", "Je vote pour Bob, il ment".
func voteSaid(rest string, lower bool, allowed map[Set]bool) (near, bool) {
	if first, _, _ := strings.Cut(rest, " "); !voteStarts[foldWord(first)] {
		return near{}, false
	}
	if end := strings.IndexAny(rest, ".!?"); end >= 0 && rest[end] == '?' {
		return near{}, false
	}
	fields := strings.Fields(rest)
	var words []string // the folded fields, words only (French "vote :")
	var at []int       // each one's field
	for i, f := range fields {
		if w := foldWord(f); w != "" {
			words, at = append(words, w), append(at, i)
		}
	}
	for _, vs := range voteStatements {
		if len(vs.words) >= len(words) {
			continue
		}
		same := true
		for i, w := range vs.words {
			if words[i] != w {
				same = false
				break
			}
		}
		if !same {
			continue
		}
		next := at[len(vs.words)-1] + 1
		typed := strings.Join(fields[:next], " ")
		after := fields[next:]
		for len(after) > 1 && foldWord(after[0]) == "" {
			after = after[1:] // "Mon vote : Bob"
		}
		if len(after) > 1 && votePrepositions[foldWord(after[0])] {
			after = after[1:]
		}
		name, ok := sentenceName(strings.Join(after, " "), lower)
		if !ok {
			return near{}, false
		}
		send := vs.send + " " + name
		cmd, homes := readsAs(send, allowed)
		if len(homes) == 0 || cmd.Verb != Vote {
			return near{}, false
		}
		return near{NearMiss: NearMiss{Sentence: true, Typed: wordCore(typed), Verb: vs.send, Command: Vote,
			Target: cmd.Target, Homes: homes}, send: send}, true
	}
	return near{}, false
}

// afterName are the words that may follow a name in a sentence that says
// a command without making it something else: "too", "please", and those
// that start a reason ("because"), folded.
var afterName = map[string]bool{
	"TOO": true, "ALSO": true, "AGAIN": true, "NOW": true, "THEN": true, "PLEASE": true, "PLS": true, "PLZ": true,
	"TODAY": true, "INSTEAD": true, "ANYWAY": true, "TBH": true, "IMO": true, "AS": true, "FOR": true,
	"BECAUSE": true, "SINCE": true, "CAUSE": true, "'CAUSE": true, "COS": true, "CUZ": true, "BC": true,
	"AUCH": true, "BITTE": true, "JETZT": true, "DANN": true, "HEUTE": true, "NOCHMAL": true, "WIEDER": true,
	"ERSTMAL": true, "WEIL": true, "DA": true, "DENN": true,
	"AUSSI": true, "SVP": true, "STP": true, "MAINTENANT": true, "ALORS": true, "AUJOURD'HUI": true,
	"EGALEMENT": true, "ENCORE": true, "DONC": true, "CAR": true, "PARCE": true, "PUISQUE": true,
	"TAMBIEN": true, "AHORA": true, "ENTONCES": true, "HOY": true, "OTRA": true, "YA": true, "PORQUE": true,
	"PUES": true, "POR": true,
}

// sentenceName reads the name at the start of rest, a sentence's words
// after a verb: one word, or two each capitalized ("Mary Ann"), followed
// by nothing, by punctuation that ends the clause, or by a word of
// afterName. lower is set where the author writes all in lower case
// ("i vote mallory"): then any one word is the name.
func sentenceName(rest string, lower bool) (string, bool) {
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", false
	}
	clauseEnds := func(f string) bool {
		return strings.TrimRight(f, `.,;:!)"'»”`) != f
	}
	name := trimPunct(fields[0])
	if name == "" || !startsName(name, lower) || afterName[lang.FoldVerb(name)] {
		return "", false
	}
	last, next := fields[0], 1
	if !lower && !clauseEnds(fields[0]) && len(fields) > 1 {
		if second := trimPunct(fields[1]); startsName(second, false) && !afterName[lang.FoldVerb(second)] {
			name += " " + second
			last, next = fields[1], 2
		}
	}
	switch {
	case next == len(fields):
	case clauseEnds(last), strings.IndexAny(fields[next], "-–—(") == 0:
		// A clause of its own, unless it makes the vote depend on
		// something: "I vote Bob, if nobody claims".
		k := next
		if strings.Trim(fields[k], "-–—(") == "" && k+1 < len(fields) {
			k++
		}
		if conditions[foldWord(strings.TrimLeft(fields[k], "-–—("))] {
			return "", false
		}
	case afterName[foldWord(fields[next])]:
	default:
		return "", false
	}
	return name, true
}

// conditions are the words that make a clause a condition, folded: a
// vote said with one is no vote yet.
var conditions = map[string]bool{
	"IF": true, "UNLESS": true, "WHEN": true, "ONCE": true, "UNTIL": true, "TOMORROW": true, "MAYBE": true,
	"WENN": true, "FALLS": true, "SOBALD": true, "SOFERN": true, "AUSSER": true, "MORGEN": true, "VIELLEICHT": true,
	"SI": true, "SAUF": true, "QUAND": true, "LORSQUE": true, "DEMAIN": true, "PEUT-ETRE": true,
	"CUANDO": true, "SALVO": true, "MANANA": true, "QUIZAS": true, "QUIZA": true,
}

// startsName reports whether w may start a name: a capital or a digit,
// or, where the author writes in lower case, any letter.
func startsName(w string, lower bool) bool {
	r, _ := utf8.DecodeRuneInString(w)
	if lower {
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return unicode.IsUpper(r) || unicode.IsDigit(r)
}
