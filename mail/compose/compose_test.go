package compose_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/compose"
)

func TestGoldenClassic(t *testing.T) {
	t.Parallel()
	_, g := playClassic(t)
	g.check()
	g.covers()
}

func TestGoldenMafia150(t *testing.T) {
	t.Parallel()
	_, g := playMafia150(t)
	g.check()
	g.covers()
}

func TestInvariantsClassic(t *testing.T) {
	t.Parallel()
	h, _ := playClassic(t)
	checkInvariants(t, h)
}

func TestInvariantsMafia150(t *testing.T) {
	t.Parallel()
	h, _ := playMafia150(t)
	checkInvariants(t, h)
}

// started returns a classic game that has just started, with an observer.
func started(t testing.TB) *harness {
	t.Helper()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.dir.Observers[observerAddr] = observerToken
	h.ok(engine.Referee, engine.Private, "ADMIT", engine.Command{Verb: engine.CmdAdmit, Address: observerAddr})
	h.signup(names11)
	h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	return h
}

// TestDeterministic: composing the same events again gives the same bytes,
// Message-IDs first: that is how a copy resent after a crash is known.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	h := started(t)
	before := h.s.Clone()
	a, b := h.town()[0], h.town()[1]
	cmd := vote(b)
	cmd.By, cmd.Channel = h.player(a), engine.Thread
	evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now})
	if err != nil {
		t.Fatal(err)
	}
	logged := h.logged(evs)
	one, err := h.c.Batch(compose.Batch{Before: before, Events: logged, Dir: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	two, err := h.c.Batch(compose.Batch{Before: before, Events: logged, Dir: h.dir})
	if err != nil {
		t.Fatal(err)
	}
	three, err := h.c.Event(logged[0], h.s, h.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(one) != 13 || len(two) != len(one) || len(three) != len(one) {
		t.Fatalf("%d, %d and %d messages; want 13 (11 players, an observer, the referee)", len(one), len(two), len(three))
	}
	for i := range one {
		if one[i].MessageID != two[i].MessageID || !bytes.Equal(one[i].Raw, two[i].Raw) {
			t.Errorf("copy %d differs when composed again", i)
		}
		if one[i].MessageID != three[i].MessageID || !bytes.Equal(one[i].Raw, three[i].Raw) {
			t.Errorf("copy %d differs between Batch and Event", i)
		}
	}
}

// TestAudiences: Public reaches every player, living and dead, every
// observer and the referee; Mafia the living Mafiosi, a post's author
// among them; an empty audience no one.
func TestAudiences(t *testing.T) {
	t.Parallel()
	h := started(t)
	mafia := h.withRole(engine.Mafia)
	// A dead Mafioso, by the referee's hand.
	h.ok(engine.Referee, engine.Private, "MODKILL", at(engine.CmdModkill, mafia[0]))
	r := h.ok(h.player(mafia[1]), engine.MafiaCh, "", post("Quiet now."))
	if got := strings.Join(recipients(r.msgs), " "); len(r.msgs) != 2 || r.msgs[0].Kind != compose.KindMafia ||
		r.msgs[1].Kind != compose.KindMafia || !slices.Contains(recipients(r.msgs), h.key(mafia[1])) ||
		!slices.Contains(recipients(r.msgs), h.key(mafia[2])) {
		t.Errorf("a mafia post went to %s, want the living Mafiosi %s and %s", got, mafia[1], mafia[2])
	}
	r = h.ok(h.player(h.town()[0]), engine.Thread, "", post("Hello."))
	if len(r.msgs) != 13 {
		t.Errorf("a thread post went to %d readers (%v), want 13", len(r.msgs), recipients(r.msgs))
	}
	got := strings.Join(recipients(r.msgs), " ")
	for _, want := range []string{h.key(mafia[0]), "ref", "a-"} {
		if !strings.Contains(got, want) {
			t.Errorf("a thread post did not reach %s: %s", want, got)
		}
	}
	none, err := h.c.Event(compose.Logged{Seq: 999, Event: engine.Event{V: 1, Type: engine.EvReminder, At: h.now}}, h.s, h.dir)
	if err != nil || len(none) != 0 {
		t.Errorf("an event for no one made %d messages (%v)", len(none), err)
	}
}

func recipients(msgs []compose.Outgoing) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Recipient)
	}
	return out
}

// TestReplyCarriesTheSendersOwnCopies: a command's private answers reach
// its sender once, inside the reply; nothing is sent twice.
func TestReplyCarriesTheSendersOwnCopies(t *testing.T) {
	t.Parallel()
	h := started(t)
	mafia := h.withRole(engine.Mafia)
	alice := h.town()[0]
	r := h.ok(h.player(alice), engine.Thread, "TALLY", verb(engine.CmdTally))
	if len(r.msgs) != 0 {
		t.Errorf("TALLY sent %v beside the reply", recipients(r.msgs))
	}
	text := readBack(t, r.reply.Raw).text
	if !strings.Contains(text, "✓ TALLY") || !strings.Contains(text, "Official tally, Day 1") {
		t.Errorf("the reply to TALLY lacks the tally:\n%s", text)
	}
	// Night: a KILL is echoed to the other Mafiosi and the referee, and
	// confirmed to its sender in the reply only.
	h.ok(engine.Referee, engine.Private, "CLOSE", verb(engine.CmdClose))
	r = h.ok(h.player(mafia[0]), engine.Private, "KILL "+alice, at(engine.CmdKill, alice))
	got := strings.Join(recipients(r.msgs), " ")
	if got != h.key(mafia[1])+" "+h.key(mafia[2])+" ref" {
		t.Errorf("a KILL was echoed to %q", got)
	}
	text = readBack(t, r.reply.Raw).text
	if !strings.Contains(text, "✓ KILL "+alice) || !strings.Contains(text, "Tonight's victim: "+alice) {
		t.Errorf("the reply to KILL does not confirm it:\n%s", text)
	}
	// A refused line says why, with the names that were meant.
	r = h.refused(h.player(mafia[0]), engine.Private, "KILL Aliec", at(engine.CmdKill, "Aliec"))
	if r.reply.Kind != compose.KindError {
		t.Errorf("an all-refused reply is %q", r.reply.Kind)
	}
	text = readBack(t, r.reply.Raw).text
	if !strings.Contains(text, "✗ KILL Aliec") || !strings.Contains(text, "did you mean Alice?") {
		t.Errorf("the refusal does not say why:\n%s", text)
	}
}

// TestReplyToSeveralLines: one reply for a message with several commands,
// accepted and refused.
func TestReplyToSeveralLines(t *testing.T) {
	t.Parallel()
	h := started(t)
	town := h.town()
	before := h.s.Clone()
	var lines []compose.Line
	var all []engine.Event
	for _, c := range []struct {
		line string
		cmd  engine.Command
	}{{"VOTE " + town[1], vote(town[1])}, {"LOCK", verb(engine.CmdLock)}, {"KILL " + town[2], at(engine.CmdKill, town[2])}} {
		cmd := c.cmd
		cmd.By, cmd.Channel = h.player(town[0]), engine.Thread
		evs, err := engine.Apply(h.s, cmd, engine.Env{Now: h.now})
		lines = append(lines, compose.Line{Text: c.line, Err: err, Events: evs})
		all = append(all, evs...)
	}
	sender := h.player(town[0])
	msgs, err := h.c.Batch(compose.Batch{Before: before, Events: h.logged(all), Dir: h.dir, Sender: &sender})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 13 {
		t.Errorf("the vote and lock made %d messages, want one per reader (13)", len(msgs))
	}
	rep, err := h.c.Reply(compose.Answer{State: h.s, Dir: h.dir, Sender: sender, Channel: engine.Thread,
		Cause: "<multi@players.example.net>", Received: h.now, Now: h.now, Lines: lines})
	if err != nil {
		t.Fatal(err)
	}
	p := readBack(t, rep.Raw)
	if rep.Kind != compose.KindConfirm || !strings.HasPrefix(p.text, "Your message: 2 done, 1 refused\n") {
		t.Errorf("reply %s:\n%s", rep.Kind, p.text)
	}
	for _, want := range []string{"✓ VOTE " + town[1], "✓ LOCK", "✗ KILL " + town[2], "Refused: KILL is secret"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, p.text)
		}
	}
	if irt := p.header.Get("In-Reply-To"); irt != "<dec26.p."+h.key(town[0])+"@example.org>" {
		t.Errorf("the reply is threaded under %s, not the sender's private channel", irt)
	}
	if _, err := h.c.Reply(compose.Answer{State: h.s, Sender: sender}); err == nil {
		t.Error("a reply without lines was composed")
	}
}

// TestObserverWithoutToken: an observer the host gave no token can read
// the thread but not post; their replies reach the sign-up address.
func TestObserverWithoutToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Classic(), "dec26", 3)
	h.ok(engine.Referee, engine.Private, "ADMIT", engine.Command{Verb: engine.CmdAdmit, Address: "quiet@example.net"})
	h.signup(names11)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	m := toAddr(t, r.msgs, "quiet@example.net")
	p := readBack(t, m.Raw)
	if got := p.header.Get("List-Post"); got != "NO" {
		t.Errorf("List-Post %q, want NO", got)
	}
	if rt, _ := p.header.AddressList("Reply-To"); len(rt) != 1 || rt[0].Address != "host+dec26@example.org" {
		t.Errorf("Reply-To %v, want the sign-up address", rt)
	}
}

// TestHeaderEncoding: names beyond ASCII survive in the header fields.
func TestHeaderEncoding(t *testing.T) {
	t.Parallel()
	h := newHarness(t, engine.Mafia150(), "m150", 5)
	h.signup(names25)
	r := h.ok(engine.Referee, engine.Private, "START", verb(engine.CmdStart))
	m := toKind(t, r.msgs, h.key("Zoë"), compose.KindRole)
	for _, line := range strings.Split(string(m.Raw), "\r\n") {
		if line == "" {
			break
		}
		for _, c := range line {
			if c > 127 {
				t.Fatalf("header line with raw non-ASCII: %q", line)
			}
		}
	}
	p := readBack(t, m.Raw)
	if to, _ := p.header.AddressList("To"); len(to) != 1 || to[0].Name != "Zoë" {
		t.Errorf("To %v", to)
	}
	if s, _ := p.header.Subject(); s != "[m150] Your role — keep it secret" {
		t.Errorf("Subject %q", s)
	}
	r = h.ok(h.player("Zoë"), engine.Thread, "", post("Hej, alla! Ärligt talat…"))
	m = to(t, r.msgs, h.key("Alice"))
	p = readBack(t, m.Raw)
	if from, _ := p.header.AddressList("From"); len(from) != 1 || from[0].Name != "Zoë (m150)" || from[0].Address != hostAddr {
		t.Errorf("From %v: want Zoë's name on the host's address", from)
	}
	if !strings.Contains(p.text, "Hej, alla! Ärligt talat…") {
		t.Errorf("the post lost its letters:\n%s", p.text)
	}
}

// TestNewRefusesBadHostAddresses: the host address is the bare one.
func TestNewRefusesBadHostAddresses(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "host", "host+x@example.org", "@example.org"} {
		if _, err := compose.New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	c, err := compose.New("Host <Host@Example.org>")
	if err != nil {
		t.Fatal(err)
	}
	if c.Host() != "host@example.org" || c.ThreadAddress("g1", "abcdefghij") != "host+g1-t-abcdefghij@example.org" ||
		c.PrivateAddress("g1", "abcdefghij") != "host+g1-p-abcdefghij@example.org" ||
		c.MafiaAddress("g1", "abcdefghij") != "host+g1-m-abcdefghij@example.org" || c.SignupAddress("g1") != "host+g1@example.org" {
		t.Error("the addresses are not those of docs/design.md")
	}
}

// TestDigestRefusesOtherEvents: only posts and votes wait for digests.
func TestDigestRefusesOtherEvents(t *testing.T) {
	t.Parallel()
	h := started(t)
	_, err := h.c.Digest(compose.Digest{State: h.s, Dir: h.dir, Now: h.now,
		Events: []compose.Logged{{Seq: 1, Event: engine.Event{V: 1, Type: engine.EvDawn, To: engine.Audience{Public: true}}}}})
	if err == nil {
		t.Error("a dawn went into a digest")
	}
	if _, err := h.c.Digest(compose.Digest{State: h.s, Dir: h.dir, Now: h.now}); err == nil {
		t.Error("an empty digest was composed")
	}
}

// TestReplyAboutNoGame: mail to the host's own address gets an answer
// too, HELP included, outside any game's conversations.
func TestReplyAboutNoGame(t *testing.T) {
	t.Parallel()
	c, err := compose.New(hostAddr)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Reply(compose.Answer{Sender: engine.Actor{Kind: engine.ByOutsider, Address: "newbie@example.net"},
		Cause: "<hello@example.net>", Subject: "how does this work?", Received: t0, Now: t0,
		Lines: []compose.Line{{Text: "help"}}})
	if err != nil {
		t.Fatal(err)
	}
	p := readBack(t, rep.Raw)
	if s, _ := p.header.Subject(); s != "[mafiamail] Your message: done" {
		t.Errorf("Subject %q", s)
	}
	if p.header.Get("X-Mafiamail-Game") != "" || p.header.Get("In-Reply-To") != "" || rep.To[0] != "newbie@example.net" {
		t.Errorf("a reply about no game carries game fields: %v", p.fields)
	}
	for _, want := range []string{"✓ help", "How to play Mafia by mail", "JOIN", "NEW GAME"} {
		if !strings.Contains(p.text, want) {
			t.Errorf("the reply lacks %q:\n%s", want, p.text)
		}
	}
}
