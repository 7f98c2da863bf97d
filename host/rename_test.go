package host

import (
	"context"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// S4 by mail: "JOIN bob" makes the player "bob"; the confirmation says so
// and how to change it; a JOIN in their private channel before the start
// renames the seat everywhere (the engine, the participant the store keeps,
// the address the host writes to), the referee is told, and from the start
// on the name is fixed.
func TestRenameBeforeTheStartByMail(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false")
	before := len(hs.outbox())
	hs.send(addr("Bob"), "host+g1@example.org", "JOIN bob")
	if text := replyText(t, hs, addr("Bob"), before); !strings.Contains(text, `shows your name as "bob"`) ||
		!strings.Contains(text, "reply to this mail with JOIN and that name before the game starts") {
		t.Errorf("the sign-up answer does not say how the name is shown and how to change it:\n%s", text)
	}

	private := "host+g1-p-" + hs.token("g1", addr("Bob")) + "@example.org"
	before = len(hs.outbox())
	hs.send(addr("Bob"), private, "JOIN Bob Stone")
	if got := hs.game("g1").Player(1).Name; got != "Bob Stone" {
		t.Fatalf("the player is %q after the rename", got)
	}
	ps, err := hs.st.Participants(context.Background(), "g1")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Kind == store.KindPlayer && p.Name != "Bob Stone" {
			t.Errorf("the store keeps the player as %q", p.Name)
		}
	}
	if text := replyText(t, hs, addr("Bob"), before); !strings.Contains(text, "now Bob Stone") {
		t.Errorf("the answer to the rename does not give the new name:\n%s", text)
	}
	told := false
	for _, m := range hs.mailTo("ref@example.org", before) {
		if strings.Contains(flowedText(t, m.Raw), "will play as Bob Stone") {
			told = true
		}
	}
	if !told {
		t.Error("the referee was not told of the rename")
	}
	// Another player may not take the name, nor a look-alike of it.
	hs.send(addr("Carol"), "host+g1@example.org", "JOIN Bob Stone")
	hs.send(addr("Dave"), "host+g1@example.org", "JOIN B\u043eb Stone")
	if n := len(hs.game("g1").Players); n != 1 {
		t.Errorf("%d seats: the renamed player's name, or a look-alike of it, was taken again", n)
	}

	// The start fixes the name; the mail goes to the new name.
	for _, p := range []string{"Alice", "Carol", "Dave", "Erin"} {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	before = len(hs.outbox())
	hs.send("ref@example.org", ref, "START")
	if s := hs.game("g1"); s.Phase != engine.DayPhase {
		t.Fatalf("phase %s after START", s.Phase)
	}
	named := false
	for _, m := range hs.mailTo(addr("Bob"), before) {
		if strings.Contains(string(m.Raw), "To: \"Bob Stone\" <bob@players.test>") {
			named = true
		}
	}
	if !named {
		t.Error("no mail after the start is addressed to Bob Stone")
	}
	before = len(hs.outbox())
	hs.send(addr("Bob"), private, "JOIN Robert")
	if got := hs.game("g1").Player(1).Name; got != "Bob Stone" {
		t.Errorf("a rename after the start made the player %q", got)
	}
	if text := replyText(t, hs, addr("Bob"), before); !strings.Contains(text, "name is fixed now that game g1 has started") {
		t.Errorf("the answer to a rename after the start does not say the name is fixed:\n%s", text)
	}
}
