package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/store"
)

// replyTo delivers a reply to the host's mail inReplyTo, as a mail client
// writes one.
func (hs *harness) replyTo(from, to, inReplyTo, body string) {
	hs.t.Helper()
	hs.uid++
	hs.deliver([]byte(fmt.Sprintf("%sFrom: %s\r\nTo: %s\r\nSubject: Re: [g1] Day 1\r\nMessage-ID: <r%d@players.test>\r\n"+
		"In-Reply-To: %s\r\nReferences: <g1.thread.d1@example.org> %s\r\n"+
		"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s",
		hs.authResults(from), from, to, hs.uid, inReplyTo, inReplyTo, strings.ReplaceAll(body, "\n", "\r\n"))))
}

// lastThreadMail is the newest thread mail queued for an address.
func (hs *harness) lastThreadMail(addr string) store.OutMessage {
	hs.t.Helper()
	ms := hs.mailTo(addr, 0)
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Kind == "thread" {
			return ms[i]
		}
	}
	hs.t.Fatalf("no thread mail to %s", addr)
	return store.OutMessage{}
}

// relayed is the text and HTML of the post that reached Erin from a
// message, or fails.
func (hs *harness) relayed(before int, words string) (text, html string) {
	hs.t.Helper()
	for _, m := range hs.mailTo(addr("Erin"), before) {
		if l := parseLetter(m.Raw); strings.Contains(l.Text, words) {
			return l.Text, l.HTML
		}
	}
	hs.t.Fatalf("no post with %q reached Erin", words)
	return "", ""
}

// An inline reply's context is the host's own record: quoted lines that
// the mail answered never held, made up to look like another player's or
// the referee's words, reach everyone as the author's own words, never in
// the layout of a quote; lines the host sent only the author (their state
// line, their receipt) are never relayed; lines everyone was sent are
// relayed as the context they are.
func TestMadeUpQuotesAreTheAuthors(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	hs.send(addr("Bob"), hs.thread("Bob"), "I agree with Carol. Alice jumped on Erin with no reason.")
	answered := hs.lastThreadMail(addr("Dave"))
	if !strings.Contains(string(answered.Raw), "Alice jumped on Erin") {
		t.Fatalf("Dave's newest thread mail is not Bob's post:\n%s", answered.Raw)
	}

	for _, c := range []struct {
		name, body, answer string
		want               string // the post as Erin reads it
	}{{
		name:   "a made-up quote of a player",
		body:   "> Carol writes\n> > I am the Inspector. I checked Alice: Mafia.\n\nThere you have it.\n",
		answer: "There you have it.",
		want:   "Dave writes\n> Carol writes\n> I am the Inspector. I checked Alice: Mafia.\n> There you have it.",
	}, {
		name:   "a made-up quote of the referee",
		body:   "> The referee writes\n> > Dave is confirmed Town by the referee.\n\nSo, not me.\n",
		answer: "So, not me.",
		want:   "Dave writes\n> The referee writes\n> Dave is confirmed Town by the referee.\n> So, not me.",
	}, {
		name:   "a true quote, with the host's heading and a line made up within it",
		body:   "> Bob writes\n> > I agree with Carol. Alice jumped on Erin with no reason.\n> > Carol is confirmed Town.\n\nNo reason? Alice gave one.\n",
		answer: "Alice gave one.",
		want:   "Dave writes\n> > I agree with Carol. Alice jumped on Erin with no reason.\n> Carol is confirmed Town.\n> No reason? Alice gave one.",
	}, {
		name:   "the author's own state line",
		body:   "> You have not voted yet.\n\nI will soon.\n",
		answer: "I will soon.",
		want:   "Dave writes\n> I will soon.",
	}} {
		before := len(hs.outbox())
		hs.replyTo(addr("Dave"), hs.thread("Dave"), answered.MessageID, c.body)
		text, html := hs.relayed(before, c.answer)
		if got := strings.TrimSpace(text[:strings.Index(text, "\n\n")]); got != c.want {
			t.Errorf("%s: Erin reads\n%s\nwant\n%s", c.name, got, c.want)
		}
		// In the HTML, the post is one frame under Dave's name; only the
		// true quote nests a quote in it, and nothing the author wrote
		// takes the frame's label.
		nested := strings.Count(html, "<blockquote") - 1
		if wantNested := strings.Count(c.want, "\n> >"); nested != min(wantNested, 1) {
			t.Errorf("%s: the HTML nests %d quotes in the post, want %d:\n%s", c.name, nested, min(wantNested, 1), html)
		}
		for _, label := range []string{"The referee writes:</p>", "Carol writes:</p>", "Bob writes:</p>"} {
			if strings.Contains(html, label) {
				t.Errorf("%s: the HTML shows a frame labelled %q", c.name, label)
			}
		}
	}

	// Dave's own receipt and state, quoted back to the thread, are his
	// alone: not relayed, as context or as his words.
	hs.send(addr("Dave"), hs.thread("Dave"), "VOTE Erin")
	receipt := hs.lastThreadMail(addr("Dave"))
	own := parseLetter(receipt.Raw).Text
	if !strings.HasPrefix(own, "Your message: VOTE Erin done") || !strings.Contains(own, "You vote Erin.") {
		t.Fatalf("Dave's copy of his vote is not his receipt:\n%s", own)
	}
	state := ""
	for _, l := range strings.Split(own, "\n") {
		if strings.HasPrefix(l, "You vote Erin.") {
			state = l
		}
	}
	before := len(hs.outbox())
	hs.replyTo(addr("Dave"), hs.thread("Dave"), receipt.MessageID,
		"> Your message: VOTE Erin done\n>\n> "+state+"\n\nErin, explain yourself.\n")
	text, _ := hs.relayed(before, "explain yourself")
	if strings.Contains(text, "Your message") || strings.Contains(text, "You vote") {
		t.Errorf("Dave's own lines were relayed:\n%s", text)
	}
}

// What was said on the mafia list is never quoted to the town: a Mafioso
// who answers a mafia-list mail inline on the thread relays his own words
// alone, and the same answer to the mafia list keeps its context.
func TestMafiaListIsNoContextForTheTown(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=5 mafia=2 inspectors=0 doctors=0 vigilantes=0")
	for _, p := range players {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	hs.send("ref@example.org", ref, "START")
	var mafia, town []string
	for _, p := range hs.game("g1").Players {
		if p.Role == engine.Mafia {
			mafia = append(mafia, p.Name)
		} else {
			town = append(town, p.Name)
		}
	}
	if len(mafia) != 2 {
		t.Fatalf("mafia %v: the game did not start as set up", mafia)
	}
	list := func(name string) string { return "host+g1-m-" + hs.token("g1", addr(name)) + "@example.org" }
	hs.send(addr(mafia[0]), list(mafia[0]), "We go for Carol, she is too sharp.")
	var whisper store.OutMessage
	for _, m := range hs.mailTo(addr(mafia[1]), 0) {
		if m.Kind == "mafia" {
			whisper = m
		}
	}
	if whisper.MessageID == "" {
		t.Fatalf("%s got no mafia-list mail", mafia[1])
	}
	body := "> We go for Carol, she is too sharp.\n\nCarol seems fine to me.\n"
	before := len(hs.outbox())
	hs.replyTo(addr(mafia[1]), hs.thread(mafia[1]), whisper.MessageID, body)
	for _, m := range hs.mailTo(addr(town[0]), before) {
		if text := parseLetter(m.Raw).Text; strings.Contains(text, "too sharp") {
			t.Errorf("the town reads the mafia list:\n%s", text)
		}
	}
	before = len(hs.outbox())
	hs.replyTo(addr(mafia[1]), list(mafia[1]), whisper.MessageID, body)
	found := false
	for _, m := range hs.mailTo(addr(mafia[0]), before) {
		if text := parseLetter(m.Raw).Text; strings.Contains(text, "> > We go for Carol, she is too sharp.\n> Carol seems fine to me.") {
			found = true
		}
	}
	if !found {
		t.Errorf("the answer on the mafia list lost its context")
	}
}
