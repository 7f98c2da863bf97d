package compose_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

// TestStartOpensTheMafiaList: at the start each Mafioso gets, beside the
// role message, a mail of the mafia list to reply to (S3, T2): from the
// list, its Reply-To the Mafioso's own address of the list, naming the other
// Mafiosi and no one else's role; no one but a Mafioso gets one.
func TestStartOpensTheMafiaList(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.signup(names11)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	mafia := h.withRole(engine.Mafia)
	if len(mafia) < 2 {
		t.Fatalf("the classic setup dealt %d Mafiosi", len(mafia))
	}
	lists := map[string]compose.Outgoing{}
	for _, m := range r.msgs {
		if m.Kind != compose.KindMafia {
			continue
		}
		if _, twice := lists[m.Recipient]; twice {
			t.Errorf("%s has two mafia-list mails at the start", m.Recipient)
		}
		lists[m.Recipient] = m
	}
	for _, p := range h.s.Players {
		key := h.key(p.Name)
		m, ok := lists[key]
		if p.Role != engine.Mafia {
			if ok {
				t.Errorf("%s (%s) got the mafia list's mail:\n%s", p.Name, p.Role, m.Raw)
			}
			continue
		}
		if !ok {
			t.Errorf("the Mafioso %s got no mafia-list mail at the start", p.Name)
			continue
		}
		msg := readBack(t, m.Raw)
		replyTo := msg.header.Get("Reply-To")
		if want := "host+dec26-m-" + p.Token + "@example.org"; !strings.Contains(replyTo, want) {
			t.Errorf("%s's mafia-list mail has Reply-To %q, want %s", p.Name, replyTo, want)
		}
		if s, _ := msg.header.Subject(); s != "[dec26] Mafia list, Day 1" {
			t.Errorf("%s's mafia-list mail has subject %q", p.Name, s)
		}
		if from := msg.header.Get("From"); !strings.Contains(from, "host@example.org") {
			t.Errorf("%s's mafia-list mail comes from %q", p.Name, from)
		}
		first, _, _ := strings.Cut(msg.text, "\n")
		for _, other := range mafia {
			if other != p.Name && !strings.Contains(first, other) {
				t.Errorf("%s's mafia-list mail does not name %s first thing: %q", p.Name, other, first)
			}
		}
		if strings.Contains(first, p.Name) {
			t.Errorf("%s's mafia-list mail names its reader among the others: %q", p.Name, first)
		}
		for _, q := range h.s.Players {
			if q.Role != engine.Mafia && strings.Contains(msg.text, q.Name) {
				t.Errorf("%s's mafia-list mail names %s, who is not Mafia", p.Name, q.Name)
			}
		}
	}
}

// TestMafiaPostReachesItsAuthor: a post to the mafia list comes back to
// its author as the list's mail, as a mailing list does, even in the batch
// of the author's own message (whose other copies for the author are in
// their answer); every other living Mafioso gets it, no one else.
func TestMafiaPostReachesItsAuthor(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.signup(names11)
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	mafia := h.withRole(engine.Mafia)
	author := h.player(mafia[0])
	before := h.s.Clone()
	evs, err := engine.Apply(h.s, engine.Command{Verb: engine.CmdPost, By: author, Channel: engine.MafiaCh,
		Text: "Who do we go for tonight?"}, engine.Env{Now: h.now, Rand: h.rand})
	if err != nil {
		t.Fatal(err)
	}
	msgs := h.batch(before, evs, &author)
	var got []string
	for _, m := range msgs {
		if m.Kind != compose.KindMafia {
			t.Errorf("a mafia post caused %s mail to %s", m.Kind, m.Recipient)
			continue
		}
		got = append(got, m.Recipient)
		if m.Recipient == h.key(mafia[0]) {
			msg := readBack(t, m.Raw)
			if first, _, _ := strings.Cut(msg.text, "\n"); first != "You write to the Mafia" {
				t.Errorf("the author's copy starts %q", first)
			}
			if !strings.Contains(msg.text, "Who do we go for tonight?") {
				t.Errorf("the author's copy lacks the post:\n%s", msg.text)
			}
		}
	}
	var want []string
	for _, m := range mafia {
		want = append(want, h.key(m))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the mafia post went to %v, want every living Mafioso %v", got, want)
	}
}
