package archive

import (
	"fmt"
	"strings"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/story"
	"github.com/mafiamail/mafiamail/templates"
)

// game is what the archive shows of a game.
type game struct {
	id      string
	setup   engine.Setup
	summary string
	// revealed: the game is over and its roles were announced.
	revealed bool
	winner   engine.Side
	reason   string
	history  story.History
	parts    []*part
	// commitment is the draw's commitment, posted at the start; salt,
	// names and roles its proof, once the game is over.
	commitment string
	salt       string
	names      []string
	roles      []engine.Role
}

// part is one round's page of the thread: the sign-up, a day, a night,
// an extra round, the time after the end.
type part struct {
	file, title string
	entries     []entry
}

// entry is one piece of news of the thread.
type entry struct {
	At   string
	Who  string // a post's author
	Text string
	// Post: Text is someone's words.
	Post bool
	// Counts is a closing tally: who had votes, and from whom.
	Counts []count
}

type count struct {
	Name   string
	Votes  int
	Voters string
}

// read folds the log into what the archive shows. Only public events make
// the thread; the game's setup (its zone) is read from the state.
func read(log []engine.Event) (*game, error) {
	if len(log) == 0 {
		return nil, fmt.Errorf("archive: the game's log is empty")
	}
	s := &engine.State{}
	for i, e := range log {
		if err := s.Fold(e); err != nil {
			return nil, fmt.Errorf("archive: fold event %d (%s): %w", i+1, e.Type, err)
		}
	}
	g := &game{id: s.Game, setup: s.Setup, summary: s.Setup.Summary(), history: story.Build(log)}
	g.revealed = g.history.Revealed
	zone := s.GameZone()
	when := func(t time.Time) string { return templates.Moment{T: t, Zone: zone}.String() }
	names := map[int]string{}
	cur := &part{file: "signup.html", title: "Sign-up"}
	g.parts = append(g.parts, cur)
	open := func(file, title string) {
		cur = &part{file: file, title: title}
		g.parts = append(g.parts, cur)
	}
	say := func(e engine.Event, format string, args ...any) {
		cur.entries = append(cur.entries, entry{At: when(e.At), Text: fmt.Sprintf(format, args...)})
	}
	for _, e := range log {
		if e.Type == engine.EvGameEnded && g.revealed {
			g.salt, g.names, g.roles = e.Salt, e.Names, e.Roles
		}
		switch e.Type {
		case engine.EvPlayerJoined, engine.EvPlayerRenamed:
			// The names of the seats, which the thread shows once the
			// game starts; nothing else of these events is read.
			names[e.Slot] = e.Name
		}
		if !e.To.Public {
			continue // what the town thread never showed
		}
		switch e.Type {
		case engine.EvDrawCommitted:
			g.commitment = e.Commitment
			say(e, "The roles were drawn; the draw's commitment is %s.", e.Commitment)
		case engine.EvDayStarted:
			open(fmt.Sprintf("day-%d.html", e.Day), fmt.Sprintf("Day %d", e.Day))
			say(e, "Day %d begins. The vote closes %s.", e.Day, when(e.Deadline))
		case engine.EvRunoffStarted:
			say(e, "A runoff between %s. It closes %s.", templates.List(slotNames(names, e.Candidates)), when(e.Deadline))
		case engine.EvExtraStarted:
			open(fmt.Sprintf("extra-%d.html", e.Day), fmt.Sprintf("After Night %d", e.Day))
			say(e, "The Mafia killed no one: the town votes again. The round closes %s.", when(e.Deadline))
		case engine.EvNightStarted:
			open(fmt.Sprintf("night-%d.html", e.Day), fmt.Sprintf("Night %d", e.Day))
			say(e, "Night %d falls. It ends %s at the latest.", e.Day, when(e.Deadline))
		case engine.EvVoted:
			if e.Null {
				say(e, "%s votes for no elimination.", e.Name)
			} else {
				say(e, "%s votes %s.", e.Name, names[e.Target])
			}
		case engine.EvUnvoted:
			say(e, "%s takes back their vote.", e.Name)
		case engine.EvLocked:
			say(e, "%s locks their vote.", e.Name)
		case engine.EvUnlocked:
			say(e, "%s unlocks their vote.", e.Name)
		case engine.EvMissedVote:
			say(e, "%s missed a vote (%d so far).", e.Name, e.Count)
		case engine.EvExtended, engine.EvDeadlineSet:
			say(e, "The deadline is now %s.", when(e.Deadline))
		case engine.EvTieExtended:
			say(e, "The vote is tied: it runs %s longer.", templates.SpanOf(e.Duration))
		case engine.EvRoundClosed:
			en := entry{At: when(e.At), Text: "The vote closed: " + outcome(e, names) + "."}
			if e.Tally != nil {
				for _, c := range e.Tally.Counts {
					en.Counts = append(en.Counts, count{Name: c.Name, Votes: c.Votes, Voters: strings.Join(c.Voters, ", ")})
				}
			}
			cur.entries = append(cur.entries, en)
		case engine.EvPlayerDied:
			say(e, "%s is out of the game: %s.", e.Name, compose.CauseWords(engine.Cause(e.Reason)))
		case engine.EvDawn:
			if len(e.Deaths) == 0 {
				say(e, "Dawn: no one died in the night.")
			}
			for _, d := range e.Deaths {
				say(e, "Dawn: %s, %s.", d.Name, compose.CauseWords(d.Cause))
			}
		case engine.EvThreadPost, engine.EvPostRelayed, engine.EvPostGameTalk:
			who := e.Name
			if who == "" {
				who = names[e.Slot]
			}
			cur.entries = append(cur.entries, entry{At: when(e.At), Who: who, Text: e.Text, Post: true})
		case engine.EvAnnouncement:
			cur.entries = append(cur.entries, entry{At: when(e.At), Who: "The referee", Text: e.Text, Post: true})
		case engine.EvMailWait:
			say(e, "The close waits for the town's mail the sending limit held back, until %s at the latest.", when(e.Deadline))
		case engine.EvMailFlowed:
			say(e, "The town's held mail has gone out, so the round closes.")
		case engine.EvMailPlan:
			if e.Duration > 0 {
				say(e, "To stay within the mailbox's sending limit, the thread comes in a digest every %s.", templates.SpanOf(e.Duration))
			} else {
				say(e, "The mailbox has room again: the thread goes as each player chose.")
			}
		case engine.EvSubstituted:
			say(e, "A substitute takes %s's seat.", e.Name)
		case engine.EvPaused:
			say(e, "The referee paused the game.")
		case engine.EvResumed:
			say(e, "The referee resumed the game.")
		case engine.EvGameEnded:
			g.winner, g.reason = e.Winner, e.Reason
			open("end.html", "Game over")
			say(e, "%s", winnerWords(e.Winner, e.Reason))
		}
	}
	// A round with nothing to show (a sign-up with no news) has no page.
	kept := g.parts[:0]
	for _, p := range g.parts {
		if len(p.entries) > 0 {
			kept = append(kept, p)
		}
	}
	g.parts = kept
	return g, nil
}

func slotNames(names map[int]string, slots []int) []string {
	out := make([]string, 0, len(slots))
	for _, s := range slots {
		out = append(out, names[s])
	}
	return out
}

func outcome(e engine.Event, names map[int]string) string {
	switch e.Outcome {
	case engine.Eliminated:
		return names[e.Target] + " is eliminated"
	case engine.ToRunoff:
		return "a tie, so a runoff"
	case engine.Forfeited:
		return "still tied, so no one is eliminated"
	case engine.NoVotes:
		return "no votes, so no one is eliminated"
	case engine.Void:
		return "void, for a second missed vote"
	}
	return "the game ended"
}

func winnerWords(w engine.Side, reason string) string {
	switch w {
	case engine.Town:
		return "Game over: the Town wins."
	case engine.MafiaWin:
		return "Game over: the Mafia win."
	}
	if reason != "" {
		return "Game over: the referee ended the game (" + reason + ")."
	}
	return "Game over: the referee ended the game."
}
