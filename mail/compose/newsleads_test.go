package compose_test

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/lang"
	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/mail/reply"
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
	t.Parallel()
	for _, l := range languages(1) {
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

// TestPersonalLinesAreNeverRelayedAsContext quotes, from every copy of
// thread, mafia-list and dawn mail of a game, each line that is its
// reader's own — their vote, their null vote, their state before voting,
// their night line, their state once out, their receipt, a time in their
// own zone — and checks it against the host's record of that copy (its
// public lines): none is context to relay.
func TestPersonalLinesAreNeverRelayedAsContext(t *testing.T) {
	t.Parallel()
	h := smallGame(t, "en")
	h.ok(h.player("Bob"), engine.Private, "ZONE Europe/Berlin", engine.Command{Verb: engine.CmdZone, Text: "Europe/Berlin"})
	from := len(h.all)
	h.ok(h.player("Alice"), engine.Thread, "post", post("I trust Bob."))
	h.ok(h.player("Carol"), engine.Thread, "VOTE NULL", vote("null"))
	a := closingLock(t, h)
	// The closing LOCK with a post, as the host batches it: the author's
	// copy carries the receipt under the close.
	before := h.s.Clone()
	env := engine.Env{Now: h.now, Rand: h.rand}
	by := h.player(a)
	p := post("My last word.")
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
	msgs, err := h.c.Batch(compose.Batch{Before: before, Events: h.logged(append(posted, evs...)), Dir: h.dir, Sender: &by,
		Answer: &compose.Answer{State: h.s, Dir: h.dir, Sender: by, Channel: engine.Thread, Cause: "<l@players.example.net>",
			Received: h.now, Now: h.now, Lines: []compose.Line{{Text: "LOCK", Events: evs}}}})
	if err != nil {
		t.Fatal(err)
	}
	h.record(msgs)
	if h.s.Phase != engine.NightPhase {
		t.Fatalf("phase %s, want the night", h.s.Phase)
	}
	h.ok(h.player(h.withRole(engine.Mafia)[0]), engine.MafiaCh, "post", post("Quiet night."))
	h.ok(h.player("Alice"), engine.Thread, "post", post("Who is next?"))

	kinds := map[string]string{
		"vote": "You vote ", "null": "Your vote is null", "not voted": "You have not voted yet",
		"night": "Night actions, if your role has one", "out": "You are out of the game",
		"receipt": "Your message: ", "own zone": " for you)",
	}
	seen := map[string]bool{}
	for _, m := range h.all[from:] {
		if m.Kind != compose.KindThread && m.Kind != compose.KindMafia && m.Kind != compose.KindDawn {
			continue
		}
		text := mimepart.DecodeFlowed(readBack(t, m.Raw).text, false)
		rec := &reply.Record{Public: m.Public, Texts: []string{text}}
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "-- ") || line == "--" {
				break
			}
			for kind, mark := range kinds {
				if !strings.Contains(line, mark) {
					continue
				}
				seen[kind] = true
				quotes := [][]string{{line}}
				if first, _, ok := strings.Cut(line, ". "); ok {
					quotes = append(quotes, []string{first + "."})
				}
				for _, q := range quotes {
					if got := rec.Check(q); got[0] == reply.Public {
						t.Errorf("%s: %s's own line %q (%s) is relayed as context when quoted", m.step, m.Recipient, q[0], kind)
					}
				}
			}
		}
	}
	for kind := range kinds {
		if !seen[kind] {
			t.Errorf("no copy carries a line of kind %q to quote", kind)
		}
	}
}
