package archive

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"strings"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/story"
	"github.com/mafiamail/mafiamail/templates"
)

//go:embed pages.html
var pagesHTML string

var pageSet = template.Must(template.New("pages").Parse(pagesHTML))

// link is a page of the site, as the index lists it.
type link struct{ File, Title string }

// seat is one player on the index.
type seat struct {
	Name, Role, Status string
	// Side colours the name once the game is over.
	Side string
}

// page is what every page template gets.
type page struct {
	Game, Title string
	Links       []link
	// Index.
	Summary    string
	Over       string
	Seats      []seat
	Revealed   bool
	Commitment string
	DrawText   string
	Verified   bool
	// A round of the thread.
	Entries    []entry
	Prev, Next *link
	// The story.
	Story template.HTML
}

func (g *game) pages(site Site) error {
	links := []link{}
	for _, p := range g.parts {
		links = append(links, link{p.file, p.title})
	}
	base := page{Game: g.id, Links: links}

	idx := base
	idx.Title = "Game " + g.id
	idx.Summary, idx.Revealed, idx.Commitment = g.summary, g.revealed, g.commitment
	if g.winner != "" {
		idx.Over = winnerWords(g.winner, g.reason)
	}
	for i, p := range g.history.Players {
		st := "alive"
		if p.Died != "" {
			st = compose.CauseWords(p.Died)
		}
		s := seat{Name: p.Name, Status: st}
		if g.revealed && i < len(g.roles) {
			s.Role, s.Side = string(g.roles[i]), string(engine.SideOf(g.roles[i]))
		}
		idx.Seats = append(idx.Seats, s)
	}
	if g.revealed && g.salt != "" {
		idx.DrawText = strings.TrimRight(engine.DrawText(g.id, g.names, g.roles, g.salt), "\n")
		idx.Verified = engine.VerifyDraw(g.commitment, g.id, g.names, g.roles, g.salt)
	}
	if err := render(site, "index.html", "index", idx); err != nil {
		return err
	}

	for i, p := range g.parts {
		pg := base
		pg.Title = p.title
		pg.Entries = p.entries
		if i > 0 {
			pg.Prev = &links[i-1]
		}
		if i+1 < len(links) {
			pg.Next = &links[i+1]
		}
		if err := render(site, p.file, "round", pg); err != nil {
			return err
		}
	}

	sv := compose.StoryView(g.history, g.setup, lang.Get(lang.Default))
	pic, err := story.Picture(g.history, nil)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if pic != nil {
		site["votes.png"] = pic
		sv.PictureSrc = "votes.png"
	}
	body, err := templates.StoryHTML(sv)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	st := base
	st.Title = "The story of the votes"
	st.Story = body
	return render(site, "story.html", "story", st)
}

func render(site Site, file, name string, p page) error {
	var b bytes.Buffer
	if err := pageSet.ExecuteTemplate(&b, name, p); err != nil {
		return fmt.Errorf("archive: page %s: %w", file, err)
	}
	site[file] = b.Bytes()
	return nil
}
