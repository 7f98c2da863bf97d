package reply

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// A quoting template is how a client puts an author's text and the message
// answered together. The templates are made from the pattern table, so that
// every client and language in it is exercised.
type template struct {
	name string
	// build lays out the author's lines and the quoted lines. Quoted
	// lines that stay unmarked (an Outlook original) are marked as such by
	// the caller's tokens, not by ">".
	build func(author, quoted []string) string
}

// fill stands in for the "…" and "#" of a pattern: a date, a time and an
// address, as real attributions hold.
func fill(pattern string) string {
	s := strings.ReplaceAll(pattern, "…", "Mon, 3 Mar 2025 10:15 Mafia Host <host+oak-t-abcdefghij@example.org>")
	return strings.ReplaceAll(s, "#", "3")
}

func quoteLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = strings.TrimRight("> "+l, " ")
	}
	return out
}

func joinLines(parts ...[]string) string {
	var all []string
	for _, p := range parts {
		all = append(all, p...)
	}
	return strings.Join(all, "\n") + "\n"
}

func one(s ...string) []string { return s }

func templates() []template {
	var ts []template
	headers := map[string][]string{} // language -> header field lines
	var fromName = map[string]string{}
	for _, p := range tablePatterns() {
		p := p
		switch p.Kind {
		case kindAttribution:
			a := fill(p.Text)
			ts = append(ts,
				template{p.Lang + " " + p.Client + " top-posted: " + p.Text, func(au, q []string) string {
					return joinLines(au, one("", a, ""), quoteLines(q))
				}},
				template{p.Lang + " " + p.Client + " bottom-posted, inline: " + p.Text, func(au, q []string) string {
					h := len(q) / 2
					return joinLines(one(a), quoteLines(q[:h]), one(""), au, one(""), quoteLines(q[h:]))
				}},
				template{p.Lang + " " + p.Client + " original unquoted below: " + p.Text, func(au, q []string) string {
					return joinLines(au, one("", a, ""), q)
				}})
		case kindOriginal, kindForward:
			sep := "-----" + p.Text + "-----"
			if strings.HasSuffix(p.Text, ":") {
				sep = p.Text
			}
			ts = append(ts, template{p.Lang + " " + p.Client + " separator: " + p.Text, func(au, q []string) string {
				return joinLines(au, one("", sep), q)
			}})
		case kindMobile:
			sig := strings.ReplaceAll(p.Text, "…", "iPhone")
			ts = append(ts,
				template{p.Lang + " " + p.Client + " signature above a quote: " + p.Text, func(au, q []string) string {
					return joinLines(au, one("", sig, ""), quoteLines(append(one(fill("On … wrote:"), ""), q...)))
				}},
				template{p.Lang + " " + p.Client + " signature above an unmarked original: " + p.Text, func(au, q []string) string {
					return joinLines(au, one("", sig, ""), q)
				}})
		case "from":
			if fromName[p.Lang] == "" {
				fromName[p.Lang] = p.Text
			}
		default:
			if len(headers[p.Lang]) == 0 || p.Kind == "date" && len(headers[p.Lang]) < 2 {
				headers[p.Lang] = append(headers[p.Lang], p.Text+": Monday, March 3, 2025 10:15 AM")
			}
		}
	}
	for lang, fields := range headers {
		block := append(one("________________________________", fromName[lang]+": Mafia Host <host@example.org>"), fields...)
		ts = append(ts, template{lang + " Outlook header block", func(au, q []string) string {
			return joinLines(au, one(""), block, one(""), q)
		}})
	}
	return ts
}

var (
	commandLines = []string{"VOTE Bob", "vote carol", "UNVOTE", "LOCK", "UNLOCK", "Alice >> Bob", "KILL Dana",
		"NO KILL", "INSPECT Eve", "PROTECT Finn", "SHOOT Gus", "PASS", "TALLY", "STATUS", "HELP", "EXTEND", "VOTE NULL"}
	words = []string{"Bob", "is", "lying", "I", "think", "Carol", "the", "doctor", "claimed", "yesterday", "and", "nobody",
		"believes", "her", "er", "lügt", "il", "ment", "miente", "mente", "kłamie", "врёт", "他在说谎", "嘘つき", "거짓말",
		"because", "vote", "tally", "wrote", "from", "sent", "on", "Monday", "10:15", "2025", "bob@example.org", "—"}
	// quotedWords may be anything a quoted message holds, addresses too.
	quotedWords = append([]string{"<bob@example.org>", "From:", "Sent:", "wrote:", "-----Original Message-----"}, words...)
)

func randomAuthor(r *rand.Rand) (lines, commands []string) {
	n := 1 + r.IntN(8)
	for range n {
		switch r.IntN(4) {
		case 0, 1:
			c := commandLines[r.IntN(len(commandLines))]
			lines, commands = append(lines, c), append(commands, c)
		case 2:
			lines = append(lines, "")
		default:
			var ws []string
			for range 1 + r.IntN(12) {
				ws = append(ws, words[r.IntN(len(words))])
			}
			lines = append(lines, strings.Join(ws, " ")+[]string{".", "!", "?", ""}[r.IntN(4)])
		}
	}
	if len(commands) == 0 {
		c := commandLines[r.IntN(len(commandLines))]
		lines, commands = append(lines, c), append(commands, c)
	}
	return lines, commands
}

// randomQuoted is any text: each line carries a token, so that a quoted line
// found in the author's text is told apart from the author's own words.
func randomQuoted(r *rand.Rand) []string {
	n := 2 + r.IntN(10)
	var ls []string
	for i := range n {
		if r.IntN(5) == 0 {
			ls = append(ls, "")
			continue
		}
		var ws []string
		for range r.IntN(20) {
			ws = append(ws, quotedWords[r.IntN(len(quotedWords))])
		}
		if r.IntN(3) == 0 {
			ws = append(ws, commandLines[r.IntN(len(commandLines))])
		}
		ls = append(ls, fmt.Sprintf("QUOTED%d %s", i, strings.Join(ws, " ")))
	}
	return ls
}

// TestCommandsSurviveEveryTemplate: for any author text and any quoted
// text, every command line the author wrote is in the author's text, and no
// quoted line is, under every client's quoting template.
func TestCommandsSurviveEveryTemplate(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2025))
	ts := templates()
	if len(ts) < 300 {
		t.Fatalf("only %d templates", len(ts))
	}
	runs := 0
	for _, tpl := range ts {
		for range 20 {
			author, commands := randomAuthor(r)
			quoted := randomQuoted(r)
			text := tpl.build(author, quoted)
			p := Split(text)
			runs++
			have := map[string]bool{}
			for _, l := range strings.Split(p.New, "\n") {
				have[l] = true
			}
			for _, c := range commands {
				if !have[c] {
					t.Fatalf("%s: command %q lost\ntext:\n%s\nnew:\n%s\nunsure:\n%s", tpl.name, c, text, p.New, p.Unsure)
				}
			}
			if strings.Contains(p.New, "QUOTED") {
				t.Fatalf("%s: quoted text in the author's\ntext:\n%s\nnew:\n%s", tpl.name, text, p.New)
			}
		}
	}
	t.Logf("%d templates, %d replies", len(ts), runs)
}
