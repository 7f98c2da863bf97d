//go:build integration

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
)

// TestMailArrivesInTheOrderOfItsEvents plays a day of a game with digests
// on the embedded mail servers and reads every mailbox as delivered: mail
// caused by an event is never handed to SMTP before the mail of an earlier
// event for the same reader, so each mailbox's Date headers never go
// back, and the digest of the posts that led to a close arrives before
// the close, dated before it. The thread is a conversation per round: the
// close opens the night's, and a post sent during the night to the thread
// address goes to the night's conversation, whatever its subject.
func TestMailArrivesInTheOrderOfItsEvents(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave"}
	g.started(ref, "SETUP players=4 mafia=1 doctors=1 inspectors=0 vigilantes=0 digest_interval=2h", users)
	s := g.state()
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }

	// posted waits until the host has applied a post: mail goes through
	// the mailbox, and the clock must not move before the post is in.
	posted := func(text string) {
		t.Helper()
		waitFor(t, "the post "+text, func() bool {
			evs, err := g.st.Events(context.Background(), "g1", 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Type == string(engine.EvThreadPost) && strings.Contains(string(e.Payload), text) {
					return true
				}
			}
			return false
		})
	}

	// The talk of the day, the last of it just before the close.
	closes := s.ClosesAt()
	g.advance(closes.Add(-3 * time.Hour).Sub(g.clock()))
	for i, p := range s.Players {
		thread, _ := g.addrs(p.Slot)
		g.send(user(p.Slot), thread, "Morning from "+p.Name+".")
		posted("Morning from " + p.Name + ".")
		if i == 0 {
			g.advance(time.Hour)
		}
	}
	g.settled()
	g.advance(closes.Add(-10 * time.Minute).Sub(g.clock()))
	last, _ := g.addrs(s.Players[1].Slot)
	g.send(user(s.Players[1].Slot), last, "The last word of Day 1.")
	posted("The last word of Day 1.")
	g.settled()
	if g.state().DigestPending == 0 {
		t.Fatal("the last word of the day went out before the close")
	}
	g.advance(closes.Sub(g.clock()))
	waitFor(t, "Night 1", func() bool { return g.state().Phase == engine.NightPhase })

	// A post during the night, sent as a Reply to a mail of Day 1.
	night, _ := g.addrs(s.Players[2].Slot)
	g.send(user(s.Players[2].Slot), night, "Still thinking about Day 1.")
	posted("Still thinking about Day 1.")
	g.settled()
	g.advance(2 * time.Hour)
	g.settled()

	for _, u := range append(users, ref) {
		box := g.mailbox(u)
		var prev time.Time
		digest, closing, nightPost := -1, -1, -1
		for i, l := range box {
			d, err := l.Header.Date()
			if err != nil {
				t.Fatalf("%s: letter %d: Date: %v", u, i, err)
			}
			if d.Before(prev) {
				t.Errorf("%s: letter %d (%q) is dated %v, before the letter delivered ahead of it (%v)", u, i, l.Subject, d, prev)
			}
			prev = d
			if l.Kind != "thread" {
				continue
			}
			first, _, _ := strings.Cut(l.Text, "\n")
			switch {
			case strings.Contains(l.Text, "The last word of Day 1."):
				digest = i
				if l.Subject != "[g1] Day 1" {
					t.Errorf("%s: the digest of Day 1 has the subject %q", u, l.Subject)
				}
			case strings.Contains(first, "Day 1 is over") || strings.Contains(first, "vote of Day 1"):
				closing = i
				if l.Subject != "[g1] Night 1" || l.Header.Get("References") != "<g1.thread.n1@example.org>" {
					t.Errorf("%s: the close has the subject %q, References %q", u, l.Subject, l.Header.Get("References"))
				}
			case strings.Contains(l.Text, "Still thinking about Day 1."):
				nightPost = i
				if l.Subject != "[g1] Night 1" {
					t.Errorf("%s: the night's post has the subject %q", u, l.Subject)
				}
			}
		}
		if digest < 0 || closing < 0 || nightPost < 0 {
			t.Fatalf("%s: digest %d, close %d, night post %d: some never arrived", u, digest, closing, nightPost)
		}
		if digest > closing || closing > nightPost {
			t.Errorf("%s: delivered the digest as letter %d, the close as %d, the night's post as %d", u, digest, closing, nightPost)
		}
		dd, _ := box[digest].Header.Date()
		cd, _ := box[closing].Header.Date()
		if !dd.Before(cd) {
			t.Errorf("%s: the digest is dated %v, the close it leads to %v", u, dd, cd)
		}
	}

	// A Reply to the close that lost its tokened Reply-To reaches the
	// host's own address: its references still name the thread, and the
	// answer points there.
	carol := user(s.Players[2].Slot)
	var close letter
	for _, l := range g.mailbox(carol) {
		if l.Kind == "thread" && l.Subject == "[g1] Night 1" {
			close = l
			break
		}
	}
	thread, _ := g.addrs(s.Players[2].Slot)
	g.reply(carol, "host@example.org", close.Header.Get("References")+" <"+close.MessageID+">", "A thought about the vote.")
	told := g.await(carol, "the answer to her misdirected reply", func(l letter) bool {
		return l.Kind == "error" && strings.Contains(l.Text, "host's own address")
	})
	if told.ReplyTo != thread {
		t.Errorf("the answer to a Reply to the thread sent to the host's address has Reply-To %s, not %s", told.ReplyTo, thread)
	}
}
