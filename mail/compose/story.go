package compose

import (
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/story"
	"github.com/mafiamail/mafiamail/templates"
)

// StoryView lays a game's story out for the templates, its times in the
// game's zone. Each reader's copy needs its own (ZONE changes its times in
// place).
func StoryView(h story.History, zone engine.Setup, l *lang.Language) *templates.Story {
	s := &engine.State{Setup: zone}
	v := &templates.Story{Revealed: h.Revealed}
	side := map[string]string{}
	for _, p := range h.Players {
		if h.Revealed {
			side[p.Name] = string(p.Side)
		}
	}
	type col struct{ votes map[string]story.Vote }
	var cols []col
	for _, d := range h.Days {
		dv := templates.StoryDay{Title: l.Sprintf("Day %d", d.Number)}
		if d.Extra {
			dv.Title = l.Sprintf("After Night %d", d.Number)
		}
		for _, r := range d.Rounds {
			rv := templates.StoryRound{Title: roundTitle(l, d.Number, r.Kind), Outcome: outcomeWords(l, r)}
			if r.Closed.IsZero() {
				rv.Outcome = l.Phrase("under way")
				if h.Winner != "" {
					rv.Outcome = l.Phrase("cut short by the end of the game")
				}
			}
			if !r.Closed.IsZero() {
				rv.Closed = moment(s, r.Closed, r.Closed)
				v.Columns = append(v.Columns, columnTitle(l, d.Number, r.Kind))
				c := col{votes: map[string]story.Vote{}}
				for _, vt := range r.Votes {
					c.votes[vt.Voter] = vt
				}
				cols = append(cols, c)
			}
			for _, m := range r.Moves {
				rv.Moves = append(rv.Moves, templates.StoryMove{At: moment(s, m.At, m.At), Text: moveWords(l, m)})
			}
			dv.Rounds = append(dv.Rounds, rv)
		}
		for _, sh := range d.Shots {
			dv.Lines = append(dv.Lines, l.Sprintf("%s, the Vigilante, shot %s by day.", sh.By, sh.Target))
		}
		for _, dth := range d.Deaths {
			dv.Deaths = append(dv.Deaths, templates.StoryDeath{Name: dth.Name, Cause: l.Phrase(CauseWords(dth.Cause)), At: moment(s, dth.At, dth.At)})
		}
		if n := d.Night; n != nil {
			nv := &templates.StoryNight{Title: l.Sprintf("Night %d", n.Number), Lines: nightLines(l, *n, h.Revealed, h.Doctors), Dawn: n.Dawn, Cut: !n.Dawn && h.Winner != ""}
			for _, dth := range n.Removed {
				nv.Removed = append(nv.Removed, templates.StoryDeath{Name: dth.Name, Cause: l.Phrase(CauseWords(dth.Cause)), At: moment(s, dth.At, dth.At)})
			}
			for _, dth := range n.Deaths {
				nv.Deaths = append(nv.Deaths, templates.StoryDeath{Name: dth.Name, Cause: l.Phrase(CauseWords(dth.Cause)), At: moment(s, dth.At, dth.At)})
			}
			dv.Night = nv
		}
		v.Days = append(v.Days, dv)
	}
	for _, p := range h.Players {
		row := templates.StoryRow{Name: p.Name, Side: side[p.Name]}
		for _, c := range cols {
			vt, ok := c.votes[p.Name]
			var cell templates.StoryCell
			switch {
			case !ok:
			case vt.Null:
				cell.Text = l.Phrase("null")
			case vt.Target == "":
				cell.Text = "-"
			default:
				cell = templates.StoryCell{Text: vt.Target, Side: side[vt.Target]}
			}
			row.Cells = append(row.Cells, cell)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

func roundTitle(l *lang.Language, day int, k engine.RoundKind) string {
	switch k {
	case engine.Runoff:
		return l.Phrase("The runoff")
	case engine.Extra:
		return l.Phrase("The extra round (the Mafia had killed no one)")
	}
	return l.Sprintf("The vote of Day %d", day)
}

func columnTitle(l *lang.Language, day int, k engine.RoundKind) string {
	switch k {
	case engine.Runoff:
		return l.Sprintf("Day %d runoff", day)
	case engine.Extra:
		return l.Sprintf("Day %d extra", day)
	}
	return l.Sprintf("Day %d", day)
}

func outcomeWords(l *lang.Language, r story.Round) string {
	switch r.Outcome {
	case engine.Eliminated:
		return l.Sprintf("%s eliminated", r.Target)
	case engine.ToRunoff:
		return l.Phrase("a tie, so a runoff")
	case engine.Forfeited:
		return l.Phrase("still tied, so no one eliminated")
	case engine.NoVotes:
		return l.Phrase("no votes, so no one eliminated")
	case engine.Void:
		return l.Phrase("void: a player missed a second vote")
	case engine.EndedByRef:
		return l.Phrase("the game ended")
	}
	return ""
}

func moveWords(l *lang.Language, m story.Move) string {
	switch {
	case m.Kind == story.MoveVote && m.Null:
		return l.Sprintf("%s votes null", m.Voter)
	case m.Kind == story.MoveVote:
		return l.Sprintf("%s votes %s", m.Voter, m.Target)
	case m.Kind == story.MoveUnvote:
		return l.Sprintf("%s takes back their vote", m.Voter)
	case m.Kind == story.MoveLock && m.Null:
		return l.Sprintf("%s locks their null vote", m.Voter)
	case m.Kind == story.MoveLock && m.Target == "":
		return l.Sprintf("%s locks their vote", m.Voter)
	case m.Kind == story.MoveLock:
		return l.Sprintf("%s locks their vote on %s", m.Voter, m.Target)
	case m.Kind == story.MoveUnlock:
		return l.Sprintf("%s unlocks their vote", m.Voter)
	}
	return m.Voter
}

// nightLines say a night's actions, once the game is over; before, only
// what the dawn told everyone.
func nightLines(l *lang.Language, n story.Night, revealed bool, doctors int) []string {
	var out []string
	if revealed {
		switch {
		case n.Kill != "":
			out = append(out, l.Sprintf("The Mafia chose to kill %s.", n.Kill))
		case n.NoKill:
			out = append(out, l.Phrase("The Mafia chose to kill no one."))
		default:
			out = append(out, l.Phrase("The Mafia named no one."))
		}
		for _, pr := range n.Protections {
			if doctors > 1 {
				out = append(out, l.Sprintf("%s, the Doctor, protected %s.", pr.By, pr.Target))
			} else {
				out = append(out, l.Sprintf("The Doctor protected %s.", pr.Target))
			}
		}
		for _, i := range n.Inspections {
			out = append(out, l.Sprintf("%s, the Inspector, asked about %s: %s.", i.By, i.Target, resultWords(l, i.Result, i.Target)))
		}
		for _, sh := range n.Shots {
			if sh.Target == "" {
				out = append(out, l.Sprintf("%s, the Vigilante, held fire.", sh.By))
			} else {
				out = append(out, l.Sprintf("%s, the Vigilante, shot %s.", sh.By, sh.Target))
			}
		}
	}
	switch {
	case n.Saved == 1 && doctors > 1:
		out = append(out, l.Phrase("A Doctor's protection saved a life."))
	case n.Saved > 1 && doctors > 1:
		out = append(out, l.Sprintf("The Doctors' protections blocked %d attacks.", n.Saved))
	case n.Saved == 1:
		out = append(out, l.Phrase("The Doctor's protection saved a life."))
	case n.Saved > 1:
		out = append(out, l.Sprintf("The Doctor's protection blocked %d attacks.", n.Saved))
	}
	return out
}

// pictureCID names the story's picture within the end mail: the game and
// the host's domain, nothing a reader does not know already.
func (c *Composer) pictureCID(game string) string {
	return game + ".story@" + c.domain
}
