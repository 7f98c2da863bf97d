//go:build integration

package e2e

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestNightSecretsStayOutOfTheTownsMail plays a night of a mafia150 game
// cut to nine seats (two Mafiosi, an Inspector, a Doctor, a Vigilante and
// four Townspeople) through the embedded mail servers, as `serve
// --embedded` runs it, with every night role acting in turn: the Mafia's
// KILL, the INSPECT, the Vigilante's SHOOT and then PASS, a mafia-list
// post, the Doctor's private STATUS, and the Doctor's PROTECT last, after
// which every action is in. After the nightfall and after each of these,
// a Townsperson posts to the thread and another asks for their STATUS and
// a TALLY; the copies they read over IMAP (every living player's copy of
// the post, the Mafia's and the night roles' included, and the STATUS and
// TALLY answers) must be the same, byte for byte, as after the nightfall.
// Only what names a message is left out of the comparison: its
// Message-ID, the MIME boundaries drawn from it, the reader's own message
// it answers, and the receiving server's trace fields. The Date stays in:
// the game's clock does not move during the night's secrets, so any Date
// a secret pushed later would show. Then the clock reaches the first
// 6-hour mark and the night ends there: the early end is told at dawn,
// not before.
func TestNightSecretsStayOutOfTheTownsMail(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"}
	refChannel := g.started(ref, "SETUP mafia150 players=9 mafia=2", users)
	g.send(ref, refChannel, "CLOSE")
	waitFor(t, "Night 1", func() bool { return g.state().Phase == engine.NightPhase })

	s := g.state()
	roles := map[engine.Role][]int{}
	for _, p := range s.Players {
		roles[p.Role] = append(roles[p.Role], p.Slot)
	}
	if len(roles[engine.Mafia]) != 2 || len(roles[engine.Inspector]) != 1 || len(roles[engine.Doctor]) != 1 ||
		len(roles[engine.Vigilante]) != 1 || len(roles[engine.Townsperson]) != 4 {
		t.Fatalf("roles: %v", roles)
	}
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	name := func(slot int) string { return s.Player(slot).Name }
	private := func(slot int) string { _, p := g.addrs(slot); return p }
	thread := func(slot int) string { t, _ := g.addrs(slot); return t }
	m1, m2 := roles[engine.Mafia][0], roles[engine.Mafia][1]
	insp, doc, vig := roles[engine.Inspector][0], roles[engine.Doctor][0], roles[engine.Vigilante][0]
	reader, poster, victim := roles[engine.Townsperson][0], roles[engine.Townsperson][1], roles[engine.Townsperson][2]
	living := s.Living()
	start := s.Night.Start
	g.settled()

	// look posts to the thread and asks for a STATUS and a TALLY, and
	// returns the n-th copy of each as its readers got it.
	type copies map[string]string
	const post = "Still here, and listening."
	n := 0
	look := func() copies {
		t.Helper()
		n++
		g.send(user(poster), thread(poster), post)
		g.send(user(reader), private(reader), "STATUS")
		status := fmt.Sprintf("c%d.%s@example.org", g.n, user(reader))
		g.send(user(reader), private(reader), "TALLY")
		tally := fmt.Sprintf("c%d.%s@example.org", g.n, user(reader))
		out := copies{}
		for _, slot := range living {
			l := g.nth(user(slot), "copy of the post", n, func(l letter) bool {
				return l.Kind == "thread" && strings.Contains(l.Text, post)
			})
			out[name(slot)+"'s copy of the post"] = townCopy(l)
		}
		out["the STATUS answer"] = townCopy(g.nth(user(reader), "answer to STATUS", n, func(l letter) bool {
			return l.Kind == "confirm" && strings.Contains(l.Text, "STATUS")
		}), status)
		out["the TALLY answer"] = townCopy(g.nth(user(reader), "answer to TALLY", n, func(l letter) bool {
			return l.Kind == "error" && strings.Contains(l.Text, "TALLY")
		}), tally)
		return out
	}
	before := look()
	if !strings.Contains(before["the STATUS answer"], "at the latest") {
		t.Fatalf("the STATUS answer names no end of the night:\n%s", before["the STATUS answer"])
	}

	for _, step := range []struct {
		what      string
		by        int
		to        string
		body      string
		happened  func(*engine.State) bool
		whoLearns int // a reader who is sent the secret, 0 for none
	}{
		{"the Mafia's KILL", m1, private(m1), "KILL " + name(victim),
			func(s *engine.State) bool { return s.Night.Whack == victim }, m2},
		{"the INSPECT", insp, private(insp), "INSPECT " + name(m2),
			func(s *engine.State) bool { return len(s.Night.Inspects) == 1 }, 0},
		{"the Vigilante's SHOOT", vig, private(vig), "SHOOT " + name(m1),
			func(s *engine.State) bool { return s.Night.ShotOf(vig) == m1 }, 0},
		{"the Vigilante's PASS", vig, private(vig), "PASS",
			func(s *engine.State) bool { return s.Night.Passed(vig) && s.Night.ShotOf(vig) == 0 }, 0},
		{"a mafia-list post", m2, "host+g1-m-" + s.Player(m2).Token + "@example.org", "Quiet tonight. Let them talk.",
			nil, m1},
		{"the Doctor's STATUS", doc, private(doc), "STATUS", nil, doc},
		{"the Doctor's PROTECT, the last action", doc, private(doc), "PROTECT " + name(reader),
			func(s *engine.State) bool { return s.Night.Protection(doc) == reader }, 0},
	} {
		learnt := 0
		if step.whoLearns > 0 {
			learnt = len(g.mailbox(user(step.whoLearns)))
		}
		g.send(user(step.by), step.to, step.body)
		if step.happened != nil {
			waitFor(t, step.what, func() bool { return step.happened(g.state()) })
		}
		if step.whoLearns > 0 {
			waitFor(t, step.what+" reaching "+name(step.whoLearns), func() bool { return len(g.mailbox(user(step.whoLearns))) > learnt })
		}
		g.settled()
		after := look()
		for k, want := range before {
			if got := after[k]; got != want {
				t.Errorf("after %s, %s changed:\n%s", step.what, k, diffLines(want, got))
			}
		}
	}
	if end := g.state().NightEndsAt(); !end.Equal(start.Add(6 * time.Hour)) {
		t.Fatalf("with every action in, the night ends at +%v, not at its first mark", end.Sub(start))
	}

	// The night ends at its first mark, and the town learns it at dawn.
	g.advance(start.Add(6 * time.Hour).Sub(g.clock()))
	waitFor(t, "Day 2", func() bool { return g.state().Phase == engine.DayPhase && g.state().Day == 2 })
	g.await(user(reader), "the dawn", func(l letter) bool { return l.Kind == "dawn" })
}

// nth waits for the n-th letter to user that cond accepts, in the order
// the mailbox holds them, and returns it.
func (g *embeddedGame) nth(user, what string, n int, cond func(letter) bool) letter {
	g.t.Helper()
	var found letter
	waitFor(g.t, fmt.Sprintf("%s: %s #%d", user, what, n), func() bool {
		seen := 0
		for _, l := range g.mailbox(user) {
			if cond(l) {
				seen++
				if seen == n {
					found = l
					return true
				}
			}
		}
		return false
	})
	return found
}

// traceFields are the fields the receiving server writes above the
// host's own header.
var traceFields = regexp.MustCompile(`(?i)^(Return-Path|Delivered-To|Received|Authentication-Results):`)

var boundaryOf = regexp.MustCompile(`boundary="?([^";\r\n]+)`)

// townCopy is a letter as its reader got it from the host, without what
// names it: the receiving server's trace fields, its Message-ID and the
// MIME boundaries drawn from it, and the identifiers of the reader's own
// messages it answers (own).
func townCopy(l letter, own ...string) string {
	head, body, _ := bytes.Cut(l.Raw, []byte("\r\n\r\n"))
	var kept []string
	skipping := false
	for _, line := range strings.Split(string(head), "\r\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			if !skipping {
				kept = append(kept, line)
			}
			continue
		}
		skipping = traceFields.MatchString(line)
		if !skipping {
			kept = append(kept, line)
		}
	}
	out := strings.Join(kept, "\r\n") + "\r\n\r\n" + string(body)
	if l.MessageID != "" {
		out = strings.ReplaceAll(out, strings.Trim(l.MessageID, "<>"), "message-id")
	}
	for _, m := range boundaryOf.FindAllStringSubmatch(out, -1) {
		out = strings.ReplaceAll(out, m[1], "boundary")
	}
	for _, id := range own {
		out = strings.ReplaceAll(out, id, "own-message")
	}
	return out
}

// diffLines shows the lines of a that b lacks and b's that a lacks.
func diffLines(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	has := map[string]int{}
	for _, l := range bl {
		has[l]++
	}
	var out []string
	for _, l := range al {
		if has[l] > 0 {
			has[l]--
			continue
		}
		out = append(out, "- "+l)
	}
	hasA := map[string]int{}
	for _, l := range al {
		hasA[l]++
	}
	for _, l := range bl {
		if hasA[l] > 0 {
			hasA[l]--
			continue
		}
		out = append(out, "+ "+l)
	}
	return strings.Join(out, "\n")
}
