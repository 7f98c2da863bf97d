package host

import (
	"strings"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang/phrase"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/inbound"
)

// Answers to unproven mail (inbound.Report.Unproven: to the host's or a
// sign-up address, with no authserv-id to confirm its From) may go to
// someone who never wrote: a forger who puts a victim's address in From
// would have the host mail the victim whatever the forgery said. So such an
// answer goes at most once a day to an address, and it repeats nothing of
// the message beyond the commands' names: no Subject, no line as written.

// maxUnprovenLines is how many lines of a message an answer to unproven
// mail speaks of.
const maxUnprovenLines = 5

// maxUnprovenError is the longest refusal sentence in such an answer: room
// for the host's own explanation with the address where a line belongs,
// little for anything a refusal repeats of the message.
const maxUnprovenError = 320

// quieten makes the answer to unproven mail of no use to a forger, or
// drops it when the address has had its answer today.
func quieten(r inbound.Report, reply *compose.Answer) {
	if r.Quiet {
		reply.Lines = nil
		return
	}
	reply.Subject = ""
	if len(reply.Lines) > maxUnprovenLines {
		reply.Lines = reply.Lines[:maxUnprovenLines]
	}
	for i := range reply.Lines {
		name, label := commandName(reply.Lines[i].Text)
		reply.Lines[i].Text, reply.Lines[i].Label = name, label
		if err := reply.Lines[i].Err; err != nil && utf8.RuneCountInString(err.Error()) > maxUnprovenError {
			reply.Lines[i].Err = shortError{err}
		}
	}
}

// commandName is a line as an answer to unproven mail names it: its verb,
// or "(your message)" for what is none, then with the host's label for it.
func commandName(line string) (string, *phrase.Error) {
	f := strings.Fields(strings.ToUpper(line))
	switch {
	case len(f) == 0:
		return label(phrase.Errorf("(your message)"))
	case f[0] == "NEW" && len(f) > 1 && f[1] == "GAME":
		return "NEW GAME", nil
	case f[0] == "HELP" && len(f) == 2 && strings.Trim(f[1], ".,;:!?") == "RULES":
		// The rules are as public as HELP's own answer.
		return "HELP RULES", nil
	}
	for _, v := range []string{"HELP", "JOIN"} {
		if f[0] == v {
			return v, nil
		}
	}
	return label(phrase.Errorf("(a line of your message)"))
}

func label(p *phrase.Error) (string, *phrase.Error) { return p.Error(), p }

// shortError is a refusal cut to maxUnprovenError characters.
type shortError struct{ err error }

func (e shortError) Error() string {
	r := []rune(e.err.Error())
	return string(r[:maxUnprovenError]) + "…"
}

func (e shortError) Unwrap() error { return e.err }
