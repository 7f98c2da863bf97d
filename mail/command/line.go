package command

import (
	"fmt"
	"mime"
	"net/mail"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/emersion/go-message/charset"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/address"
)

// verbs lists the verbs each set understands (docs/design.md "Commands"). HELP and
// TALLY are added to the referee's channel because a referee asks for them as
// often as any player does.
var verbs = map[Set][]Verb{
	Thread:  {Vote, Unvote, Lock, Unlock, Extend, Tally, Help},
	Private: {Kill, NoKill, Inspect, Protect, Shoot, Pass, Status, Tally, Extend, Join, Zone, Mail, Calendar, Language, Help},
	Mafia:   {Kill, NoKill, Help},
	Referee: {Add, Setup, Start, Close, Extend, Deadline, Grant, Deny, WeekendClose, Replace,
		Modkill, Suspend, Relay, Reject, Admit, Pause, Resume, Announce, Status, End, Tally, Help},
	Host:   {Help, NewGame},
	Signup: {Join, Help},
}

var inSet = func() map[Set]map[Verb]bool {
	m := make(map[Set]map[Verb]bool, len(verbs))
	for s, vs := range verbs {
		m[s] = make(map[Verb]bool, len(vs))
		for _, v := range vs {
			m[s][v] = true
		}
	}
	return m
}()

// Verbs returns the verbs set understands, in the order docs/design.md lists them.
func Verbs(set Set) []Verb { return append([]Verb(nil), verbs[set]...) }

// chatty sets are where people write prose: a line such as "Lock in your
// votes, folks" is discussion there, not a malformed LOCK.
func chatty(set Set) bool { return set == Thread || set == Mafia }

// parseEnglish reads one line by the English verbs alone; ParseLine
// tries the languages' verbs after it.
func parseEnglish(line string, set Set) (cmd Command, ok bool, err error) {
	raw := strings.TrimSpace(line)
	s := clean(raw)
	if s == "" || inSet[set] == nil {
		return Command{}, false, nil
	}
	cmd.Raw = raw

	word, rest := firstWord(s)
	verb, rest := lookupVerb(word, rest)
	if verb == "" || !inSet[set][verb] {
		if set == Thread && strings.Contains(s, ">>") {
			return arrowVote(cmd, s)
		}
		return Command{}, false, nil
	}
	cmd.Verb = verb

	switch verb {
	case Vote:
		if rest == "" || trimPunct(rest) == "" {
			return cmd, true, phrase.Errorf("VOTE needs a name: write VOTE Name, or VOTE NULL to hold a placeholder vote")
		}
		if strings.Contains(rest, ">>") {
			return cmd, true, phrase.Errorf("write either VOTE Name or Voter >> Target, not both on one line")
		}
		// "VOTE for Alice" is how many people say it, and "VOTE für
		// Alice", "VOTE pour Alice", "VOTE por Alice" how German, French
		// and Spanish players mix the English verb with their own words.
		for _, prep := range []string{"for ", "für ", "fuer ", "pour ", "por "} {
			if r, found := cutPrefixFold(rest, prep); found && strings.TrimSpace(r) != "" {
				rest = strings.TrimSpace(r)
				break
			}
		}
		cmd.Target, cmd.Note = splitTarget(rest)
		if cmd.Target == "" {
			return cmd, true, phrase.Errorf("VOTE needs a name: write VOTE Name, or VOTE NULL to hold a placeholder vote")
		}
		if NormalizeName(cmd.Target) == NullTarget {
			cmd.Target = NullTarget
		}
		return cmd, true, nil

	case Kill, Inspect, Protect, Shoot, Modkill:
		cmd.Target, cmd.Note = splitTarget(rest)
		if cmd.Target == "" {
			return cmd, true, phrase.Errorf("%s needs a name: write %s Name", verb, verb)
		}
		return cmd, true, nil

	case NoKill, Unvote, Unlock:
		// Distinctive enough that words after them are a remark, not prose.
		cmd.Note = trimPunct(rest)
		return cmd, true, nil

	case Calendar:
		// CALENDAR alone asks whether the deadlines come as calendar events.
		cmd.Text = strings.ToUpper(trimPunct(rest))
		if cmd.Text != "" && cmd.Text != "ON" && cmd.Text != "OFF" {
			return cmd, true, phrase.Errorf("CALENDAR takes ON (each vote's deadline as a calendar event) or OFF, or nothing to see which you have")
		}
		return cmd, true, nil

	case Mail:
		// MAIL alone asks which way the thread comes.
		cmd.Text = strings.ToUpper(trimPunct(rest))
		if cmd.Text != "" && cmd.Text != "DIGEST" && cmd.Text != "EACH" {
			return cmd, true, phrase.Errorf("MAIL takes DIGEST (the thread gathered every few hours) or EACH (every post as it comes), or nothing to see which you have")
		}
		return cmd, true, nil

	case Zone:
		// The zone is the engine's to read; ZONE alone asks for it.
		cmd.Text = trimPunct(rest)
		if strings.ContainsAny(cmd.Text, " \t") {
			return cmd, true, phrase.Errorf("ZONE takes one zone: write ZONE Europe/Berlin, or ZONE alone to see yours")
		}
		return cmd, true, nil

	case Language:
		// The language is the host's to read; LANGUAGE alone lists them.
		cmd.Text = trimPunct(rest)
		if strings.ContainsAny(cmd.Text, " \t") {
			return cmd, true, phrase.Errorf("LANGUAGE takes one language: write LANGUAGE de, or LANGUAGE alone to see them all")
		}
		return cmd, true, nil

	case Join:
		name, err := signupName(rest)
		if err != nil {
			return cmd, true, phrase.Errorf("JOIN needs the name you want to play under: write JOIN Name (%w)", err)
		}
		cmd.Name = name
		return cmd, true, nil

	case Add:
		i := strings.LastIndexFunc(rest, unicode.IsSpace)
		if i < 0 || !strings.Contains(rest[i:], "@") {
			return cmd, true, phrase.Errorf("ADD needs a name and an address: write ADD Name address")
		}
		addr, err := parseAddress(rest[i+1:])
		if err != nil {
			return cmd, true, phrase.Errorf("ADD: %w", err)
		}
		name, err := signupName(strings.TrimRight(rest[:i], " ,;:"))
		if err != nil {
			return cmd, true, phrase.Errorf("ADD needs a name and an address: write ADD Name address (%w)", err)
		}
		cmd.Name, cmd.Address = name, addr
		return cmd, true, nil

	case Replace:
		i := lastIndexFold(rest, " with ")
		if i < 0 {
			return cmd, true, phrase.Errorf("REPLACE needs a player and an address: write REPLACE Name WITH address")
		}
		cmd.Target, _ = splitTarget(rest[:i])
		addr, err := parseAddress(rest[i+len(" with "):])
		if cmd.Target == "" || err != nil {
			return cmd, true, phrase.Errorf("REPLACE needs a player and an address: write REPLACE Name WITH address")
		}
		cmd.Address = addr
		return cmd, true, nil

	case Suspend, Admit:
		addr, err := parseAddress(rest)
		if err != nil {
			return cmd, true, phrase.Errorf("%s needs an address: write %s address", verb, verb)
		}
		cmd.Address = addr
		return cmd, true, nil

	case Setup:
		if rest == "" {
			return cmd, true, phrase.Errorf("SETUP needs a setup: write SETUP classic, SETUP mafia150, or counts and options such as SETUP players=11 mafia=3 inspectors=1")
		}
		cmd.Text = rest
		return cmd, true, nil

	case Deadline:
		// The time itself is read by the engine, in the game's zone (D8).
		// Even a missing one is the engine's to refuse: only it knows the
		// game's zone and clock, which the examples of how to write a
		// time are given in.
		cmd.Text = strings.TrimSpace(rest)
		if trimPunct(cmd.Text) == "" {
			cmd.Text = ""
		}
		return cmd, true, nil

	case Extend:
		return lengthArg(cmd, rest, set, set == Referee)

	case Grant:
		return lengthArg(cmd, rest, set, false)

	case Relay, Reject:
		return heldArg(cmd, rest)

	case Announce:
		cmd.Text = rest
		return cmd, true, nil

	case NewGame:
		name := strings.ToLower(trimPunct(rest))
		if !engine.ValidGameID(name) {
			return cmd, true, phrase.Errorf("NEW GAME needs the game's name, 2 to 20 letters and digits: write NEW GAME name")
		}
		cmd.Name = name
		return cmd, true, nil
	}

	// HELP RULES asks for the rules themselves; HELP alone for the commands.
	if verb == Help && strings.EqualFold(trimPunct(rest), "rules") {
		cmd.Text = HelpRules
		return cmd, true, nil
	}

	// The verbs that take nothing: LOCK, TALLY, HELP, STATUS, PASS, START, …
	if trimPunct(rest) == "" {
		return cmd, true, nil
	}
	if chatty(set) {
		return Command{}, false, nil
	}
	return cmd, true, phrase.Errorf("%s takes nothing after it: write %s alone on its line", verb, verb)
}

// arrowVote reads "Voter >> Target" (seed 3b).
func arrowVote(cmd Command, s string) (Command, bool, error) {
	cmd.Verb = Vote
	voter, target, _ := strings.Cut(s, ">>")
	voter = trimPunct(voter)
	if strings.Contains(target, ">>") {
		return cmd, true, phrase.Errorf("write one vote per line: Voter >> Target")
	}
	cmd.Target, cmd.Note = splitTarget(target)
	if voter == "" || cmd.Target == "" {
		return cmd, true, phrase.Errorf("write a vote as Voter >> Target, with your own name on the left")
	}
	cmd.Voter = voter
	if NormalizeName(cmd.Target) == NullTarget {
		cmd.Target = NullTarget
	}
	return cmd, true, nil
}

// lengthArg reads the optional (or, for the referee's EXTEND, required)
// length of EXTEND and GRANT.
func lengthArg(cmd Command, rest string, set Set, required bool) (Command, bool, error) {
	rest = trimPunct(rest)
	if rest == "" {
		if required {
			return cmd, true, phrase.Errorf("%s needs a length: write %s 12h", cmd.Verb, cmd.Verb)
		}
		return cmd, true, nil
	}
	d, err := parseLength(rest)
	if err == nil {
		cmd.Duration = d
		return cmd, true, nil
	}
	if chatty(set) {
		return Command{}, false, nil
	}
	return cmd, true, phrase.Errorf("%s: %w", cmd.Verb, err)
}

// heldArg reads the number of a held post: RELAY n, REJECT n [SUSPEND].
func heldArg(cmd Command, rest string) (Command, bool, error) {
	f := strings.Fields(rest)
	if cmd.Verb == Reject && len(f) == 2 && strings.EqualFold(trimPunct(f[1]), "suspend") {
		cmd.Suspend = true
		f = f[:1]
	}
	usage := fmt.Sprintf("%s needs the number of a held post: write %s n", cmd.Verb, cmd.Verb)
	if cmd.Verb == Reject {
		usage += " or REJECT n SUSPEND"
	}
	if len(f) != 1 {
		return cmd, true, phrase.Errorf(usage)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(trimPunct(f[0]), "#"))
	if err != nil || n <= 0 {
		return cmd, true, phrase.Errorf(usage)
	}
	cmd.Held = n
	return cmd, true, nil
}

// nameDecoder reads encoded words (RFC 2047) in a name, in any charset
// go-message knows.
var nameDecoder = &mime.WordDecoder{CharsetReader: charset.Reader}

// signupName checks a name someone wants to play under: it must be one a
// tally can show and others can type.
func signupName(s string) (string, error) {
	if strings.Contains(s, "=?") {
		// A name written as MIME encoded words is checked, and kept, as
		// what it shows, not as the code that hides it.
		dec, err := nameDecoder.DecodeHeader(s)
		if err != nil {
			return "", phrase.Errorf("the name is written in an encoding the host cannot read; write it as plain text")
		}
		s = dec
	}
	name := strings.Join(strings.Fields(trimPunct(s)), " ")
	switch {
	case name == "":
		return "", phrase.Errorf("no name given")
	case utf8.RuneCountInString(name) > 30:
		return "", phrase.Errorf("a name may be at most 30 characters long")
	case strings.ContainsAny(name, "@<>"):
		return "", phrase.Errorf("a name may not contain @, < or >")
	case NormalizeName(name) == "":
		return "", phrase.Errorf("a name needs at least one letter or digit")
	case NormalizeName(name) == NullTarget:
		return "", phrase.Errorf("NULL is the placeholder vote and cannot be a name")
	}
	return name, nil
}

// parseAddress reads one bare address, as written in ADD, REPLACE, SUSPEND
// and ADMIT: "bob@example.org" or "<bob@example.org>".
func parseAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimRight(s, ".,;:!?)")
	s = strings.TrimLeft(s, "(")
	if s == "" {
		return "", phrase.Errorf("no address given")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || !strings.Contains(a.Address, "@") {
		return "", phrase.Errorf("%q is not a mail address", s)
	}
	plain, err := address.Parse(a.Address)
	if err != nil {
		return "", phrase.Errorf("%q is not a plain mail address (name@domain, without quotes, spaces or brackets)", a.Address)
	}
	return plain, nil
}

// clean takes away what mail clients and habits put around a command:
// no-break and zero-width spaces, "<mailto:…>" that Outlook adds after an
// address, and *bold*, _italic_, ~strike~ or "##" markers around the line.
func clean(s string) string {
	if strings.IndexFunc(s, oddSpace) >= 0 {
		s = strings.Map(func(r rune) rune {
			switch {
			case zeroWidth(r):
				return -1
			case oddSpace(r):
				return ' '
			}
			return r
		}, s)
	}
	for {
		i := indexFold(s, "<mailto:")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			break
		}
		s = s[:i] + s[i+j+1:]
	}
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == '*' || r == '_' || r == '~' || r == '#'
	})
}

func zeroWidth(r rune) bool {
	return r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff'
}

// invisible reports whether r shows nothing: a zero-width space or joiner,
// a direction mark or override, a soft hyphen, a variation selector, a tag
// (Unicode's format characters and default-ignorable code points). A verb
// reads as it would without them: "VO\u00adTE Dave" is a vote, as its
// reader sees it. In a name they stay, for the engine to refuse (D1).
func invisible(r rune) bool {
	if r < 0xad {
		return false
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

// withoutInvisible drops the invisible characters of the first n words of
// line (and before them), and leaves the rest as it is.
func withoutInvisible(line string, n int) string {
	var b strings.Builder
	words, inWord := 0, false
	for i, r := range line {
		if unicode.IsSpace(r) {
			if inWord {
				words++
				inWord = false
			}
			if words == n {
				b.WriteString(line[i:])
				return b.String()
			}
			b.WriteRune(r)
			continue
		}
		if invisible(r) {
			continue
		}
		inWord = true
		b.WriteRune(r)
	}
	return b.String()
}

func oddSpace(r rune) bool {
	return zeroWidth(r) || (r != ' ' && r > unicode.MaxASCII && unicode.IsSpace(r))
}

// firstWord splits off the leading run of letters. The word must end the
// line or be followed by a space, a colon ("Vote: Alice"), sentence
// punctuation ("Lock!") or a decoration marker; "Voted Alice" or
// "Vote-Alice" has no verb.
func firstWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if i < 0 {
		return s, ""
	}
	if i == 0 {
		return "", s
	}
	switch s[i] {
	case ' ', '\t', ':', '*', '_', '.', '!', '?', ',':
	default:
		return "", s
	}
	return s[:i], trimLead(s[i:])
}

func trimLead(s string) string {
	return strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == ':' || r == '*' || r == '_'
	})
}

// lookupVerb turns the first word (and, for two-word verbs, the second) into
// a verb.
func lookupVerb(word, rest string) (Verb, string) {
	w := strings.ToUpper(word)
	two := map[string]struct {
		second string
		verb   Verb
	}{
		"NO":      {"KILL", NoKill},
		"WEEKEND": {"CLOSE", WeekendClose},
		"NEW":     {"GAME", NewGame},
	}
	if t, ok := two[w]; ok {
		w2, rest2 := firstWord(rest)
		if strings.EqualFold(w2, t.second) {
			return t.verb, rest2
		}
		return "", rest
	}
	switch Verb(w) {
	case Vote, Unvote, Lock, Unlock, Extend, Tally, Help, Status, Kill, Inspect, Protect, Shoot, Pass,
		Add, Setup, Start, Close, Deadline, Grant, Deny, Replace, Modkill, Suspend, Relay, Reject,
		Admit, Pause, Resume, Announce, End, Join, Zone, Mail, Calendar, Language:
		return Verb(w), rest
	case "NOKILL":
		return NoKill, rest
	}
	return "", rest
}

// splitTarget cuts a name off the words after it: "Alice, she lied" is the
// name "Alice" and the note "she lied". Names are compared with punctuation
// ignored (NormalizeName), so trimming it at the edges loses nothing.
func splitTarget(s string) (name, note string) {
	s = strings.TrimSpace(s)
	cut := len(s)
	for _, sep := range []string{",", ";", "(", ":", " - ", " – ", " — ", ". ", "! ", "? "} {
		if i := strings.Index(s, sep); i >= 0 && i < cut {
			cut = i
		}
	}
	name = trimPunct(s[:cut])
	note = strings.TrimLeft(strings.TrimSpace(s[cut:]), ",;:-–— ")
	return name, note
}

// trimPunct trims spaces, decoration and sentence punctuation at both ends.
func trimPunct(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`.,;:!?*_~"'“”‘’«»()[]@`, r)
	})
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// indexFold and lastIndexFold search ASCII needles case-insensitively.
// Lowering only ASCII letters keeps byte offsets valid in any UTF-8 text.
func indexFold(s, sub string) int { return strings.Index(lowerASCII(s), lowerASCII(sub)) }

func lastIndexFold(s, sub string) int { return strings.LastIndex(lowerASCII(s), lowerASCII(sub)) }

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
