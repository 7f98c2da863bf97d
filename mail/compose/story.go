package compose

import (
	"fmt"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/story"
	"github.com/mafiamail/mafiamail/templates"
)

// StoryView lays a game's story out for the templates, its times in the
// game's zone. Each reader's copy needs its own (ZONE changes its times in
// place).
func StoryView(h story.History, zone engine.Setup) *templates.Story {
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
		dv := templates.StoryDay{Title: fmt.Sprintf("Day %d", d.Number)}
		if d.Extra {
			dv.Title = fmt.Sprintf("After Night %d", d.Number)
		}
		for _, r := range d.Rounds {
			rv := templates.StoryRound{Title: roundTitle(d.Number, r.Kind), Outcome: outcomeWords(r)}
			if r.Closed.IsZero() {
				rv.Outcome = "under way"
				if h.Winner != "" {
					rv.Outcome = "cut short by the end of the game"
				}
			}
			if !r.Closed.IsZero() {
				rv.Closed = moment(s, r.Closed, r.Closed)
				v.Columns = append(v.Columns, columnTitle(d.Number, r.Kind))
				c := col{votes: map[string]story.Vote{}}
				for _, vt := range r.Votes {
					c.votes[vt.Voter] = vt
				}
				cols = append(cols, c)
			}
			for _, m := range r.Moves {
				rv.Moves = append(rv.Moves, templates.StoryMove{At: moment(s, m.At, m.At), Text: moveWords(m)})
			}
			dv.Rounds = append(dv.Rounds, rv)
		}
		for _, sh := range d.Shots {
			dv.Lines = append(dv.Lines, fmt.Sprintf("%s, the Vigilante, shot %s by day.", sh.By, sh.Target))
		}
		for _, dth := range d.Deaths {
			dv.Deaths = append(dv.Deaths, templates.StoryDeath{Name: dth.Name, Cause: CauseWords(dth.Cause), At: moment(s, dth.At, dth.At)})
		}
		if n := d.Night; n != nil {
			nv := &templates.StoryNight{Title: fmt.Sprintf("Night %d", n.Number), Lines: nightLines(*n, h.Revealed)}
			for _, dth := range n.Deaths {
				nv.Deaths = append(nv.Deaths, templates.StoryDeath{Name: dth.Name, Cause: CauseWords(dth.Cause), At: moment(s, dth.At, dth.At)})
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
				cell.Text = "no one"
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

func roundTitle(day int, k engine.RoundKind) string {
	switch k {
	case engine.Runoff:
		return "The runoff"
	case engine.Extra:
		return "The extra round (the Mafia had killed no one)"
	}
	return fmt.Sprintf("The vote of Day %d", day)
}

func columnTitle(day int, k engine.RoundKind) string {
	switch k {
	case engine.Runoff:
		return fmt.Sprintf("Day %d runoff", day)
	case engine.Extra:
		return fmt.Sprintf("Day %d extra", day)
	}
	return fmt.Sprintf("Day %d", day)
}

func outcomeWords(r story.Round) string {
	switch r.Outcome {
	case engine.Eliminated:
		return r.Target + " eliminated"
	case engine.ToRunoff:
		return "a tie, so a runoff"
	case engine.Forfeited:
		return "still tied, so no one eliminated"
	case engine.NoVotes:
		return "no votes, so no one eliminated"
	case engine.Void:
		return "void: a player missed a second vote"
	case engine.EndedByRef:
		return "the game ended"
	}
	return ""
}

func moveWords(m story.Move) string {
	target := m.Target
	if m.Null {
		target = "no one"
	}
	switch m.Kind {
	case story.MoveVote:
		return m.Voter + " votes " + target
	case story.MoveUnvote:
		return m.Voter + " takes back their vote"
	case story.MoveLock:
		if target == "" {
			return m.Voter + " locks their vote"
		}
		return m.Voter + " locks their vote on " + target
	case story.MoveUnlock:
		return m.Voter + " unlocks their vote"
	}
	return m.Voter
}

// nightLines say a night's actions, once the game is over; before, only
// what the dawn told everyone.
func nightLines(n story.Night, revealed bool) []string {
	var out []string
	if revealed {
		switch {
		case n.Kill != "":
			out = append(out, "The Mafia chose to kill "+n.Kill+".")
		case n.NoKill:
			out = append(out, "The Mafia chose to kill no one.")
		default:
			out = append(out, "The Mafia named no one.")
		}
		if n.Protected != "" {
			out = append(out, "The Doctor protected "+n.Protected+".")
		}
		for _, i := range n.Inspections {
			out = append(out, fmt.Sprintf("%s, the Inspector, asked about %s: %s.", i.By, i.Target, i.Result))
		}
		for _, sh := range n.Shots {
			if sh.Target == "" {
				out = append(out, sh.By+", the Vigilante, held fire.")
			} else {
				out = append(out, fmt.Sprintf("%s, the Vigilante, shot %s.", sh.By, sh.Target))
			}
		}
	}
	switch n.Saved {
	case 0:
	case 1:
		out = append(out, "The Doctor's protection saved a life.")
	default:
		out = append(out, fmt.Sprintf("The Doctor's protection blocked %d attacks.", n.Saved))
	}
	return out
}

// pictureCID names the story's picture within the end mail: the game and
// the host's domain, nothing a reader does not know already.
func (c *Composer) pictureCID(game string) string {
	return game + ".story@" + c.domain
}
