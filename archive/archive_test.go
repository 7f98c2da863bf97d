package archive

import (
	"bytes"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/mafiamail/mafiamail/engine"
)

var t0 = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)

// mafiaSecret is written on the mafia list: no archive before the end may
// hold it.
const mafiaSecret = "quietly we pick the baker"

// play drives a classic game through the engine: the town votes out a
// Mafioso each day, the Mafia kill each night and talk on their list. It
// returns the log as it stood when Day 2 began, and the whole log.
func play(t *testing.T) (inProgress, finished []engine.Event) {
	t.Helper()
	s, log, err := engine.NewGame("dec26", "ref@example.org", engine.Classic(), t0)
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	r := rand.New(rand.NewPCG(7, 7))
	var k [32]byte
	src := rand.NewChaCha8(k)
	apply := func(c engine.Command) {
		t.Helper()
		evs, err := engine.Apply(s, c, engine.Env{Now: now, Rand: src})
		log = append(log, evs...)
		if err != nil {
			t.Fatalf("%s %s: %v", c.Verb, c.Target, err)
		}
	}
	names := []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory"}
	for _, n := range names {
		apply(engine.Command{Verb: engine.CmdAdd, By: engine.Referee, Channel: engine.Private,
			Name: n, Address: strings.ToLower(n) + "@example.net", Token: "tok" + strings.ToLower(n)})
	}
	apply(engine.Command{Verb: engine.CmdStart, By: engine.Referee, Channel: engine.Private})
	untilNews := func(types ...engine.EventType) {
		t.Helper()
		for range 20 {
			d, ok := engine.NextDeadline(s)
			if !ok {
				return
			}
			now = d
			evs := engine.Tick(s, now)
			log = append(log, evs...)
			for _, e := range evs {
				for _, want := range types {
					if e.Type == want {
						return
					}
				}
			}
		}
		t.Fatal("the clock never brought the news")
	}
	living := func(mafia bool) []engine.Player {
		var out []engine.Player
		for _, p := range s.Players {
			if p.Alive && (p.Role == engine.Mafia) == mafia {
				out = append(out, p)
			}
		}
		return out
	}
	for round := 0; s.Phase != engine.EndedPhase && round < 10; round++ {
		if s.Phase == engine.DayPhase {
			mafia, town := living(true), living(false)
			now = now.Add(10 * time.Minute)
			apply(engine.Command{Verb: engine.CmdPost, By: engine.PlayerActor(town[0].Slot), Channel: engine.Thread,
				Text: fmt.Sprintf("Good morning, day %d.", s.Day)})
			for _, p := range town {
				now = now.Add(time.Minute)
				apply(engine.Command{Verb: engine.CmdVote, By: engine.PlayerActor(p.Slot), Channel: engine.Thread, Target: mafia[0].Name})
			}
			for _, p := range mafia {
				now = now.Add(time.Minute)
				apply(engine.Command{Verb: engine.CmdVote, By: engine.PlayerActor(p.Slot), Channel: engine.Thread, Target: town[r.IntN(len(town))].Name})
			}
			if s.Phase == engine.DayPhase {
				untilNews(engine.EvNightStarted, engine.EvGameEnded, engine.EvRunoffStarted)
			}
			continue
		}
		if s.Phase == engine.NightPhase {
			mafia, town := living(true), living(false)
			now = now.Add(10 * time.Minute)
			apply(engine.Command{Verb: engine.CmdPost, By: engine.PlayerActor(mafia[0].Slot), Channel: engine.MafiaCh, Text: mafiaSecret})
			apply(engine.Command{Verb: engine.CmdKill, By: engine.PlayerActor(mafia[0].Slot), Channel: engine.Private, Target: town[len(town)-1].Name})
			for _, p := range town {
				if p.Role == engine.Inspector {
					apply(engine.Command{Verb: engine.CmdInspect, By: engine.PlayerActor(p.Slot), Channel: engine.Private, Target: mafia[len(mafia)-1].Name})
				}
			}
			untilNews(engine.EvDawn, engine.EvGameEnded)
			if s.Day == 2 && inProgress == nil {
				inProgress = append([]engine.Event(nil), log...)
			}
		}
	}
	if s.Phase != engine.EndedPhase {
		t.Fatalf("the game did not end: %s, day %d", s.Phase, s.Day)
	}
	return inProgress, log
}

// pageText is the text of an HTML page, and whether it holds anything that
// loads or runs: a script, a style sheet, a frame, an outside source.
func pageText(t *testing.T, name string, b []byte) string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "iframe", "object", "embed", "style":
				t.Errorf("%s: has a <%s>", name, n.Data)
			}
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && strings.Contains(a.Val, ":") {
					t.Errorf("%s: %s=%q reaches outside the site", name, a.Key, a.Val)
				}
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: has a script attribute %s", name, a.Key)
				}
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
			text.WriteString("\n")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return text.String()
}

// links are the pages an index links to, in order.
func links(t *testing.T, b []byte) []string {
	doc, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			for _, a := range n.Attr {
				if a.Key == "href" {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func checkSite(t *testing.T, site Site, days int) map[string]string {
	t.Helper()
	texts := map[string]string{}
	for name, b := range site {
		if strings.HasSuffix(name, ".html") {
			texts[name] = pageText(t, name, b)
		}
	}
	index := site["index.html"]
	if index == nil {
		t.Fatal("no index.html")
	}
	linked := map[string]bool{}
	for _, l := range links(t, index) {
		linked[l] = true
		if site[l] == nil {
			t.Errorf("index links to %s, which the site lacks", l)
		}
	}
	for d := 1; d <= days; d++ {
		name := fmt.Sprintf("day-%d.html", d)
		if !linked[name] {
			t.Errorf("the index does not link to %s", name)
		}
		if !strings.Contains(texts[name], fmt.Sprintf("Day %d begins", d)) {
			t.Errorf("%s does not open Day %d", name, d)
		}
		if !strings.Contains(texts[name], fmt.Sprintf("Good morning, day %d.", d)) && d < days {
			t.Errorf("%s lacks the day's post", name)
		}
		if !strings.Contains(texts[name], "The vote closed") && d < days {
			t.Errorf("%s lacks its close", name)
		}
	}
	if !linked["story.html"] {
		t.Error("the index does not link to the story")
	}
	return texts
}

func TestArchiveOfAFinishedGame(t *testing.T) {
	_, log := play(t)
	site, err := Build(log)
	if err != nil {
		t.Fatal(err)
	}
	var days int
	for _, e := range log {
		if e.Type == engine.EvDayStarted {
			days = e.Day
		}
	}
	texts := checkSite(t, site, days)
	writeOut(t, "finished", site)
	for _, want := range []string{"Mafia", "Inspector", "Townsperson", "mafiamail draw v1", "salt "} {
		if !strings.Contains(texts["index.html"], want) {
			t.Errorf("the index of a finished game lacks %q", want)
		}
	}
	if !strings.Contains(texts["story.html"], "The Mafia chose to kill") {
		t.Error("the story of a finished game lacks the nights")
	}
	img, err := png.Decode(bytes.NewReader(site["votes.png"]))
	if err != nil {
		t.Fatalf("votes.png: %v", err)
	}
	if img.Bounds().Dx() != 600 {
		t.Errorf("votes.png is %d wide", img.Bounds().Dx())
	}
	again, err := Build(log)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range site {
		if !bytes.Equal(again[name], b) {
			t.Errorf("%s differs when built again", name)
		}
	}
}

// writeOut writes a site into $MAFIAMAIL_ARCHIVE_OUT/name, when set, to
// look at in a browser.
func writeOut(t *testing.T, name string, site Site) {
	t.Helper()
	if dir := os.Getenv("MAFIAMAIL_ARCHIVE_OUT"); dir != "" {
		if err := Write(filepath.Join(dir, name), site); err != nil {
			t.Fatal(err)
		}
	}
}

// A game in progress shows what the town thread showed, and nothing else.
func TestArchiveOfAGameInProgressKeepsSecrets(t *testing.T) {
	log, _ := play(t)
	site, err := Build(log)
	if err != nil {
		t.Fatal(err)
	}
	texts := checkSite(t, site, 2)
	writeOut(t, "in-progress", site)
	for _, name := range []string{"Alice", "Mallory"} {
		if !strings.Contains(texts["index.html"], name) {
			t.Errorf("the index does not name %s", name)
		}
	}
	if !regexp.MustCompile(`\w+ votes \w+\.`).MatchString(texts["day-1.html"]) {
		t.Error("Day 1 shows no vote with its voter and target")
	}
	summary := engine.Classic().Summary()
	// "the Mafia" in the causes of death and the night's news is public.
	public := regexp.MustCompile(`by the Mafia|The Mafia killed no one`)
	for name, text := range texts {
		text = public.ReplaceAllString(strings.ReplaceAll(text, summary, ""), "")
		for _, secret := range []string{mafiaSecret, "Mafia", "Inspector", "Townsperson", "Doctor", "Vigilante",
			"chose to kill", "asked about", "salt", "mafiamail draw"} {
			if strings.Contains(text, secret) {
				t.Errorf("%s of a game in progress holds %q", name, secret)
			}
		}
	}
	for name, b := range site {
		if bytes.Contains(b, []byte(mafiaSecret)) {
			t.Errorf("%s holds the mafia list's words", name)
		}
	}
}
