package compose

import (
	"strings"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// privateSubject is the subject of a copy in a private channel, less the
// game's tag, when that copy has one of its own; "" keeps the channel's
// (docs/mail.md "Subjects and threads").
//
// The referee's channel carries everything the referee is told and asked,
// and an inbox that shows one subject for all of it cannot be sorted or
// searched: so each mail to the referee says in its subject what it is (a
// sign-up, an answer to the referee's own command, a report) and, first of
// all, whether it waits for the referee, with the commands that answer it.
// A player's role message gets a subject of its own so that it can be
// found again, one that never names the role: a phone's lock screen shows
// subjects to anyone near it. The rest of a player's private channel keeps
// the channel's one subject, which tells nobody anything about the game.
//
// Each mail still references its channel's root, so Thunderbird and mutt
// keep the channel one conversation; Gmail, which also needs the subjects
// to match, shows the referee's mail one by one, which is what an inbox to
// sort by subject is.
func privateSubject(dr draft, l *lang.Language, headline string) string {
	r := dr.d.r
	switch {
	case dr.d.ch != templates.Private || dr.game == "":
		return ""
	case r.referee:
		return refereeSubject(dr, l, headline)
	case r.slot > 0 && dr.main != nil && dr.main.Kind == "role":
		return l.Phrase("Your role — keep it secret")
	}
	return ""
}

// refereeSubject is the subject of a mail to the referee, from its
// sections.
func refereeSubject(dr draft, l *lang.Language, headline string) string {
	// What waits for the referee comes first, whatever else the mail
	// carries: a held post, an extension asked for.
	for _, sec := range dr.sections {
		switch {
		case sec.Kind == "held" && sec.Variant == "referee":
			news := l.Sprintf("Post #%d by %s is held", sec.Held, sec.Name)
			return l.Sprintf("%s — waits for you: RELAY %d or REJECT %d", news, sec.Held, sec.Held)
		case sec.Kind == "extension" && sec.Variant == "referee-asked":
			return l.Sprintf("%s — waits for you: GRANT or DENY", l.Sprintf("%s asks for more time", sec.Name))
		case sec.Kind == "restored" && sec.Restored.Paused:
			return l.Sprintf("%s — waits for you: RESUME", headline)
		}
	}
	main := dr.main
	if main == nil {
		return l.Sprintf("Report: %s", headline)
	}
	switch main.Kind {
	case "reply":
		if main.Reply != nil {
			return answerSubject(main.Reply, l)
		}
	case "joined":
		return l.Sprintf("Sign-up: %s (%d of %d)", main.Name, main.Count, main.Total)
	case "created", "setup", "renamed", "observer":
		return l.Sprintf("Sign-up: %s", headline)
	}
	return l.Sprintf("Report: %s", headline)
}

// answerSubject says what became of the referee's own commands: "Done:
// START", "Refused: CLOSE", or both, the refused first, since they are
// what the referee has to see to.
func answerSubject(a *templates.Answer, l *lang.Language) string {
	var done, refused, pending []string
	for _, ln := range a.Lines {
		switch {
		case ln.Pending:
			pending = append(pending, subjectCommand(ln.Text))
		case ln.Error != "":
			refused = append(refused, subjectCommand(ln.Text))
		default:
			done = append(done, subjectCommand(ln.Text))
		}
	}
	list := func(lines []string) string {
		const most = 3
		if len(lines) > most {
			lines = append(lines[:most:most], "…")
		}
		return strings.Join(lines, ", ")
	}
	switch {
	case len(pending) > 0:
		return l.Sprintf("%s — waits for you: reply to confirm", list(pending))
	case len(refused) == 0:
		return l.Sprintf("Done: %s", list(done))
	case len(done) == 0:
		return l.Sprintf("Refused: %s", list(refused))
	}
	return l.Sprintf("Refused: %s; done: %s", list(refused), list(done))
}

// subjectCommand is a command line as a subject quotes it: on one line,
// and cut short when long (an ANNOUNCE's text, an address).
func subjectCommand(line string) string {
	const most = 40
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) <= most {
		return line
	}
	runes := []rune(line)
	return strings.TrimSpace(string(runes[:most-1])) + "…"
}
