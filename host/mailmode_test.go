package host

import (
	"context"
	"strings"
	"testing"
	"time"
)

// MAIL DIGEST in a game that sends each post: that player's thread copies
// wait for a digest every two hours while everyone else's go at once;
// MAIL EACH sends what waits and ends it; the choice survives a restart.
func TestMailDigestAndEachPerReader(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	private := func(name string) string { return "host+g1-p-" + hs.token("g1", addr(name)) + "@example.org" }
	threadMail := func(to string, from int) []string {
		var out []string
		for _, m := range hs.mailTo(to, from) {
			if m.Kind == "thread" {
				out = append(out, string(m.Raw))
			}
		}
		return out
	}
	before := len(hs.outbox())
	hs.send(addr("Carol"), private("Carol"), "MAIL DIGEST")
	answer := hs.mailTo(addr("Carol"), before)
	if len(answer) != 1 || !strings.Contains(parseLetter(answer[0].Raw).Text, "gathered in a digest about every 2 h") {
		t.Fatalf("the answer to MAIL DIGEST: %d mails", len(answer))
	}
	hs.restart() // the choice is the game's: it survives
	before = len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"), "Good morning, town.")
	hs.send(addr("Bob"), hs.thread("Bob"), "Morning! Anyone suspicious?")
	if got := threadMail(addr("Carol"), before); len(got) != 0 {
		t.Fatalf("Carol, who takes digests, got %d thread mails at once", len(got))
	}
	if got := threadMail(addr("Dave"), before); len(got) != 2 {
		t.Fatalf("Dave, who takes each post, got %d thread mails, want 2", len(got))
	}
	hs.now = hs.now.Add(2*time.Hour + time.Minute)
	if err := hs.h.TickDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := threadMail(addr("Carol"), before)
	if len(got) != 1 || !strings.Contains(got[0], "Good morning, town.") || !strings.Contains(got[0], "Anyone suspicious?") {
		t.Fatalf("Carol's digest: %d mails", len(got))
	}
	if n := len(threadMail(addr("Dave"), before)); n != 2 {
		t.Fatalf("Dave got a digest too: %d thread mails", n)
	}
	// EACH: what waits comes first, then every post at once.
	hs.send(addr("Alice"), hs.thread("Alice"), "Carol, you are quiet.")
	before = len(hs.outbox())
	hs.send(addr("Carol"), private("Carol"), "MAIL EACH")
	if got := threadMail(addr("Carol"), before); len(got) != 1 || !strings.Contains(got[0], "you are quiet") {
		t.Fatalf("MAIL EACH did not first send what waited: %d thread mails", len(got))
	}
	before = len(hs.outbox())
	hs.send(addr("Bob"), hs.thread("Bob"), "Back to each post.")
	if got := threadMail(addr("Carol"), before); len(got) != 1 {
		t.Fatalf("after MAIL EACH Carol got %d thread mails for one post", len(got))
	}
}
