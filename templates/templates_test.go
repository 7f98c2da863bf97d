package templates

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/lang"
)

func zone(t testing.TB) *time.Location {
	t.Helper()
	z, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestEveryKindHasBothFiles: each kind is a pair, KIND.txt and KIND.html,
// and no file stands alone.
func TestEveryKindHasBothFiles(t *testing.T) {
	txt, _ := fs.Glob(pages, "pages/*.txt")
	html, _ := fs.Glob(pages, "pages/*.html")
	base := func(names []string, ext string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[strings.TrimSuffix(path.Base(n), ext)] = true
		}
		return m
	}
	bt, bh := base(txt, ".txt"), base(html, ".html")
	for k := range bt {
		if !bh[k] {
			t.Errorf("%s.txt has no %s.html", k, k)
		}
	}
	for k := range bh {
		if !bt[k] {
			t.Errorf("%s.html has no %s.txt", k, k)
		}
	}
	if len(Kinds()) < 30 {
		t.Errorf("only %d kinds: %v", len(Kinds()), Kinds())
	}
	for _, k := range Kinds() {
		if !Known(k) {
			t.Errorf("Known(%q) is false", k)
		}
	}
	if Known("layout") || Known("_layout") || Known("nonsense") {
		t.Error("Known accepts a name that is no kind")
	}
}

// TestMomentShowsAbsoluteTimeWithZone is D8: an absolute time with its zone,
// across a change to daylight time, and never a time left, which goes stale
// between sending and reading.
func TestMomentShowsAbsoluteTimeWithZone(t *testing.T) {
	z := zone(t)
	now := time.Date(2026, 12, 3, 13, 40, 0, 0, time.UTC)
	cases := []struct {
		at   time.Time
		full string
	}{
		{now.Add(13*time.Hour + 20*time.Minute), "Thu 3 Dec 2026 22:00 EST"},
		{now.Add(36 * time.Hour), "Fri 4 Dec 2026 20:40 EST"},
		{now.Add(50 * time.Minute), "Thu 3 Dec 2026 09:30 EST"},
		{now.Add(20 * time.Second), "Thu 3 Dec 2026 08:40 EST"},
		{now.Add(-2 * time.Hour), "Thu 3 Dec 2026 06:40 EST"},
		{now.Add(3*24*time.Hour + 5*time.Minute), "Sun 6 Dec 2026 08:45 EST"},
		// Daylight time begins on 8 March 2026 in New York.
		{time.Date(2026, 3, 9, 16, 0, 0, 0, time.UTC), "Mon 9 Mar 2026 12:00 EDT"},
	}
	for _, c := range cases {
		m := Moment{T: c.at, Now: now, Zone: z}
		if got := m.String(); got != c.full {
			t.Errorf("String(%v) = %q, want %q", c.at, got, c.full)
		}
		if strings.Contains(m.String(), " in ") || strings.Contains(m.String(), "ago") {
			t.Errorf("String(%v) = %q says a time left", c.at, m.String())
		}
	}
	if (Moment{}).String() != "" || !(Moment{}).IsZero() {
		t.Error("the zero Moment shows something")
	}
	if got := (Moment{T: now, Zone: z}).Short(); got != "Thu 3 Dec 08:40 EST" {
		t.Errorf("Short = %q", got)
	}
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12 * time.Hour:                   "12 h",
		36 * time.Hour:                   "1 day 12 h",
		90 * time.Minute:                 "1 h 30 min",
		45 * time.Minute:                 "45 min",
		24 * time.Hour:                   "1 day",
		49*time.Hour + 30*time.Minute:    "2 days 1 h",
		20 * time.Second:                 "less than a minute",
		6*time.Hour + 29*time.Second:     "6 h",
		6*time.Hour + 30*time.Second + 1: "6 h 1 min",
	} {
		if got := SpanOf(d).String(); got != want {
			t.Errorf("Span(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""}, {[]string{"Alice"}, "Alice"}, {[]string{"Alice", "Bob"}, "Alice and Bob"},
		{[]string{"Alice", "Bob", "Carol"}, "Alice, Bob and Carol"},
	} {
		if got := List(c.in); got != c.want {
			t.Errorf("List(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

// message builds a small thread message around sections.
func message(t testing.TB, secs ...*Section) *View {
	z := zone(t)
	now := time.Date(2026, 12, 3, 13, 40, 0, 0, time.UTC)
	return &View{Game: "dec26", Channel: Thread, Reader: Reader{Name: "Alice", Slot: 1},
		Now: Moment{T: now, Now: now, Zone: z}, Sections: secs,
		Footer: Footer{Channel: Thread, Thread: "host+dec26-t-abcdefghij@example.org",
			Private: "host+dec26-p-abcdefghij@example.org", Commands: ThreadCommands}}
}

// TestHTMLEscapesEverything: what players write reaches the HTML part as
// text, never as markup; the text part keeps it as written.
func TestHTMLEscapesEverything(t *testing.T) {
	evil := `<script>alert("x")</script> & <a href="javascript:x">y</a>`
	m := message(t, &Section{Kind: "post", Name: `Bob"><img src=x>`, Text: evil})
	r, err := Render("post", m)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<img", `<a href="javascript`} {
		if strings.Contains(r.HTML, bad) {
			t.Errorf("the HTML part holds %q:\n%s", bad, r.HTML)
		}
	}
	if !strings.Contains(r.HTML, "&lt;script&gt;") {
		t.Errorf("the post is not shown as text in the HTML part:\n%s", r.HTML)
	}
	if !strings.Contains(r.Text, evil) {
		t.Errorf("the text part changed the post:\n%s", r.Text)
	}
	if r.Subject != `Bob"><img src=x> writes` {
		t.Errorf("Subject = %q", r.Subject)
	}
}

// TestHTMLIsSelfContained: no external resources, one column, a viewport
// for phones.
func TestHTMLIsSelfContained(t *testing.T) {
	m := message(t, &Section{Kind: "vote", Name: "Alice", Target: "Bob"})
	r, err := Render("vote", m)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<img", "<link", "<script", "url(", "http://", "https://", "<style"} {
		if strings.Contains(r.HTML, bad) {
			t.Errorf("the HTML part holds %q", bad)
		}
	}
	if !strings.Contains(r.HTML, `name="viewport"`) || !strings.Contains(r.HTML, "max-width:560px") {
		t.Errorf("the HTML part is not laid out for phones:\n%s", r.HTML)
	}
}

// TestLayout: the headline comes first, the signature separator keeps its
// space, and no blank line runs double.
func TestLayout(t *testing.T) {
	m := message(t, &Section{Kind: "vote", Name: "Alice", Target: "Bob"}, &Section{Kind: "vote", Variant: "lock", Name: "Alice", Target: "Bob"})
	m.Headline = "Two votes"
	r, err := Render("vote", m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text, "Two votes\n\n") || r.Subject != "Two votes" {
		t.Errorf("the headline does not lead:\n%s", r.Text)
	}
	if !strings.Contains(r.Text, "\n-- \n") {
		t.Errorf("no signature separator:\n%q", r.Text)
	}
	if strings.Contains(r.Text, "\n\n\n") || strings.Contains(r.Text, " \n") && !strings.Contains(r.Text, "-- \n") {
		t.Errorf("untidy text:\n%q", r.Text)
	}
	if !strings.Contains(r.Text, "▸ Alice votes Bob\n▸ Alice locks their vote on Bob\n") {
		t.Errorf("bodiless sections are not listed tightly:\n%s", r.Text)
	}
}

func TestRenderRefusesBadInput(t *testing.T) {
	if _, err := Render("vote", "not a message"); err == nil {
		t.Error("Render took a string")
	}
	if _, err := Render("nonsense", message(t, &Section{Kind: "vote"})); err == nil {
		t.Error("Render took an unknown kind")
	}
	if _, err := Render("vote", message(t)); err == nil {
		t.Error("Render took a message without sections")
	}
	if _, err := Render("vote", message(t, &Section{Kind: "nonsense"})); err == nil {
		t.Error("Render took a section of an unknown kind")
	}
}

func TestTidyText(t *testing.T) {
	got := tidyText([]byte("\n\nHead  \n\n\n\nbody\t\n-- \nfoot\n\n"))
	if want := "Head\n\nbody\n-- \nfoot\n"; got != want {
		t.Errorf("tidyText = %q, want %q", got, want)
	}
}

// ruleCode matches a rule's ID as docs/rules.md numbers them ("D5", "N7",
// "(C1, C2)"): players do not know the IDs, so mail to them says the rule
// in words instead.
var ruleCode = regexp.MustCompile(`\b[SDNWCFT][0-9]{1,2}\b`)

// refereeOnly are the kinds only the referee ever receives: their text may
// cite the rules by ID, since the referee works from docs/rules.md. Every
// other template may reach a player, so none of its text may.
var refereeOnly = map[string]bool{"draw": true, "failure": true, "sendinghold": true, "revoked": true, "restored": true}

// templateComment is a template's comment, which no reader sees.
var templateComment = regexp.MustCompile(`(?s)\{\{-? ?/\*.*?\*/ ?-?\}\}`)

// TestNoRuleCodesForPlayers: no template a player may receive cites a rule
// by its ID, and neither do the command lists players see.
func TestNoRuleCodesForPlayers(t *testing.T) {
	files, err := Sources(lang.Get(lang.Default))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 60 {
		t.Fatalf("only %d template files", len(files))
	}
	for n, src := range files {
		kind := strings.TrimSuffix(strings.TrimSuffix(n, ".txt"), ".html")
		if refereeOnly[kind] {
			continue
		}
		text := templateComment.ReplaceAllString(src, "")
		for i, l := range strings.Split(text, "\n") {
			if m := ruleCode.FindString(l); m != "" {
				t.Errorf("%s: line %d cites rule %s: %q", n, i+1, m, l)
			}
		}
	}
	lists := [][]Command{ThreadCommands, privateCommands, DeadCommands, MafiaCommands, ObserverCommands, SignupCommands, {RenameCommand}}
	for _, r := range []string{"Mafia", "Inspector", "Doctor", "Vigilante"} {
		lists = append(lists, RoleCommands(r))
	}
	for _, l := range lists {
		for _, c := range l {
			if m := ruleCode.FindString(c.Syntax + " " + c.What); m != "" {
				t.Errorf("command %q cites rule %s", c.Syntax, m)
			}
		}
	}
}

// TestMafiaWinSaysWhy: W1's two ways for the Mafia to win read as what
// happened, 5 Mafia against 4 as outnumbering, 1 against 1 as as many.
func TestMafiaWinSaysWhy(t *testing.T) {
	seats := func(mafia, others int) *End {
		e := &End{Winner: "Mafia"}
		for range mafia {
			e.Seats = append(e.Seats, Seat{Role: "Mafia", Alive: true})
		}
		for range others {
			e.Seats = append(e.Seats, Seat{Role: "Townsperson", Alive: true})
		}
		e.Seats = append(e.Seats, Seat{Role: "Townsperson"}, Seat{Role: "Mafia"})
		return e
	}
	for _, c := range []struct {
		mafia, others int
		want          string
	}{
		{5, 4, "The Mafia outnumber everyone else alive"},
		{1, 1, "The Mafia are as many as everyone else alive"},
		{3, 0, "The Mafia outnumber everyone else alive"},
	} {
		if got := seats(c.mafia, c.others).MafiaWin(); got != c.want {
			t.Errorf("%d Mafia against %d: %q, want %q", c.mafia, c.others, got, c.want)
		}
	}
}

// TestPostNamesItsAuthorOnce: a post sent with a vote in it heads the mail
// with its author's name and its words right below; the vote follows, and
// neither part names the author as writing twice.
func TestPostNamesItsAuthorOnce(t *testing.T) {
	m := message(t, &Section{Kind: "vote", Name: "Judy", Target: "Bob"},
		&Section{Kind: "post", Name: "Judy", Text: "Bob, explain yourself!"})
	r, err := Render("post", m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text, "Judy writes\n> Bob, explain yourself!\n\n▸ Judy votes Bob\n") {
		t.Errorf("the post does not lead:\n%s", r.Text)
	}
	if n := strings.Count(r.Text, "Judy writes"); n != 1 {
		t.Errorf("the text says %d times that Judy writes:\n%s", n, r.Text)
	}
	// The HTML says it in its title and, as its first line, in the frame.
	if n := strings.Count(r.HTML, "Judy writes"); n != 2 || strings.Contains(r.HTML, "<h1") || strings.Contains(r.HTML, ">Judy writes</h2>") {
		t.Errorf("the HTML says %d times that Judy writes:\n%s", n, r.HTML)
	}
}

// TestMomentSaysWhyAndForWhom: a close the weekend rule held says why, in
// a sentence naming the deadline as set; a reader who chose a zone sees
// their own time beside the game's, and only when it reads differently.
func TestMomentSaysWhyAndForWhom(t *testing.T) {
	z := zone(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	monday := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC) // 08:00 EST
	saturday := time.Date(2026, 12, 5, 23, 0, 0, 0, time.UTC)
	m := Moment{T: monday, Zone: z, Held: saturday, Weekend: "Chicago"}
	if got := m.Why(); !strings.Contains(got, "Sat 5 Dec 2026 18:00 EST") || !strings.Contains(got, "Friday 17:00 and Monday 07:00 Chicago time") {
		t.Errorf("Why = %q", got)
	}
	// D7: a game in its own zone is held by its own weekend, and says so
	// in its zone, in its reader's language.
	m = Moment{T: time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC), Zone: berlin, Held: time.Date(2026, 12, 4, 19, 51, 0, 0, time.UTC), Weekend: "Berlin"}
	if got := m.Why(); !strings.Contains(got, "Fri 4 Dec 2026 20:51 CET") || !strings.Contains(got, "Monday 07:00 Berlin time") || strings.Contains(got, "Chicago") {
		t.Errorf("Why in Berlin = %q", got)
	}
	m.Lang = "de"
	if got := m.Why(); !strings.Contains(got, "Montag 07:00 Uhr Ortszeit Berlin") || !strings.Contains(got, "20:51 MEZ") && !strings.Contains(got, "20:51 CET") {
		t.Errorf("Why in Berlin, in German = %q", got)
	}
	if (Moment{T: monday, Zone: z}).Why() != "" || (Moment{T: monday, Zone: z, Held: monday}).Why() != "" {
		t.Error("a close nothing moved says why it moved")
	}
	m = Moment{T: time.Date(2026, 12, 9, 2, 47, 0, 0, time.UTC), Zone: z, Own: berlin}
	if got, want := m.String(), "Tue 8 Dec 2026 21:47 EST (Wed 03:47 CET for you)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := m.Short(), "Tue 8 Dec 21:47 EST (Wed 03:47 CET for you)"; got != want {
		t.Errorf("Short = %q, want %q", got, want)
	}
	m.Own = z
	if got := m.String(); got != "Tue 8 Dec 2026 21:47 EST" {
		t.Errorf("the game's own zone as the reader's: %q", got)
	}
	// ShowOwnZone reaches every time of one reader's copy.
	v := message(t, &Section{Kind: "day", When: Moment{T: monday, Zone: z}})
	v.Tally = &Tally{Closes: Moment{T: monday, Zone: z}}
	ShowOwnZone(v, berlin)
	if v.Sections[0].When.Own != berlin || v.Tally.Closes.Own != berlin || v.Now.Own != berlin {
		t.Error("ShowOwnZone missed a time")
	}
}
