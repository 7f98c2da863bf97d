//go:build integration

package e2e

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
)

// TestNearMissesOverMail plays the mistakes of a new referee and new
// players over the embedded mail servers: a misspelt vote and votes said in
// sentences in the thread, a misspelt night action in the private channel
// from the Inspector and from a Townsperson, and misspelt referee commands
// in the referee channel. Each message is answered privately, once, with
// every such line, the command it looks like and the exact line to send;
// the answer's Reply-To is where that line goes, so that pressing Reply
// and sending it does it. Nothing is done before that, a misspelt line
// reaches no one, and a sentence reaches everyone as the discussion it is.
func TestNearMissesOverMail(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave"}
	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel := created.ReplyTo
	g.send(ref, refChannel, "SETUP players=4 mafia=1 inspectors=1 doctors=0 vigilantes=0 inspector_knows_mafioso=false")
	for _, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
		g.answerTo(u, "JOIN")
	}
	g.send(ref, refChannel, "START")
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	s := g.state()
	var inspector, town, mafioso int
	for _, p := range s.Players {
		switch p.Role {
		case engine.Inspector:
			inspector = p.Slot
		case engine.Mafia:
			mafioso = p.Slot
		case engine.Townsperson:
			if town == 0 {
				town = p.Slot
			}
		}
	}
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	name := func(slot int) string { return s.Player(slot).Name }
	m := name(mafioso)
	// answer waits for the one answer to the message whose first refused
	// line is line, and checks what it says.
	answer := func(u, line, replyTo string, says ...string) letter {
		t.Helper()
		a := g.await(u, "the answer to "+line, func(l letter) bool {
			return l.Kind == "error" && strings.Contains(l.Text, "✗ "+line)
		})
		text := strings.Join(strings.Fields(a.Text), " ")
		for _, want := range says {
			if !strings.Contains(text, want) {
				t.Errorf("%s's answer to %q lacks %q:\n%s", u, line, want, a.Text)
			}
		}
		if a.ReplyTo != replyTo {
			t.Errorf("%s's answer to %q has Reply-To %s, want %s", u, line, a.ReplyTo, replyTo)
		}
		return a
	}

	// The thread: a misspelt vote, votes said in sentences, a name with
	// words after it. The author stays under "Not voted" until the line
	// to send comes, by pressing Reply.
	tThread, tPrivate := g.addrs(town)
	g.send(user(town), tThread, "VOET "+m)
	answer(user(town), "VOET "+m, tThread, `"VOET" is no command word`, "it looks like VOTE",
		"VOTE is written in the town thread, "+tThread+", and pressing Reply to this mail sends it there",
		"Send this line instead: VOTE "+m)
	g.send(user(town), tThread, "I vote "+m+" too.\nOh, I see I am not on the tally. VOTE "+m)
	answer(user(town), "I vote "+m+" too.", tThread, "✗ Oh, I see I am not on the tally. VOTE "+m,
		"This line was read as discussion, so nothing in it was done: VOTE counts only at the start of a line of its own",
		"Send this line instead: VOTE "+m)
	g.send(user(town), tThread, "my vote: "+m)
	answer(user(town), "my vote: "+m, tThread, "Send this line instead: VOTE "+m)
	g.send(user(town), tThread, "vote for "+strings.ToLower(m)+" please")
	a := answer(user(town), "vote for "+strings.ToLower(m)+" please", tThread,
		"If you meant "+m+", send this line: vote for "+m)
	g.settled()
	if v := g.state().Player(town).Vote; v != 0 {
		t.Fatalf("a near miss cast a vote for %s", name(v))
	}
	g.send(user(town), a.ReplyTo, "VOTE "+m)
	waitFor(t, "the vote sent by pressing Reply", func() bool { return g.state().Player(town).Vote == mafioso })

	// The private channel: INSPCT from the Inspector and from a
	// Townsperson, answered alike; nothing is passed on to the referee.
	iThread, iPrivate := g.addrs(inspector)
	target := name(town)
	g.send(user(inspector), iPrivate, "INSPCT "+target)
	g.send(user(town), tPrivate, "INSPCT "+target)
	var shapes []string
	for _, c := range []struct {
		u                string
		private, threadA string
	}{{user(inspector), iPrivate, iThread}, {user(town), tPrivate, tThread}} {
		a := answer(c.u, "INSPCT "+target, c.private, "it looks like INSPECT",
			"INSPECT is sent from your private channel, "+c.private+", and pressing Reply to this mail sends it there",
			"Send this line instead: INSPECT "+target)
		body, _, _ := strings.Cut(a.Text, "\n-- ")
		body = strings.ReplaceAll(body[strings.Index(body, "✗"):], c.private, "PRIVATE")
		shapes = append(shapes, body)
	}
	if shapes[0] != shapes[1] {
		t.Errorf("the Inspector's and the Townsperson's answers differ:\n%s\n---\n%s", shapes[0], shapes[1])
	}

	// The referee channel: misspelt referee commands, in one message.
	g.send(ref, refChannel, "MODKIL "+m+"\nSTAUTS\nEXTNED 12h")
	answer(ref, "MODKIL "+m, refChannel, "it looks like MODKILL",
		"MODKILL is written in your referee channel, "+refChannel+", and pressing Reply to this mail sends it there",
		"Send this line instead: MODKILL "+m, "✗ STAUTS", "Send this line instead: STATUS", "✗ EXTNED 12h",
		"Send this line instead: EXTEND 12h")
	g.settled()
	if st := g.state(); !st.Player(mafioso).Alive || st.Phase != engine.DayPhase {
		t.Fatalf("a near miss was done: %s alive %v, phase %s", m, st.Player(mafioso).Alive, st.Phase)
	}

	// Every mailbox: the misspelt lines reach no one, the sentences reach
	// every player as posts, and each answer only its author.
	withheld := []string{"VOET " + m, "INSPCT " + target, "MODKIL " + m, "STAUTS", "EXTNED 12h"}
	posted := []string{"I vote " + m + " too.", "Oh, I see I am not on the tally. VOTE " + m, "my vote: " + m}
	authors := map[string]bool{user(town): true, user(inspector): true, ref: true}
	for _, u := range append(users, ref) {
		threadText := ""
		answers := 0
		for _, l := range g.mailbox(u) {
			switch l.Kind {
			case "thread", "digest":
				threadText += l.Text
			case "error":
				answers++
			}
			for _, w := range withheld {
				if l.Kind != "error" && strings.Contains(l.Text, w) {
					t.Errorf("%s got %q in %s mail:\n%s", u, w, l.Kind, l.Text)
				}
			}
			if l.Kind != "error" && strings.Contains(l.Text, "Send this line instead") {
				t.Errorf("%s got a question in %s mail:\n%s", u, l.Kind, l.Text)
			}
		}
		if answers > 0 && !authors[u] {
			t.Errorf("%s got %d answers to mail they did not send", u, answers)
		}
		if u == ref {
			continue
		}
		for _, p := range posted {
			if !strings.Contains(strings.Join(strings.Fields(threadText), " "), p) {
				t.Errorf("%s did not read the post %q", u, p)
			}
		}
	}
}
