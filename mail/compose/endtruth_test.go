package compose_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mimepart"
)

// dawnWords is how each language's story begins a night's dawn: a night
// the game's end cut short had no dawn, and its account must not say it
// had one.
var dawnWords = map[string]string{"en": "At dawn", "de": "Im Morgengrauen", "fr": "À l'aube", "es": "Al amanecer"}

// endGame plays a small game (one Mafioso, a Doctor, a Vigilante and
// Townspeople) to its end in one of the ways a game ends, and returns the
// harness with every event logged.
type endGame struct {
	name string
	play func(t *testing.T, h *harness)
}

// smallGame signs up and starts a game of six: Mafia, Doctor, Vigilante
// and three Townspeople.
func smallGame(t *testing.T, tag string) *harness {
	t.Helper()
	st, err := engine.ParseSetup(engine.Classic(), "players=6 mafia=1 doctors=1 vigilantes=1")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, inLanguage(st, tag), "end6", 11)
	h.c.SetLanguage(tag)
	if tag != lang.Default {
		h.sampled() // the English game cross-checks every batch
	}
	h.signup(names11[:6])
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	return h
}

// voteOut has every living player but skip vote for target.
func (h *harness) voteOut(target string, skip ...string) {
	h.t.Helper()
	for _, p := range h.s.Players {
		if !p.Alive || containsName(skip, p.Name) {
			continue
		}
		to := target
		if p.Name == target {
			// The target votes for someone else, who gets fewer votes.
			for _, q := range h.s.Players {
				if q.Alive && q.Name != target && !containsName(skip, q.Name) {
					to = q.Name
					break
				}
			}
		}
		h.ok(h.player(p.Name), engine.Thread, "VOTE "+to, vote(to))
	}
}

func containsName(names []string, n string) bool {
	for _, m := range names {
		if m == n {
			return true
		}
	}
	return false
}

var endGames = []endGame{
	{"vote", func(t *testing.T, h *harness) {
		m := h.withRole(engine.Mafia)[0]
		h.voteOut(m)
		h.untilClose()
	}},
	{"night kill", func(t *testing.T, h *harness) {
		// Day 1 leaves the Mafioso, the Doctor and the Vigilante; the
		// Mafia kill the Doctor, who protected the Vigilante: one against
		// one, and the Mafia win at dawn.
		m, doc, vig := h.withRole(engine.Mafia)[0], h.withRole(engine.Doctor)[0], h.withRole(engine.Vigilante)[0]
		towns := h.withRole(engine.Townsperson)
		h.voteOut(towns[0])
		h.untilClose()
		h.modkill(towns[1])
		h.modkill(towns[2])
		h.ok(h.player(m), engine.Private, "KILL "+doc, at(engine.CmdKill, doc))
		h.ok(h.player(doc), engine.Private, "PROTECT "+vig, at(engine.CmdProtect, vig))
		h.ok(h.player(vig), engine.Private, "PASS", verb(engine.CmdPass))
		h.untilClose()
	}},
	{"vigilante shot", func(t *testing.T, h *harness) {
		// The Mafia's kill is blocked by the Doctor and the Vigilante
		// shoots the Mafioso: the Town wins at dawn.
		m, doc, vig := h.withRole(engine.Mafia)[0], h.withRole(engine.Doctor)[0], h.withRole(engine.Vigilante)[0]
		towns := h.withRole(engine.Townsperson)
		h.voteOut(towns[0])
		h.untilClose()
		h.ok(h.player(m), engine.Private, "KILL "+towns[1], at(engine.CmdKill, towns[1]))
		h.ok(h.player(doc), engine.Private, "PROTECT "+towns[1], at(engine.CmdProtect, towns[1]))
		h.ok(h.player(vig), engine.Private, "SHOOT "+m, at(engine.CmdShoot, m))
		h.untilClose()
	}},
	{"second missed vote", func(t *testing.T, h *harness) {
		// The Mafioso votes on neither day; the Mafia's kill in between is
		// blocked. The second missed vote removes the Mafioso: the Town
		// wins at the close of Day 2.
		m, doc, vig := h.withRole(engine.Mafia)[0], h.withRole(engine.Doctor)[0], h.withRole(engine.Vigilante)[0]
		towns := h.withRole(engine.Townsperson)
		h.voteOut(towns[0], m)
		h.untilClose()
		h.ok(h.player(m), engine.Private, "KILL "+vig, at(engine.CmdKill, vig))
		h.ok(h.player(doc), engine.Private, "PROTECT "+vig, at(engine.CmdProtect, vig))
		h.ok(h.player(vig), engine.Private, "PASS", verb(engine.CmdPass))
		h.untilClose()
		h.voteOut(towns[1], m)
		h.untilClose()
	}},
	{"referee END by night", func(t *testing.T, h *harness) {
		// The referee removes a player in the night and ends the game
		// before the dawn: the night had no dawn.
		m := h.withRole(engine.Mafia)[0]
		towns := h.withRole(engine.Townsperson)
		h.voteOut(towns[0])
		h.untilClose()
		h.ok(h.player(m), engine.Private, "KILL "+towns[1], at(engine.CmdKill, towns[1]))
		h.modkill(towns[2])
		h.ok(engine.Referee, engine.Private, "END", verb(engine.CmdEnd))
	}},
	{"referee END by day", func(t *testing.T, h *harness) {
		m := h.withRole(engine.Mafia)[0]
		towns := h.withRole(engine.Townsperson)
		h.voteOut(towns[0])
		h.untilClose()
		h.ok(h.player(m), engine.Private, "KILL "+towns[1], at(engine.CmdKill, towns[1]))
		h.untilClose()
		h.ok(engine.Referee, engine.Private, "END", verb(engine.CmdEnd))
	}},
}

func (h *harness) modkill(name string) {
	h.t.Helper()
	h.ok(engine.Referee, engine.Private, "MODKILL "+name, at(engine.CmdModkill, name))
}

// TestEndMailTellsTheLastNight plays games that end by a vote, a night
// kill, a Vigilante's shot, a second missed vote and the referee's END,
// and reads each end mail's account of the nights and deaths against the
// event log, in every language: each dawn's deaths with their causes and
// its blocked kills, no dawn for a night the end cut short, and every
// death at the time and in the part of the story it happened.
func TestEndMailTellsTheLastNight(t *testing.T) {
	t.Parallel()
	for _, g := range endGames {
		for _, l := range languages(1) {
			t.Run(g.name+"/"+l.Tag, func(t *testing.T) {
				h := smallGame(t, l.Tag)
				g.play(t, h)
				if h.s.Phase != engine.EndedPhase {
					t.Fatalf("the game did not end (phase %s)", h.s.Phase)
				}
				var end *sent
				for i := range h.all {
					if h.all[i].Kind == compose.KindEnd && h.all[i].Recipient == "s1" {
						end = &h.all[i]
					}
				}
				if end == nil {
					t.Fatal("no end mail to s1")
				}
				text := mimepart.DecodeFlowed(readBack(t, end.Raw).text, false)
				checkEndAccount(t, h, l, text)
			})
		}
	}
}

// checkEndAccount reads an end mail's text against the log.
func checkEndAccount(t *testing.T, h *harness, l *lang.Language, text string) {
	t.Helper()
	lines := strings.Split(text, "\n")
	// The night sections of the story: from the title to the next blank
	// line.
	night := func(n int) []string {
		title := l.Sprintf("Night %d", n)
		for i, ln := range lines {
			if strings.TrimSpace(ln) != title {
				continue
			}
			var out []string
			for _, x := range lines[i+1:] {
				if strings.TrimSpace(x) == "" {
					break
				}
				out = append(out, strings.TrimSpace(x))
			}
			return out
		}
		return nil
	}
	dawnOf := map[int]engine.Event{}
	nights := map[int]bool{}
	var deaths []engine.Event
	for _, lg := range h.history {
		switch e := lg.Event; e.Type {
		case engine.EvNightStarted:
			nights[e.Day] = true
		case engine.EvDawn:
			dawnOf[e.Day] = e
		case engine.EvPlayerDied:
			deaths = append(deaths, e)
		}
	}
	// The end mail's first lines lead with the news of the step that
	// ended the game: a dawn among them names each of its dead.
	var lastDawn *engine.Event
	for _, lg := range h.history {
		if lg.Event.Type == engine.EvDawn {
			e := lg.Event
			lastDawn = &e
		}
	}
	if lastDawn != nil && h.history[len(h.history)-1].Event.Type == engine.EvGameEnded {
		lead := strings.Join(lines[:min(4, len(lines))], "\n")
		for i := len(h.history) - 1; i >= 0 && h.history[i].Event.Type != engine.EvDawn; i-- {
			if h.history[i].Event.Type == engine.EvDayStarted || h.history[i].Event.Type == engine.EvRoundClosed {
				lastDawn = nil // the dawn was an earlier step's news
				break
			}
		}
		if lastDawn != nil {
			for _, d := range lastDawn.Deaths {
				if !strings.Contains(lead, d.Name) {
					t.Errorf("the dawn that ended the game killed %s; the end mail's first lines do not say so:\n%s", d.Name, lead)
				}
			}
		}
	}
	if len(nights) == 0 && strings.Contains(text, dawnWords[l.Tag]) {
		t.Errorf("no night was played, yet the end mail tells of a dawn:\n%s", text)
	}
	for n := range nights {
		sec := night(n)
		if sec == nil {
			t.Errorf("the end mail has no %q:\n%s", l.Sprintf("Night %d", n), text)
			continue
		}
		joined := strings.Join(sec, "\n")
		var dawnLines []string
		for _, ln := range sec {
			if strings.HasPrefix(ln, dawnWords[l.Tag]) {
				dawnLines = append(dawnLines, ln)
			}
		}
		dawn, had := dawnOf[n]
		if !had {
			if len(dawnLines) > 0 {
				t.Errorf("night %d had no dawn (the game ended first), yet the end mail says %q", n, dawnLines)
			}
			continue
		}
		if len(dawn.Deaths) == 0 && len(dawnLines) != 1 {
			t.Errorf("night %d: no one died at dawn; the end mail's dawn lines: %q", n, dawnLines)
		}
		if len(dawn.Deaths) > 0 && len(dawnLines) != len(dawn.Deaths) {
			t.Errorf("night %d: %d died at dawn; the end mail's dawn lines: %q", n, len(dawn.Deaths), dawnLines)
		}
		for _, d := range dawn.Deaths {
			want := d.Name + ", " + l.Phrase(compose.CauseWords(d.Cause))
			if !strings.Contains(strings.Join(dawnLines, "\n"), want) {
				t.Errorf("night %d: the dawn killed %s (%s); the end mail's dawn lines: %q", n, d.Name, d.Cause, dawnLines)
			}
		}
		blocked := l.Phrase("The Doctor's protection saved a life.")
		if dawn.Blocked > 1 {
			blocked = l.Sprintf("The Doctor's protection blocked %d attacks.", dawn.Blocked)
		}
		if got := strings.Contains(joined, blocked); got != (dawn.Blocked > 0) {
			t.Errorf("night %d: the dawn blocked %d kills; the end mail's night says %q", n, dawn.Blocked, sec)
		}
	}
	// Every death, by name and cause, in the list of roles and in the
	// story; the dawn's deaths were checked above.
	for _, d := range deaths {
		want := d.Name + ", " + l.Phrase(compose.CauseWords(engine.Cause(d.Reason))) + ", "
		if !strings.Contains(text, want) {
			t.Errorf("%s died (%s) at %s; the end mail's story does not say %q:\n%s", d.Name, d.Reason, d.At.Format("Mon 15:04"), want, text)
		}
	}
	for _, p := range h.s.Players {
		if p.Alive {
			continue
		}
		want := fmt.Sprintf("- %s", p.Name)
		found := false
		for _, ln := range lines {
			if strings.HasPrefix(ln, want) && strings.HasSuffix(ln, ", "+l.Phrase(compose.CauseWords(p.Cause))) {
				found = true
			}
		}
		if !found {
			t.Errorf("the end mail's roles do not say that %s was %s", p.Name, l.Phrase(compose.CauseWords(p.Cause)))
		}
	}
}

// TestResumeSaysWhereTheDeadlineMoved: the mail of RESUME says by how much
// every deadline moved and when the round, or the night, now ends, as an
// absolute time with its zone.
func TestResumeSaysWhereTheDeadlineMoved(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, night := range []bool{false, true} {
		h := smallGame(t, "en")
		if night {
			h.voteOut(h.withRole(engine.Townsperson)[0])
			h.untilClose()
		}
		h.ok(engine.Referee, engine.Private, "PAUSE", verb(engine.CmdPause))
		h.now = h.now.Add(3*time.Hour + 20*time.Minute)
		r := h.ok(engine.Referee, engine.Private, "RESUME", verb(engine.CmdResume))
		text := mimepart.DecodeFlowed(readBack(t, toKind(t, r.msgs, "s1", compose.KindThread).Raw).text, false)
		end, say := h.s.ClosesAt(), "voting now closes "
		if night {
			end, say = h.s.Night.End, "the night now ends "
		}
		want := "moved by the length of the pause, 3 h 20 min: " + say + end.In(ny).Format("Mon 2 Jan 2006 15:04 MST")
		if !strings.Contains(text, want) {
			t.Errorf("night=%v: the mail of RESUME does not say %q:\n%s", night, want, text)
		}
	}
}

// TestFinalTallyCountsANullVoteAsMissed: at the close a null vote is a
// missed vote (D3), and the final tally says so rather than what would
// happen "if still null at the close".
func TestFinalTallyCountsANullVoteAsMissed(t *testing.T) {
	t.Parallel()
	h := smallGame(t, "en")
	m := h.withRole(engine.Mafia)[0]
	towns := h.withRole(engine.Townsperson)
	h.ok(h.player(m), engine.Thread, "VOTE NULL", vote("null"))
	h.voteOut(towns[0], m)
	msgs := h.untilClose()
	text := mimepart.DecodeFlowed(readBack(t, toKind(t, msgs, "s1", compose.KindThread).Raw).text, false)
	if want := "- " + m + ": null, a missed vote"; !strings.Contains(text, want) {
		t.Errorf("the final tally does not say %q:\n%s", want, text)
	}
	if strings.Contains(text, "if still null at the close") {
		t.Errorf("the final tally speaks of the close as still to come:\n%s", text)
	}
	if want := m + " has missed 1 vote"; !strings.Contains(text, want) {
		t.Errorf("the close does not say %q:\n%s", want, text)
	}
}
