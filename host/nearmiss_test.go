package host

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// answers are the host's answers (confirm or error) to addr since from,
// as their reader has them.
func answers(hs *harness, addr string, from int) []mailbox.Letter {
	var out []mailbox.Letter
	for _, m := range hs.mailTo(addr, from) {
		if m.Kind == compose.KindConfirm || m.Kind == compose.KindError {
			l := parseLetter(m.Raw)
			l.Text = strings.Join(strings.Fields(l.Text), " ")
			out = append(out, l)
		}
	}
	return out
}

// threadPosts are the thread mail to addr since from, as one text.
func threadPosts(hs *harness, addr string, from int) string {
	var b strings.Builder
	for _, m := range hs.mailTo(addr, from) {
		if m.Kind == compose.KindThread {
			b.WriteString(parseLetter(m.Raw).Text)
		}
	}
	return b.String()
}

func private(hs *harness, name string) string {
	return "host+g1-p-" + hs.token("g1", addr(name)) + "@example.org"
}

// TestNearMissesInTheThread: a misspelt vote and votes said in sentences
// are neither counted nor dropped. Each message gets one answer, which
// names the command each line looks like, where it goes, and the exact
// line to send, with the thread as Reply-To; the misspelt line reaches no
// one, the sentences are posted as the discussion they are.
func TestNearMissesInTheThread(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	thread := hs.thread("Alice")
	cases := []struct {
		body    string
		relayed []string // lines every other player reads
		hidden  []string // lines no one else reads
		says    []string // in the one answer
	}{
		{body: "VOET Erin", hidden: []string{"VOET"},
			says: []string{`✗ VOET Erin`, `"VOET" is no command word, so this line was neither done nor passed on; it looks like VOTE.`,
				"VOTE is written in the town thread, " + thread + ", and pressing Reply to this mail sends it there.",
				"Send this line instead: VOTE Erin"}},
		{body: "I vote Erin too.", relayed: []string{"I vote Erin too."},
			says: []string{"✗ I vote Erin too.", "This line was read as discussion, so nothing in it was done: VOTE counts only at the start of a line of its own.",
				"Send this line instead: VOTE Erin"}},
		{body: "my vote: Erin", relayed: []string{"my vote: Erin"}, says: []string{"Send this line instead: VOTE Erin"}},
		{body: "Oh, I see I am not on the tally. VOTE Erin", relayed: []string{"I am not on the tally. VOTE Erin"},
			says: []string{"Send this line instead: VOTE Erin"}},
		{body: "Erin has been quiet all day.\n\nVTOE Erin\nI vote Erin, she dodged every question.",
			relayed: []string{"Erin has been quiet all day.", "I vote Erin, she dodged every question."}, hidden: []string{"VTOE"},
			says: []string{"✗ VTOE Erin", "✗ I vote Erin, she dodged every question."}},
		{body: "vote for erin please",
			says: []string{`No player here is called "erin please".`, "If you meant Erin, send this line: vote for Erin"}},
	}
	for _, c := range cases {
		before := len(hs.outbox())
		hs.send(addr("Alice"), thread, c.body)
		s := hs.game("g1")
		if v := s.Player(slotByName(s, "Alice")).Vote; v != 0 {
			t.Fatalf("%q cast a vote for %s", c.body, s.Player(v).Name)
		}
		got := answers(hs, addr("Alice"), before)
		if len(got) != 1 {
			t.Fatalf("%q: %d answers, want one", c.body, len(got))
		}
		if got[0].ReplyTo != thread {
			t.Errorf("%q: the answer's Reply-To is %s, not the thread %s", c.body, got[0].ReplyTo, thread)
		}
		for _, want := range c.says {
			if !strings.Contains(got[0].Text, want) {
				t.Errorf("%q: the answer lacks %q:\n%s", c.body, want, got[0].Text)
			}
		}
		for _, p := range players[1:] {
			posts := threadPosts(hs, addr(p), before)
			for _, l := range c.relayed {
				if !strings.Contains(posts, l) {
					t.Errorf("%q: %s did not read %q:\n%s", c.body, p, l, posts)
				}
			}
			for _, l := range c.hidden {
				if strings.Contains(posts, l) {
					t.Errorf("%q: %s read %q:\n%s", c.body, p, l, posts)
				}
			}
			if len(answers(hs, addr(p), before)) != 0 {
				t.Errorf("%q: %s got an answer", c.body, p)
			}
		}
	}

	// Pressing Reply and sending the line does it.
	hs.send(addr("Alice"), thread, "VOTE Erin")
	s := hs.game("g1")
	if s.Player(slotByName(s, "Alice")).Vote != slotByName(s, "Erin") {
		t.Fatal("the line to send did not vote")
	}
	// Said again once it is so, or as talk, a vote draws no question.
	for _, body := range []string{"I vote Erin too.", "I don't think we should vote Bob yet?", "I vote we wait for the inspector.",
		"My vote stays on Erin until she explains."} {
		before := len(hs.outbox())
		hs.send(addr("Alice"), thread, body)
		if got := answers(hs, addr("Alice"), before); len(got) != 0 {
			t.Errorf("%q drew an answer:\n%s", body, got[0].Text)
		}
		if !strings.Contains(threadPosts(hs, addr("Bob"), before), body) {
			t.Errorf("%q was not posted", body)
		}
	}
}

// TestNearMissesAnsweredAlikeWhateverTheRole: INSPCT from the Inspector
// and from a Townsperson, in the private channel and in the thread, gets
// the same answer, which tells nothing of a role; it is not passed on to
// the referee or anyone, and nothing is inspected.
func TestNearMissesAnsweredAlikeWhateverTheRole(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	hs.send("ref@example.org", "host+g1-p-"+hs.token("g1", "ref@example.org")+"@example.org", "CLOSE")
	s := hs.game("g1")
	if s.Phase != engine.NightPhase {
		t.Fatalf("phase %s after CLOSE", s.Phase)
	}
	var inspector, town string
	for _, p := range s.Players {
		switch {
		case p.Role == engine.Inspector:
			inspector = p.Name
		case p.Role == engine.Townsperson && town == "":
			town = p.Name
		}
	}
	target := players[0]
	if target == inspector || target == town {
		target = players[1]
	}
	if target == inspector || target == town {
		target = players[2]
	}
	shapes := map[string]string{}
	for _, name := range []string{inspector, town} {
		if !s.Player(slotByName(s, name)).Alive {
			t.Fatalf("%s died on day 1", name)
		}
		for _, to := range []string{private(hs, name), hs.thread(name)} {
			before := len(hs.outbox())
			hs.send(addr(name), to, "INSPCT "+target)
			got := answers(hs, addr(name), before)
			if len(got) != 1 {
				t.Fatalf("%s to %s: %d answers", name, to, len(got))
			}
			// The answer itself, without the footer every mail of the
			// private channel has (which lists the reader's own commands,
			// as in every other mail they get).
			text, _, _ := strings.Cut(got[0].Text, " -- ")
			for _, want := range []string{`"INSPCT" is no command word`, "it looks like INSPECT",
				"INSPECT is sent from your private channel, " + private(hs, name) + ", and pressing Reply to this mail sends it there",
				"Send this line instead: INSPECT " + target} {
				if !strings.Contains(text, want) {
					t.Errorf("%s to %s: the answer lacks %q:\n%s", name, to, want, text)
				}
			}
			for _, role := range []string{"Inspector", "role", "Townsperson"} {
				if strings.Contains(text, role) {
					t.Errorf("%s to %s: the answer speaks of %q:\n%s", name, to, role, text)
				}
			}
			if got[0].ReplyTo != private(hs, name) {
				t.Errorf("%s to %s: Reply-To %s", name, to, got[0].ReplyTo)
			}
			// The same answer, whoever writes it and wherever, but for
			// the author's own address (its line, after what the answer
			// says of the message it answers).
			shape := strings.ReplaceAll(text, private(hs, name), "PRIVATE")
			shapes[shape[strings.Index(shape, "✗"):]] = name + " to " + to
			if n := len(hs.mailTo("ref@example.org", before)); n != 0 {
				t.Errorf("%s to %s: the referee got %d mails", name, to, n)
			}
			for _, p := range players {
				if p != name && len(hs.mailTo(addr(p), before)) != 0 {
					t.Errorf("%s to %s: %s got mail", name, to, p)
				}
			}
		}
	}
	if len(shapes) != 1 {
		t.Errorf("the answers differ by author or address:\n%v", shapes)
	}
	if len(hs.game("g1").Night.Inspects) != 0 {
		t.Errorf("something was inspected")
	}
}

// TestRefereeNearMisses: the referee's misspelt commands are answered,
// all in one answer, each with the line to send to the referee channel;
// nothing of them is done.
func TestRefereeNearMisses(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	deadline := hs.game("g1").Deadline
	before := len(hs.outbox())
	hs.send("ref@example.org", ref, "MODKIL Dave\nSTAUTS\nEXTNED 12h")
	s := hs.game("g1")
	if !s.Player(slotByName(s, "Dave")).Alive || !s.Deadline.Equal(deadline) {
		t.Fatalf("a near miss was done: Dave alive %v, deadline %v (was %v)", s.Player(slotByName(s, "Dave")).Alive, s.Deadline, deadline)
	}
	got := answers(hs, "ref@example.org", before)
	if len(got) != 1 {
		t.Fatalf("%d answers, want one", len(got))
	}
	for _, want := range []string{
		`✗ MODKIL Dave Refused: "MODKIL" is no command word, so this line was neither done nor passed on; it looks like MODKILL. MODKILL is written in your referee channel, ` +
			ref + ", and pressing Reply to this mail sends it there. Send this line instead: MODKILL Dave",
		"✗ STAUTS", "Send this line instead: STATUS",
		"✗ EXTNED 12h", "Send this line instead: EXTEND 12h",
	} {
		if !strings.Contains(got[0].Text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, got[0].Text)
		}
	}
	if got[0].ReplyTo != ref {
		t.Errorf("Reply-To %s, not the referee channel", got[0].ReplyTo)
	}
	for _, p := range players {
		if len(hs.mailTo(addr(p), before)) != 0 {
			t.Errorf("%s got mail", p)
		}
	}
	hs.send("ref@example.org", ref, "MODKILL Dave")
	if s := hs.game("g1"); s.Player(slotByName(s, "Dave")).Alive {
		t.Error("the line to send did not remove Dave")
	}
}

// TestNearMissInTheReadersLanguage: the answer is worded in its reader's
// language, the line to send as the reader's language writes it.
func TestNearMissInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	hs.send(addr("Bob"), private(hs, "Bob"), "SPRACHE de")
	before := len(hs.outbox())
	hs.send(addr("Bob"), hs.thread("Bob"), "STIMEM FÜR Erin\nIch stimme für Carol, weil sie lügt.")
	got := answers(hs, addr("Bob"), before)
	if len(got) != 1 {
		t.Fatalf("%d answers", len(got))
	}
	for _, want := range []string{"„STIMEM FÜR“ ist kein Befehlswort, deshalb wurde diese Zeile weder ausgeführt noch weitergegeben; gemeint war wohl STIMME FÜR.",
		"STIMME FÜR gehört in den Stadt-Thread, " + hs.thread("Bob") + ", und ein Klick auf „Antworten“ bei dieser Mail schickt es dorthin.",
		"Schick stattdessen diese Zeile: STIMME FÜR Erin",
		"Diese Zeile wurde als Diskussion gelesen, deshalb wurde nichts darin ausgeführt: STIMME FÜR zählt nur am Anfang einer eigenen Zeile.",
		"Schick stattdessen diese Zeile: STIMME FÜR Carol"} {
		if !strings.Contains(got[0].Text, want) {
			t.Errorf("the answer lacks %q:\n%s", want, got[0].Text)
		}
	}
	hs.send(addr("Bob"), hs.thread("Bob"), "STIMME FÜR Erin")
	if s := hs.game("g1"); s.Player(slotByName(s, "Bob")).Vote != slotByName(s, "Erin") {
		t.Error("the line to send did not vote")
	}
}
