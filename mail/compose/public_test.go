package compose_test

import (
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// TestPublicCopiesSameForEveryRole plays the classic and the mafia150
// scenario and compares, for every thread mail and digest, the copies of
// all players of the same standing (alive or not, the same vote, the same
// missed votes), line by line, text and HTML: nothing in a public copy may
// depend on the reader's hidden role (C5), by day or by night. Their own
// reply addresses and their own actions told as theirs are the only
// differences allowed.
func TestPublicCopiesSameForEveryRole(t *testing.T) {
	t.Parallel()
	for _, play := range []struct {
		name string
		run  func(*testing.T) (*harness, *goldens)
	}{{"classic", playClassic}, {"mafia150", playMafia150}} {
		t.Run(play.name, func(t *testing.T) {
			t.Parallel()
			h, _ := play.run(t)
			people := h.participants()
			// A reader's own actions are told to them as theirs ("▸ You vote
			// Bob"): that depends on who they are, not on their role, and is
			// left out along with their own reply addresses.
			// A reader who chose a zone (ZONE) sees their own time beside
			// the game's: that is their choice, not their role, and is left
			// out too.
			ownTime := regexp.MustCompile(` \([A-Z][a-z]{2} \d\d:\d\d [^ ()]+ for you\)`)
			normal := func(s string) string {
				for _, p := range people {
					if p.token != "" {
						s = strings.ReplaceAll(s, p.token, "TOKEN")
					}
				}
				return ownTime.ReplaceAllString(s, "")
			}
			// theirs tells a reader's own actions as anyone else's copy does.
			theirs := func(s, name string) string {
				lines := strings.Split(s, "\n")
				for i, l := range lines {
					if !strings.Contains(l, "▸ You ") && !strings.Contains(l, ">You write") {
						continue
					}
					for _, f := range [][2]string{{"You withdraw your vote", name + " withdraws their vote"},
						{"You lock your vote", name + " locks their vote"}, {"You unlock your vote", name + " unlocks their vote"},
						{"You vote", name + " votes"}, {"You write", name + " writes"}} {
						l = strings.Replace(l, f[0], f[1], 1)
					}
					lines[i] = l
				}
				return strings.Join(lines, "\n")
			}
			type copyOf struct {
				m          sent
				text, html string
			}
			groups := map[string][]copyOf{}
			for _, m := range h.all {
				if m.Kind != compose.KindThread || m.standing == "" || m.actor {
					continue
				}
				p := readBack(t, m.Raw)
				text := mimepart.DecodeFlowed(p.text, strings.EqualFold(p.textDelSp, "yes"))
				key := fmt.Sprint(m.batch) + " " + m.step + " " + m.Kind + " " + strings.Join(m.Contents, ",") + " " + m.standing
				name := h.s.Player(slotOf(m.Recipient)).Name
				groups[key] = append(groups[key], copyOf{m, theirs(normal(text), name), theirs(normal(p.html), html.EscapeString(name))})
			}
			crossRole := map[engine.Phase]int{}
			keys := make([]string, 0, len(groups))
			for k := range groups {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				g := groups[k]
				roles := map[engine.Role]bool{}
				for _, c := range g {
					roles[c.m.role] = true
					for form, pair := range map[string][2]string{"text": {g[0].text, c.text}, "html": {g[0].html, c.html}} {
						if pair[0] != pair[1] {
							t.Errorf("%s: the %s copies of %s (%s) and %s (%s) differ at %s", k, form,
								g[0].m.Recipient, g[0].m.role, c.m.Recipient, c.m.role, diff(pair[0], pair[1]))
						}
					}
				}
				if len(roles) > 1 {
					crossRole[g[0].m.phase]++
				}
			}
			// The comparison must have had something to compare: copies for
			// readers of different roles, by day and by night.
			for _, ph := range []engine.Phase{engine.DayPhase, engine.NightPhase} {
				if crossRole[ph] == 0 {
					t.Errorf("no thread mail in the %s phase had copies for readers of the same standing and different roles", ph)
				}
			}
			t.Logf("compared %d groups of copies; across roles: %d by day, %d by night",
				len(groups), crossRole[engine.DayPhase], crossRole[engine.NightPhase])
		})
	}
}

// slotOf is the seat of a recipient key "s3".
func slotOf(key string) int {
	var slot int
	fmt.Sscanf(key, "s%d", &slot)
	return slot
}

// TestPostCannotSpeakInTheHostsVoice: a post made of the host's own lines
// reaches every reader as the player's post: in the text, every line of it
// quoted under the author's name, none standing alone as the host's; in the
// HTML, inside the tinted block that carries the author's name.
func TestPostCannotSpeakInTheHostsVoice(t *testing.T) {
	t.Parallel()
	h := started(t)
	author := h.town()[0]
	// The same reader's copy of a plain post shows how often the host
	// writes such lines itself (the official tally ends every copy).
	baseline := map[string]compose.Outgoing{}
	for _, m := range h.ok(h.player(author), engine.Thread, "", post("Hello.")).msgs {
		baseline[m.Recipient] = m
	}
	r := h.ok(h.player(author), engine.Thread, "", post(hostVoice))
	var copied []string
	for _, l := range strings.Split(hostVoice, "\n") {
		if l != "" {
			copied = append(copied, l)
		}
	}
	standalone := func(text, l string) int {
		n := 0
		for _, tl := range strings.Split(text, "\n") {
			if tl == l {
				n++
			}
		}
		return n
	}
	n := 0
	for _, m := range r.msgs {
		if m.Kind != compose.KindThread || m.Recipient == h.key(author) {
			continue
		}
		n++
		p := readBack(t, m.Raw)
		text := mimepart.DecodeFlowed(p.text, strings.EqualFold(p.textDelSp, "yes"))
		bp := readBack(t, baseline[m.Recipient].Raw)
		btext := mimepart.DecodeFlowed(bp.text, strings.EqualFold(bp.textDelSp, "yes"))
		if first, _, _ := strings.Cut(text, "\n"); first != author+" writes" {
			t.Errorf("%s: the copy opens with %q, not the author's name", m.Recipient, first)
		}
		for _, l := range copied {
			if got, host := standalone(text, l), standalone(btext, l); got != host {
				t.Errorf("%s: %q stands alone %d times in the text, the host's own mail has it %d times", m.Recipient, l, got, host)
			}
			if standalone(text, "> "+l) != 1 {
				t.Errorf("%s: %q is not quoted once under its author", m.Recipient, l)
			}
		}
		open := strings.Index(p.html, "<blockquote")
		end := strings.LastIndex(p.html, "</blockquote>")
		if open < 0 || end < open {
			t.Fatalf("%s: the HTML has no block for the post", m.Recipient)
		}
		block := p.html[open:end]
		if !strings.Contains(block, ">"+author+" writes:</p>") {
			t.Errorf("%s: the post's HTML block does not carry its author's name", m.Recipient)
		}
		for _, l := range copied {
			esc := html.EscapeString(l)
			if !strings.Contains(block, esc) {
				t.Errorf("%s: %q is not in the post's block in the HTML", m.Recipient, l)
			}
			if got, host := strings.Count(p.html, esc)-strings.Count(block, esc), strings.Count(bp.html, esc); got != host {
				t.Errorf("%s: %q shows %d times outside the post's block in the HTML, the host's own mail has it %d times", m.Recipient, l, got, host)
			}
		}
	}
	if n == 0 {
		t.Fatal("no reader's copy of the post to check")
	}
}

// TestMisdirectedSameShapeForEveryRole: the answer to a message sent to the
// bare host address reads the same for every player, whatever their role,
// but for their own name and addresses.
func TestMisdirectedSameShapeForEveryRole(t *testing.T) {
	t.Parallel()
	h := started(t)
	var first string
	roles := map[engine.Role]bool{}
	for _, p := range h.s.Players {
		m, err := h.c.Misdirected(compose.Misdirected{State: h.s, Dir: h.dir, Slot: p.Slot, Channel: engine.Thread,
			Lines: []string{"VOTE Zed", "Zed dodges."}, Cause: "<x@players.example.net>", Subject: "Re: [dec26] Day 1",
			Received: h.now, Now: h.now})
		if err != nil {
			t.Fatal(err)
		}
		rb := readBack(t, m.Raw)
		norm := strings.NewReplacer(p.Token, "TOKEN", p.Name, "NAME", p.Address, "ADDR", h.key(p.Name), "KEY")
		copyOf := norm.Replace(rb.goldenText() + rb.html)
		roles[p.Role] = true
		if first == "" {
			first = copyOf
			continue
		}
		if copyOf != first {
			t.Errorf("%s's answer (%s) differs: %s", p.Name, p.Role, diff(first, copyOf))
		}
	}
	if len(roles) < 2 {
		t.Fatal("no two roles to compare")
	}
}

func TestConversationOfAMessageID(t *testing.T) {
	t.Parallel()
	c, err := compose.New("host@example.org")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{
		"<dec26.42.s10.t.post@example.org>":                "dec26 thread",
		"<m150.59-84.a-14ff1711a781.t.digest@example.org>": "m150 thread",
		"<dec26.thread@example.org>":                       "dec26 thread",
		"<dec26.thread.d2@example.org>":                    "dec26 thread",
		"<dec26.thread.end@example.org>":                   "dec26 thread",
		"<dec26.mafia.n1@example.org>":                     "dec26 mafia",
		"<dec26.0123456789abcdef01234567@example.org>":     "",
		"<dec26.mafia@example.org>":                        "dec26 mafia",
		"<dec26.12.s2.m.mafia@example.org>":                "dec26 mafia",
		"<dec26.p.s3@example.org>":                         "dec26 private",
		"<dec26.re.34325f085780.s3@example.org>":           "dec26 private",
		"<dec26.42.s10.t.post@elsewhere.example>":          "",
		"<CAF=x@mail.gmail.com>":                           "",
	} {
		game, ch, ok := c.Conversation(id)
		got := ""
		if ok {
			got = game + " " + string(ch)
		}
		if got != want {
			t.Errorf("Conversation(%s) = %q, want %q", id, got, want)
		}
	}
}
