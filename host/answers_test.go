package host

import (
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/store"
)

// replyText is the text part of the last reply (confirm or error) to addr
// since from, decoded from quoted-printable and format=flowed.
func replyText(t *testing.T, hs *harness, addr string, from int) string {
	t.Helper()
	var last store.OutMessage
	for _, m := range hs.mailTo(addr, from) {
		if m.Kind == compose.KindConfirm || m.Kind == compose.KindError {
			last = m
		}
	}
	if last.MessageID == "" {
		t.Fatalf("no reply to %s", addr)
	}
	return flowedText(t, last.Raw)
}

// TestEveryLineGetsItsAnswer: a greeting written with JOIN is answered,
// not dropped; a command that changes nothing says so.
func TestEveryLineGetsItsAnswer(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false")
	before := len(hs.outbox())
	hs.send(addr("Alice"), "host+g1@example.org", "JOIN alice\n\nHello everyone, glad to play!")
	text := replyText(t, hs, addr("Alice"), before)
	for _, want := range []string{"✓ JOIN alice", `shows your name as "alice", exactly as you wrote it`,
		"✗ Hello everyone, glad to play!", "Not posted: the sign-up address reads only JOIN"} {
		if !strings.Contains(text, want) {
			t.Errorf("the sign-up answer lacks %q:\n%s", want, text)
		}
	}
	for _, p := range players[1:] {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	hs.send("ref@example.org", ref, "START")
	before = len(hs.outbox())
	hs.send(addr("Alice"), "host+g1-t-"+hs.token("g1", addr("Alice"))+"@example.org", "VOTE Bob\nVOTE Bob\nLOCK")
	text = replyText(t, hs, addr("Alice"), before)
	if !strings.Contains(text, "✓ VOTE Bob\n  → You vote Bob\n\n✓ VOTE Bob\n  → Nothing changed: it was so already.\n\n✓ LOCK\n  → You lock your vote on Bob") {
		t.Errorf("not every line has its result:\n%s", text)
	}
}

// flowedText reads the text part of a message as a format=flowed reader
// shows it (the mailbox reader joins the soft line breaks).
func flowedText(t *testing.T, raw []byte) string {
	t.Helper()
	l := parseLetter(raw)
	if l.Err != nil {
		t.Fatalf("read reply: %v", l.Err)
	}
	return strings.ReplaceAll(l.Text, "\r\n", "\n")
}
