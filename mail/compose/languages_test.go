package compose_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/template/parse"

	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/templates"
)

// TestGoldenLanguages: every kind of message of both scenarios, in every
// language besides English, as golden files to read (testdata/classic-de,
// ...), each covering every kind of section as English's do.
func TestGoldenLanguages(t *testing.T) {
	t.Parallel()
	for _, l := range languages(2)[1:] {
		t.Run(l.Tag, func(t *testing.T) {
			t.Parallel()
			_, g := playClassicIn(t, l.Tag)
			g.check()
			g.covers()
			_, g = playMafia150In(t, l.Tag)
			g.check()
			g.covers()
		})
	}
}

// TestNoEnglishLeftInTranslatedMail: a mail in another language holds no
// sentence of the host's own English: no run of words of an English
// template, and no English phrase of the code (a refusal, a cause of
// death, a setup line). The players' own words are relayed as written and
// are not the host's; the harness's players write English, so their posts
// are taken out before looking.
func TestNoEnglishLeftInTranslatedMail(t *testing.T) {
	t.Parallel()
	fragments := englishFragments(t)
	if len(fragments) < 300 {
		t.Fatalf("only %d English fragments to look for", len(fragments))
	}
	for _, l := range languages(2)[1:] {
		for _, play := range []func(*testing.T, string) (*harness, *goldens){playClassicIn, playMafia150In} {
			_, g := play(t, l.Tag)
			names := make([]string, 0, len(g.msgs))
			for n := range g.msgs {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				p := readBack(t, g.msgs[n].Raw)
				for part, body := range map[string]string{"text": p.goldenText(), "html": htmlWords(p.html)} {
					body = withoutPlayersWords(body)
					for _, f := range fragments {
						if strings.Contains(body, f) {
							t.Errorf("%s %s (%s): English left: %q", l.Tag, n, part, f)
						}
					}
				}
			}
		}
	}
}

// englishFragments are the runs of at least three words, and fifteen
// letters, that English's templates and phrases write around their fields.
func englishFragments(t *testing.T) []string {
	t.Helper()
	en := lang.Get(lang.Default)
	seen := map[string]bool{}
	add := func(s string) {
		for _, piece := range splitPieces.Split(s, -1) {
			piece = strings.Join(strings.Fields(piece), " ")
			if len(strings.Fields(piece)) >= 3 && len(piece) >= 15 && !ignoredFragment(piece) {
				seen[piece] = true
			}
		}
	}
	files, err := templates.Sources(en)
	if err != nil {
		t.Fatal(err)
	}
	for n, src := range files {
		if !strings.HasSuffix(n, ".txt") {
			continue
		}
		funcs := map[string]any{}
		for _, f := range templateFuncNames {
			funcs[f] = func() {}
		}
		trees, err := parse.Parse(n, src, "{{", "}}", funcs)
		if err != nil {
			t.Fatal(err)
		}
		for _, tree := range trees {
			eachText(tree.Root, func(s string) { add(s) })
		}
	}
	for _, p := range en.Phrases() {
		add(p)
	}
	for _, p := range lang.Get("de").Phrases() {
		// The phrases other languages word: their English keys.
		if !strings.HasPrefix(p, "@") {
			add(p)
		}
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// splitPieces cuts text at what is not prose: printf verbs, line ends,
// markup and the punctuation that ends a clause.
var splitPieces = regexp.MustCompile(`%(\[\d+\])?[-+# 0]*\d*(\.\d+)?[a-zA-Z]|\n|<[^>]*>|[.:;!?()"“”«»]`)

var templateFuncNames = []string{"section", "news", "tally", "footer", "fixed", "breakable", "addr", "commandlist", "commandline", "htmlrules", "subject", "plural", "list", "word", "lang",
	"paras", "add", "plainrules", "sub", "seq", "quote", "segments", "nest", "indent",
	"html", "js", "urlquery", "print", "printf", "println", "len", "index", "slice", "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "call"}

func eachText(n parse.Node, f func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			eachText(c, f)
		}
	case *parse.TextNode:
		f(string(n.Text))
	case *parse.IfNode:
		eachText(n.List, f)
		eachText(n.ElseList, f)
	case *parse.RangeNode:
		eachText(n.List, f)
		eachText(n.ElseList, f)
	case *parse.WithNode:
		eachText(n.List, f)
		eachText(n.ElseList, f)
	}
}

// ignoredFragment: words the host writes the same in every language —
// command syntax and names of things that are not words.
func ignoredFragment(s string) bool {
	up := 0
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			up++
		}
	}
	// Command lines such as "VOTE Name" or "MAIL DIGEST" stay English.
	return up*2 >= len(strings.ReplaceAll(s, " ", ""))
}

var tagRE = regexp.MustCompile(`<[^>]*>`)

// htmlWords is the HTML part's text, without markup, one space apart.
func htmlWords(h string) string {
	h = tagRE.ReplaceAllString(h, " ")
	h = strings.NewReplacer("&#39;", "'", "&quot;", `"`, "&amp;", "&", "&lt;", "<", "&gt;", ">", "&nbsp;", " ").Replace(h)
	return strings.Join(strings.Fields(h), " ")
}

// withoutPlayersWords drops the lines that quote players (the "> " lines
// of a relayed post) and the harness's English posts, which are theirs.
func withoutPlayersWords(body string) string {
	var keep []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), ">") {
			continue
		}
		keep = append(keep, line)
	}
	out := strings.Join(keep, "\n")
	for _, p := range harnessPosts {
		out = strings.ReplaceAll(out, p, "")
	}
	return strings.Join(strings.Fields(out), " ")
}

// harnessPosts are what the scenarios' players and referee write, in
// English whatever the game's language.
var harnessPosts = []string{
	"I have a bad feeling about", "Why the rush to vote?", "Stay calm, keep voting", "I will be away on Thursday, sorry.",
	"Please keep it civil, everyone.", "I was Town, you fools!", "Avenge me!", "pushed hard on me yesterday.",
	"That is a stretch.", "Good morning, town. Our Vigilante is busy already.", "A tie? Then we talk it out.",
	"I say we go for", "Frank here. I was framed!", "Is it fine if I vote late today? Travelling.",
	// A player quoting an English role message, and the referee's posts.
	"Secret role message of game dec26: do not share it", "Announcement from the referee", "The referee writes",
	"Official tally, Day 1", "Votes on players:", "asked for more time; I denied it, the day is long enough.",
	"Night 1 is over: Carol was killed by the Mafia",
}
