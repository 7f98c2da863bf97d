// Package command reads the commands of a play-by-mail Mafia game out of the
// new text of a message.
//
// The grammar is syntactic: it says which verb a line holds and returns its
// arguments as the sender wrote them. Whether a name belongs to a living
// player, whether the sender may use the verb now, and so on, is for the
// rules engine to decide; NormalizeName is the one piece both sides share so
// that they agree on what "the same name" means.
//
// The verbs are English, and work in every game; the languages of package
// lang add their own (STIMME FÜR, VÉRIFIER, VOTO POR, ...), read after the
// English ones and more strictly, since they are everyday words of their
// players' prose (local.go).
//
// One command per line, case-insensitive. A line that is not a command is
// discussion and is kept, in order, for relaying. A line that starts with a
// verb but cannot be read (VOTE with no name, RELAY with no number, …) is an
// error line with a sentence the sender can act on, never silent discussion.
package command

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/lang/phrase"
)

// Set is the set of verbs that is understood at an address: the thread, a
// player's private channel, the mafia list, the referee's private channel,
// the host's own address and a game's sign-up address each have their own.
type Set string

// The command sets of docs/design.md.
const (
	Thread  Set = "thread"
	Private Set = "private"
	Mafia   Set = "mafia"
	Referee Set = "referee"
	Host    Set = "host"
	Signup  Set = "signup"
)

// Verb is what a command asks for. The spellings are those of docs/design.md and
// of the engine's verbs, so a Command converts field by field.
type Verb string

// Every verb of docs/design.md.
const (
	Vote         Verb = "VOTE" // VOTE Name, VOTE NULL (Target "null"), Voter >> Target
	Unvote       Verb = "UNVOTE"
	Lock         Verb = "LOCK"
	Unlock       Verb = "UNLOCK"
	Extend       Verb = "EXTEND"
	Tally        Verb = "TALLY"
	Help         Verb = "HELP"
	Status       Verb = "STATUS"
	Kill         Verb = "KILL"
	NoKill       Verb = "NO KILL"
	Inspect      Verb = "INSPECT"
	Protect      Verb = "PROTECT"
	Shoot        Verb = "SHOOT"
	Pass         Verb = "PASS"
	Add          Verb = "ADD"
	Setup        Verb = "SETUP"
	Start        Verb = "START"
	Close        Verb = "CLOSE"
	Deadline     Verb = "DEADLINE"
	Grant        Verb = "GRANT"
	Deny         Verb = "DENY"
	WeekendClose Verb = "WEEKEND CLOSE"
	Replace      Verb = "REPLACE"
	Modkill      Verb = "MODKILL"
	Suspend      Verb = "SUSPEND"
	Relay        Verb = "RELAY"
	Reject       Verb = "REJECT"
	Admit        Verb = "ADMIT"
	Pause        Verb = "PAUSE"
	Resume       Verb = "RESUME"
	Announce     Verb = "ANNOUNCE"
	End          Verb = "END"
	NewGame      Verb = "NEW GAME"
	Join         Verb = "JOIN"
	Zone         Verb = "ZONE"     // ZONE alone, or ZONE Europe/Berlin (Text)
	Mail         Verb = "MAIL"     // MAIL alone, MAIL DIGEST or MAIL EACH (Text)
	Calendar     Verb = "CALENDAR" // CALENDAR alone, CALENDAR ON or CALENDAR OFF (Text)
	// LANGUAGE de chooses the language of a player's mail, LANGUAGE alone
	// lists them (Text). It is the host's, as NEW GAME is: the engine
	// does not know languages.
	Language Verb = "LANGUAGE"
)

// NullTarget is the Target of VOTE NULL and of "Voter >> null" (D3).
const NullTarget = "null"

// Command is one command line. Only the fields its verb uses are set:
//
//	VOTE Target | Voter >> Target      Target ("null" for VOTE NULL), Voter
//	KILL/INSPECT/PROTECT/SHOOT/MODKILL Target
//	JOIN Name                          Name
//	ADD Name address                   Name, Address
//	REPLACE Name WITH address          Target, Address
//	SUSPEND/ADMIT address              Address
//	EXTEND 12h, GRANT [12h]            Duration (zero: none given)
//	DEADLINE <time>                    Text (as written; the engine reads it)
//	ZONE/LANGUAGE [value]              Text (as written; the engine or host reads it)
//	RELAY n, REJECT n [SUSPEND]        Held, Suspend
//	SETUP …                            Text
//	ANNOUNCE                           Text (the rest of the message)
//	NEW GAME name                      Name (the game's name, lowercased)
type Command struct {
	Line     int           // 1-based line of the new text
	Raw      string        // the line as written
	Verb     Verb          //
	Target   string        // a player's name as written
	Voter    string        // the left side of "Voter >> Target"
	Name     string        // a sign-up name, or the game of NEW GAME
	Address  string        // a bare address (local@domain)
	Text     string        // SETUP's arguments, DEADLINE as written, ANNOUNCE's text
	Duration time.Duration // EXTEND, GRANT
	Held     int           // RELAY, REJECT
	Suspend  bool          // REJECT n SUSPEND
	Note     string        // words after the command that are not part of it ("VOTE Bob, he lied")
}

// MarshalJSON writes durations and times in a form people can read, for the
// parse report.
func (c Command) MarshalJSON() ([]byte, error) {
	type out struct {
		Line     int    `json:"line"`
		Verb     Verb   `json:"verb"`
		Target   string `json:"target,omitempty"`
		Voter    string `json:"voter,omitempty"`
		Name     string `json:"name,omitempty"`
		Address  string `json:"address,omitempty"`
		Text     string `json:"text,omitempty"`
		Duration string `json:"duration,omitempty"`
		Held     int    `json:"held,omitempty"`
		Suspend  bool   `json:"suspend,omitempty"`
		Note     string `json:"note,omitempty"`
		Raw      string `json:"raw"`
	}
	o := out{
		Line: c.Line, Verb: c.Verb, Target: c.Target, Voter: c.Voter, Name: c.Name,
		Address: c.Address, Text: c.Text, Held: c.Held, Suspend: c.Suspend, Note: c.Note, Raw: c.Raw,
	}
	if c.Duration != 0 {
		o.Duration = c.Duration.String()
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "Alice >> Bob" stays readable
	if err := enc.Encode(o); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// LineError is a line that starts like a command but cannot be read.
type LineError struct {
	Line    int    `json:"line"`
	Text    string `json:"text"`
	Message string `json:"error"`
	// Phrase is Message as its format and arguments, for the answer to
	// word in its reader's language.
	Phrase *phrase.Error `json:"phrase,omitempty"`
	// Send, when set, is the line to send instead: the command the line
	// only looks like (see lookalike and near.go).
	Send string `json:"send,omitempty"`
	// Near, when set, says which command the line looks like, and where
	// the line to send belongs. Near.Sentence marks a line that is
	// discussion too, relayed as any other (near.go).
	Near *NearMiss `json:"near,omitempty"`
}

// Relayed reports whether the line is discussion as well: a sentence with
// a command inside, which its author is asked about.
func (le LineError) Relayed() bool { return le.Near != nil && le.Near.Sentence }

// Misplaced is a line that is a command of the game's grammar, but of
// another address than the one it was sent to: KILL in the town thread, VOTE
// in a private channel, CLOSE anywhere but the referee's channel. It is
// neither applied nor relayed; the host answers where it belongs.
type Misplaced struct {
	Line int    `json:"line"`
	Raw  string `json:"raw"`
	Verb Verb   `json:"verb"`
	// Homes are the sets that understand the line, in the order of Homes.
	Homes []Set `json:"homes"`
}

// homes is the order in which the sets a misplaced line belongs to are
// listed: the player's channels first, then the referee's, then the
// addresses of people who are not in a game yet.
var homes = []Set{Thread, Private, Mafia, Referee, Signup, Host}

// Result is what a message's new text holds.
type Result struct {
	Commands []Command
	Errors   []LineError
	// Misplaced are the command lines that belong to another address.
	Misplaced []Misplaced
	// Discussion is every line that is not a command, in order, with blank
	// lines kept between paragraphs and trimmed at both ends.
	Discussion string
}

// Lines is the number of command lines, read or not: the figure a limit on
// commands per message is checked against. A sentence with a command
// inside is discussion, and no command line.
func (r Result) Lines() int {
	n := len(r.Commands) + len(r.Errors) + len(r.Misplaced)
	for _, e := range r.Errors {
		if e.Relayed() {
			n--
		}
	}
	return n
}

// Parse reads every line of text (the new text of a message, quotes and
// signature already removed) against the verbs of set.
func Parse(text string, set Set) Result {
	var res Result
	var disc []string
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
	for i, line := range lines {
		cmd, ok, err := ParseLine(line, set)
		switch {
		case err != nil:
			res.Errors = append(res.Errors, lineError(i+1, line, err))
		case !ok:
			if m, found := misplaced(line, set); found {
				m.Line = i + 1
				res.Misplaced = append(res.Misplaced, m)
				continue
			}
			if l, found := findLookalike(line, set); found {
				// Neither applied nor relayed: readers would take it
				// for the command it looks like.
				le := lineError(i+1, line, l.Error())
				le.Send = l.Send
				if cmd, hs := readsAs(l.Send, everyHome); len(hs) > 0 {
					le.Near = &NearMiss{Verb: string(cmd.Verb), Command: cmd.Verb, Target: cmd.Target, Homes: hs}
				}
				res.Errors = append(res.Errors, le)
				continue
			}
			if n, found := findNearMiss(line, set); found {
				// Never applied; a misspelt command is not relayed
				// either, while a sentence is discussion all the same.
				le := lineError(i+1, line, n.Error())
				le.Send, le.Near = n.send, &n.NearMiss
				res.Errors = append(res.Errors, le)
				if !n.Sentence {
					continue
				}
			}
			disc = append(disc, strings.TrimRight(line, " \t"))
		case cmd.Verb == Announce:
			// The rest of the message is the announcement, commands and all.
			rest := strings.Join(append([]string{cmd.Text}, lines[i+1:]...), "\n")
			cmd.Text = trimBlankLines(rest)
			if cmd.Text == "" {
				res.Errors = append(res.Errors, lineError(i+1, line,
					phrase.Errorf("ANNOUNCE needs the text to announce, on the same line or on the lines below it")))
			} else {
				cmd.Line = i + 1
				res.Commands = append(res.Commands, cmd)
			}
			res.Discussion = trimBlankLines(strings.Join(disc, "\n"))
			return res
		default:
			cmd.Line = i + 1
			res.Commands = append(res.Commands, cmd)
		}
	}
	res.Discussion = trimBlankLines(strings.Join(disc, "\n"))
	return res
}

// misplaced reports whether a line that set does not take is a command of
// another set: one that reads there without an error. A line that only
// starts with a verb ("Status update: ...", "Start with Bob") stays
// discussion, as it would be in a set that knew the verb.
// lineError is line n's error, with its sentence kept as a phrase.
func lineError(n int, line string, err error) LineError {
	le := LineError{Line: n, Text: strings.TrimSpace(line), Message: err.Error()}
	if p, ok := err.(*phrase.Error); ok {
		le.Phrase = p
	}
	return le
}

func misplaced(line string, set Set) (Misplaced, bool) {
	var m Misplaced
	for _, home := range homes {
		if home == set {
			continue
		}
		cmd, ok, err := ParseLine(line, home)
		if !ok || err != nil {
			continue
		}
		if chatty(set) && !commandLike(cmd) {
			continue
		}
		if home == Private && cmd.Verb == Join {
			// A JOIN in a private channel only renames the player who
			// signed up already; to sign up is the sign-up address's job.
			continue
		}
		if m.Verb == "" {
			m.Raw, m.Verb = cmd.Raw, cmd.Verb
		}
		if cmd.Verb == m.Verb {
			m.Homes = append(m.Homes, home)
		}
	}
	return m, m.Verb != ""
}

// commandLike keeps prose out of the verbs that take free text: in the
// thread, "Setup was odd" is talk, "SETUP classic" is a command.
func commandLike(c Command) bool {
	if c.Verb != Setup {
		return true
	}
	first, _, _ := strings.Cut(strings.TrimSpace(c.Text), " ")
	switch strings.ToLower(first) {
	case "classic", "mafia150":
		return true
	}
	return strings.Contains(c.Text, "=")
}

// trimBlankLines removes blank lines at both ends and folds runs of blank
// lines into one, which is what is left where command lines were taken out.
func trimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := true // drop leading blanks
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// HelpRules is the Text of HELP RULES: the rules as a mail, not the
// commands.
const HelpRules = "RULES"
