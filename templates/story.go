package templates

import (
	"fmt"
	htmltemplate "html/template"
	"strings"
	"unicode/utf8"

	"github.com/mafiamail/mafiamail/lang"
)

// Story is the game's story for the end mail and the archive: the votes at
// each close as a grid of players by rounds, each round's moves in order,
// the deaths and, once the game is over, the nights.
type Story struct {
	// Revealed: the sides and the nights are shown.
	Revealed bool
	// Columns name the closed rounds, in order: "Day 1", "Day 2 runoff".
	Columns []string
	Rows    []StoryRow
	Days    []StoryDay
	// PictureCID is the Content-ID of the picture attached to the HTML
	// part ("" for none), and Picture the PNG itself, which compose
	// attaches; PictureSrc is where a page finds it instead (the archive).
	PictureCID string
	PictureSrc string
	Picture    []byte
	// Lang is the reader's language, set for the whole view by Render.
	Lang string
}

// StoryRow is one player's line of the grid.
type StoryRow struct {
	Name string
	// Side is "Town", "Mafia" or "" (not revealed).
	Side  string
	Cells []StoryCell
}

// StoryCell is one vote at a round's close: its target's name, "null"
// for a null vote (a missed vote at the close, as no vote is), "-" for no vote, "" when the player was
// out of the game.
type StoryCell struct {
	Text string
	// Side is the target's side, when revealed.
	Side string
}

// StoryDay is one day and the night after it.
type StoryDay struct {
	Title  string
	Rounds []StoryRound
	// Lines say what else happened by day: a Vigilante's shot.
	Lines  []string
	Deaths []StoryDeath
	Night  *StoryNight
}

// StoryRound is one voting round with its moves.
type StoryRound struct {
	Title   string
	Closed  Moment
	Outcome string
	Moves   []StoryMove
}

// StoryMove is one vote, unvote, lock or unlock.
type StoryMove struct {
	At   Moment
	Text string
}

// StoryDeath is one death with its cause in words.
type StoryDeath struct {
	Name  string
	Cause string
	At    Moment
}

// StoryNight is one night: its actions once the game is over, and its
// deaths.
type StoryNight struct {
	Title string
	Lines []string
	// Removed are those who left the game during the night, before any
	// dawn (the referee's removals).
	Removed []StoryDeath
	// Dawn: the night resolved, and Deaths are its dawn's; a night the
	// game's end cut short had none.
	Dawn   bool
	Deaths []StoryDeath
	// Cut: the game ended during the night, before its dawn.
	Cut bool
}

// gridWidth is the widest line of the text grid: within FixedWidth, so
// that it is never broken.
const gridWidth = 74

// cellWidth caps a column's width; longer names are cut with "…".
const cellWidth = 12

// GridText lays the grid out for a monospace client, in blocks of as many
// rounds as fit the width, each block headed by its rounds' names. No
// line ends in a space (a format=flowed reader would join it to the next).
func (s *Story) GridText() []string {
	if len(s.Columns) == 0 {
		return nil
	}
	l := lang.Get(s.Lang)
	corner := l.Phrase("Player")
	names := make([]string, len(s.Rows))
	nameW := width(corner)
	for i, r := range s.Rows {
		names[i] = r.Name
		if r.Side != "" {
			names[i] += " (" + l.Phrase(r.Side) + ")"
		}
		nameW = max(nameW, width(names[i]))
	}
	nameW = min(nameW, 24)
	colW := make([]int, len(s.Columns))
	for c, title := range s.Columns {
		w := width(title)
		for _, r := range s.Rows {
			if c < len(r.Cells) {
				w = max(w, width(r.Cells[c].Text))
			}
		}
		colW[c] = min(w, cellWidth)
	}
	var out []string
	for start := 0; start < len(s.Columns); {
		end, used := start, nameW
		for end < len(s.Columns) && (end == start || used+2+colW[end] <= gridWidth) {
			used += 2 + colW[end]
			end++
		}
		if start > 0 {
			out = append(out, "")
		}
		// The corner is a word, not spaces: a line starting with a space
		// is stuffed with one more in a format=flowed part.
		line := pad(corner, nameW)
		for c := start; c < end; c++ {
			line += "  " + pad(cut(s.Columns[c], colW[c]), colW[c])
		}
		out = append(out, strings.TrimRight(line, " "))
		for i, r := range s.Rows {
			line := pad(cut(names[i], nameW), nameW)
			for c := start; c < end; c++ {
				text := ""
				if c < len(r.Cells) {
					text = r.Cells[c].Text
				}
				line += "  " + pad(cut(text, colW[c]), colW[c])
			}
			out = append(out, strings.TrimRight(line, " "))
		}
		start = end
	}
	return out
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int) string {
	if n := width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

func cut(s string, w int) string {
	if width(s) <= w {
		return s
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}

// StoryHTML renders the story as the end mail's HTML shows it, for pages
// that tell it outside a mail (the archive).
func StoryHTML(s *Story) (htmltemplate.HTML, error) {
	var b strings.Builder
	if err := sets[lang.Default].html.ExecuteTemplate(&b, "story", s); err != nil {
		return "", fmt.Errorf("render story: %w", err)
	}
	// The template escaped everything it wrote.
	return htmltemplate.HTML(b.String()), nil
}
