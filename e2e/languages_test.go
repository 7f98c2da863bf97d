//go:build integration

package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// TestGameInThreeLanguages plays a whole game on the embedded mail servers
// in which the game is German, one player has chosen French and one
// Spanish (LANGUE, IDIOMA: the verbs of their own language), and every
// player writes commands with their own language's verbs, or English's.
// Every command counts, and every mail each participant receives is in
// their language: its Content-Language says so, its words are that
// language's, and no English word of the host's is left in it.
func TestGameInThreeLanguages(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin"}
	want := map[string]string{"alice": "de", "bob": "fr", "carol": "es", "dave": "de", "erin": "de", ref: "de"}

	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel := created.ReplyTo
	g.send(ref, refChannel, "SETUP players=5 mafia=1 doctors=1 inspectors=0 vigilantes=0 language=de")
	waitFor(t, "the game in German", func() bool { return g.state().Setup.Language == "de" })
	for _, u := range users {
		verb := "JOIN"
		if u == "erin" {
			verb = "Mitspielen" // German for JOIN, as a German player writes it
		}
		g.send(u, "host+g1@example.org", verb+" "+strings.ToUpper(u[:1])+u[1:])
	}
	waitFor(t, "five players", func() bool { return len(g.state().Players) == 5 })
	slotOf := func(u string) int {
		for _, p := range g.state().Players {
			if strings.EqualFold(p.Name, u) {
				return p.Slot
			}
		}
		t.Fatalf("no player %s", u)
		return 0
	}
	_, bobPrivate := g.addrs(slotOf("bob"))
	_, carolPrivate := g.addrs(slotOf("carol"))
	g.send("bob", bobPrivate, "LANGUE français")
	g.send("carol", carolPrivate, "Idioma es")
	waitFor(t, "the players' own languages", func() bool {
		s := g.state()
		return s.Player(slotOf("bob")).Language == "fr" && s.Player(slotOf("carol")).Language == "es"
	})

	g.send(ref, refChannel, "START")
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	s := g.state()
	var mafioso, doctor string
	var town []string
	for _, p := range s.Players {
		u := strings.ToLower(p.Name)
		switch p.Role {
		case engine.Mafia:
			mafioso = u
		case engine.Doctor:
			doctor = u
		default:
			town = append(town, u)
		}
	}
	name := func(u string) string { return strings.ToUpper(u[:1]) + u[1:] }
	// Each player's own words for VOTE, LOCK, KILL and PROTECT.
	verbs := map[string][4]string{
		"alice": {"STIMME FÜR", "FESTLEGEN", "TÖTEN", "SCHÜTZEN"},
		"bob":   {"Voter pour", "Verrouiller", "Tuer", "Protéger"},
		"carol": {"Voto por", "Fijar", "Matar a", "Proteger a"},
		"dave":  {"VOTE", "LOCK", "KILL", "PROTECT"},
		"erin":  {"Stimme für", "festlegen", "töten", "schützen"},
	}
	// Day 1: everyone votes out a Townsperson, and locks.
	victim := town[0]
	for _, u := range town[1:] {
		if u != "bob" && u != "carol" {
			victim = u
		}
	}
	threads := map[string]string{}
	privates := map[string]string{}
	for _, u := range users {
		threads[u], privates[u] = g.addrs(slotOf(u))
	}
	for _, u := range users {
		target := victim
		if u == victim {
			target = mafioso
		}
		g.send(u, threads[u], verbs[u][0]+" "+name(target)+"\n"+verbs[u][1])
	}
	waitFor(t, "every vote counted and locked", func() bool {
		st := g.state()
		if st.Phase != engine.DayPhase || st.Day != 1 {
			return true // closed early, everyone having locked
		}
		for _, p := range st.Players {
			if !p.Alive || !p.Locked || p.Vote == 0 {
				return false
			}
		}
		return true
	})
	if g.state().Phase == engine.DayPhase && g.state().Day == 1 {
		g.advance(g.state().ClosesAt().Sub(g.clock()))
	}
	waitFor(t, "Night 1", func() bool { return g.state().Phase == engine.NightPhase })
	if g.state().Player(slotOf(victim)).Alive {
		t.Fatalf("%s survived the votes of Day 1", victim)
	}

	// Night 1: the Mafioso kills and the Doctor protects, each in their
	// own words.
	var prey string
	for _, u := range town {
		if u != victim {
			prey = u
		}
	}
	g.send(mafioso, privates[mafioso], verbs[mafioso][2]+" "+name(prey))
	g.send(doctor, privates[doctor], verbs[doctor][3]+" "+name(doctor))
	waitFor(t, "both night actions", func() bool {
		n := g.state().Night
		return n.Whack == slotOf(prey) && n.Protection(slotOf(doctor)) == slotOf(doctor)
	})
	g.advance(g.state().NightEndsAt().Sub(g.clock()))
	waitFor(t, "Day 2", func() bool { return g.state().Phase == engine.DayPhase && g.state().Day == 2 })

	// Day 2: the living vote out the Mafioso.
	for _, u := range users {
		p := g.state().Player(slotOf(u))
		if !p.Alive {
			continue
		}
		target := mafioso
		if u == mafioso {
			target = doctor
		}
		g.send(u, threads[u], verbs[u][0]+" "+name(target)+"\n"+verbs[u][1])
	}
	waitFor(t, "the end", func() bool {
		st := g.state()
		if st.Phase == engine.EndedPhase {
			return true
		}
		for _, p := range st.Players {
			if p.Alive && !p.Locked {
				return false
			}
		}
		g.advance(st.ClosesAt().Sub(g.clock()))
		return st.Phase == engine.EndedPhase
	})
	g.settled()

	if st := g.state(); st.Phase != engine.EndedPhase || st.Player(slotOf(mafioso)).Alive {
		t.Fatalf("the game did not end with the Mafioso voted out: %s", st.Phase)
	}

	for _, u := range append(users, ref) {
		letters := g.mailbox(u)
		if len(letters) < 5 {
			t.Errorf("%s received only %d mails", u, len(letters))
		}
		chosen := false
		for i, l := range letters {
			got := l.Header.Get("Content-Language")
			expect := want[u]
			switch {
			case u == ref && i == 0:
				expect = "en" // NEW GAME's answer, before SETUP language=de
			case (u == "bob" || u == "carol") && !chosen:
				// Until the player's choice, their mail is in the game's
				// language; the answer to it is the first in theirs.
				if got == want[u] {
					chosen = true
				} else {
					expect = "de"
				}
			}
			if got != expect {
				t.Errorf("%s's mail %d (%s, %q) has Content-Language %q, want %q", u, i, l.Kind, l.Subject, got, expect)
				continue
			}
			body := hostWords(l.Text)
			if lang := guessLanguage(body); lang != expect {
				t.Errorf("%s's mail %d (%s) reads as %q, not %q:\n%s", u, i, l.Kind, lang, expect, l.Text)
			}
			if w := englishWord.FindString(body); w != "" && expect != "en" {
				t.Errorf("%s's mail %d (%s) holds the English word %q:\n%s", u, i, l.Kind, w, l.Text)
			}
		}
	}
}

// hostWords is a mail's text without what players wrote: the quoted
// lines of relayed posts, and the commands they sent, quoted back in
// answers.
func hostWords(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		tl := strings.TrimSpace(line)
		if strings.HasPrefix(tl, ">") || strings.HasPrefix(tl, "✓") || strings.HasPrefix(tl, "✗") {
			continue
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}

// englishWord finds words of English prose that no German, French or
// Spanish sentence holds.
var englishWord = regexp.MustCompile(`(?i)\b(the|your|you|is|and|of|to|with|this|will)\b`)

// stopwords are words each language writes in almost every sentence and
// the others do not.
var stopwords = map[string]*regexp.Regexp{
	"de": regexp.MustCompile(`(?i)\b(der|die|das|und|ist|nicht|ein|eine|dein|deine|wird)\b`),
	"fr": regexp.MustCompile(`(?i)\b(le|les|et|une|est|vous|des|pas|ton|ta|tes)\b`),
	"es": regexp.MustCompile(`(?i)\b(el|los|las|y|una|para|del|con|tus)\b`),
	"en": englishWord,
}

// guessLanguage is the language whose stopwords the text holds most of.
func guessLanguage(text string) string {
	best, most := "", 0
	for tag, re := range stopwords {
		if n := len(re.FindAllString(text, -1)); n > most {
			best, most = tag, n
		}
	}
	return best
}
