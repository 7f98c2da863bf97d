package compose_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestMessageIDsShowNoSecretEvents plays the same public game twice, once
// with the Mafia talking on their list and the Inspector inspecting in
// between, and checks that a Townsperson's mail carries the very same
// Message-IDs in both: nothing a player is not sent changes the name of
// what they are sent, so comparing IDs tells them nothing. (The answers to
// their own commands are named by their own messages and are left out: the
// harness numbers those by every command it runs.)
func TestMessageIDsShowNoSecretEvents(t *testing.T) {
	t.Parallel()
	play := func(secrets bool) (ids []string, readers int) {
		h := newHarness(t, engine.Classic(), "quiet", 11)
		h.signup(names11)
		h.ok(engine.Referee, engine.Private, "START", engine.Command{Verb: engine.CmdStart})
		mafia, insp, town := h.withRole(engine.Mafia), h.withRole(engine.Inspector)[0], h.town()
		var towns []string
		for _, n := range town {
			if n != insp {
				towns = append(towns, n)
			}
		}
		reader, victim, lynched := towns[0], towns[1], towns[2]
		whisper := func(text string) {
			if secrets {
				h.ok(h.player(mafia[0]), engine.MafiaCh, text, engine.Command{Verb: engine.CmdPost, Text: text})
			}
		}
		answers := map[string]bool{}
		cmd := func(by string, ch engine.Channel, line string, c engine.Command) {
			answers[h.ok(h.player(by), ch, line, c).reply.MessageID] = true
		}

		// Day 1: talk, a secret word on the mafia list, votes, the close.
		h.now = h.now.Add(time.Hour)
		h.ok(h.player(reader), engine.Thread, "Who is it?", engine.Command{Verb: engine.CmdPost, Text: "Who is it?"})
		whisper("Vote with the crowd.")
		for _, n := range h.town() {
			if n != lynched {
				cmd(n, engine.Thread, "VOTE "+lynched, engine.Command{Verb: engine.CmdVote, Target: lynched})
			}
		}
		whisper("Told you.")
		h.untilClose()

		// Night 1: the Inspector's secret action only in the second game;
		// the kill in both.
		h.now = h.now.Add(time.Minute)
		whisper("Let us take " + victim + ".")
		if secrets {
			cmd(insp, engine.Private, "INSPECT "+mafia[0], engine.Command{Verb: engine.CmdInspect, Target: mafia[0]})
		}
		cmd(mafia[0], engine.Private, "KILL "+victim, engine.Command{Verb: engine.CmdKill, Target: victim})
		h.untilClose()

		// Day 2 opens; one more post.
		h.now = h.now.Add(time.Hour)
		whisper("Quiet today.")
		h.ok(h.player(reader), engine.Thread, "Sorry, "+victim+".", engine.Command{Verb: engine.CmdPost, Text: "Sorry, " + victim + "."})

		key := h.key(reader)
		for _, m := range h.all {
			if m.Recipient == key && !answers[m.MessageID] {
				ids = append(ids, m.MessageID)
			}
		}
		return ids, len(h.all)
	}
	plain, n1 := play(false)
	secret, n2 := play(true)
	if n2 <= n1 {
		t.Fatalf("the game with secrets composed %d messages, the plain one %d: no secret event took place", n2, n1)
	}
	if len(plain) < 6 {
		t.Fatalf("the Townsperson got only %d messages: the game did not get far enough to show anything", len(plain))
	}
	if !slices.Equal(plain, secret) {
		t.Errorf("a Townsperson's Message-IDs differ when secret events happen in between:\nplain:  %v\nsecret: %v", plain, secret)
	}
}
