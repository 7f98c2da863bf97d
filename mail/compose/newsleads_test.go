package compose_test

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// closingLock brings a small game's Day 1 to one lock short of its early
// close (D5) and returns the player whose LOCK closes it.
func closingLock(t *testing.T, h *harness) string {
	t.Helper()
	target := h.withRole(engine.Townsperson)[0]
	h.voteOut(target)
	var last string
	for _, p := range h.s.Players {
		if p.Name == target || p.Vote == 0 {
			continue
		}
		if last != "" {
			h.ok(h.player(last), engine.Thread, "LOCK", verb(engine.CmdLock))
		}
		last = p.Name
	}
	return last
}

// TestCloseNewsLeadsTheReceipt: the LOCK that closes the round, sent with
// a post to the thread, gets its author the close like everyone else's
// copy, headline first; the receipt for the LOCK follows in one line. In
// every language.
func TestCloseNewsLeadsTheReceipt(t *testing.T) {
	for _, l := range lang.All() {
		t.Run(l.Tag, func(t *testing.T) {
			h := smallGame(t, l.Tag)
			a := closingLock(t, h)
			before := h.s.Clone()
			env := engine.Env{Now: h.now, Rand: h.rand}
			by := h.player(a)
			// The host relays a message's discussion before commands that
			// close the round, as the last word of the round.
			p := post("I have said all I had to say.")
			p.By, p.Channel = by, engine.Thread
			posted, err := engine.Apply(h.s, p, env)
			if err != nil {
				t.Fatal(err)
			}
			lock := verb(engine.CmdLock)
			lock.By, lock.Channel = by, engine.Thread
			evs, err := engine.Apply(h.s, lock, env)
			if err != nil {
				t.Fatal(err)
			}
			if h.s.Phase != engine.NightPhase {
				t.Fatalf("the LOCK did not close the round (phase %s)", h.s.Phase)
			}
			ans := &compose.Answer{State: h.s, Dir: h.dir, Sender: by, Channel: engine.Thread, Cause: "<last@players.example.net>",
				Received: h.now, Now: h.now, Lines: []compose.Line{{Text: "LOCK", Events: evs}}}
			msgs, err := h.c.Batch(compose.Batch{Before: before, Events: h.logged(append(posted, evs...)), Dir: h.dir, Sender: &by, Answer: ans})
			if err != nil {
				t.Fatal(err)
			}
			h.record(msgs)
			var mine []compose.Outgoing
			for _, m := range msgs {
				if m.Recipient == h.key(a) {
					mine = append(mine, m)
				}
			}
			if len(mine) != 1 || mine[0].Kind != compose.KindThread {
				t.Fatalf("the author got %d messages, want their thread copy alone", len(mine))
			}
			var other string
			for _, p := range h.s.Players {
				if p.Alive && p.Name != a {
					other = h.key(p.Name)
					break
				}
			}
			own := strings.Split(readBack(t, mine[0].Raw).text, "\n")
			theirs := strings.Split(readBack(t, to(t, msgs, other).Raw).text, "\n")
			receipt := l.Sprintf("Your message: %s done", "LOCK")
			if own[0] != theirs[0] {
				t.Errorf("the author's copy begins %q, everyone else's %q: the news leads", own[0], theirs[0])
			}
			if own[1] != receipt {
				t.Errorf("the author's second line is %q, want the receipt %q", own[1], receipt)
			}
			if n := strings.Count(strings.Join(own, "\n"), receipt); n != 1 {
				t.Errorf("the receipt is in the author's copy %d times", n)
			}
			mh, oh := readBack(t, mine[0].Raw).header, readBack(t, to(t, msgs, other).Raw).header
			if ms, os := mh.Get("Subject"), oh.Get("Subject"); ms != os {
				t.Errorf("the author's subject %q, everyone else's %q", ms, os)
			}
			if text := strings.Join(own, "\n"); !strings.Contains(text, "I have said all I had to say.") {
				t.Errorf("the author's copy lacks the post:\n%s", text)
			}
			if l.Tag == lang.Default {
				g := newGoldens(t, "receipt-close")
				g.add("close-author", mine[0])
				g.add("close-other", to(t, msgs, other))
				g.check()
			}
		})
	}
}
