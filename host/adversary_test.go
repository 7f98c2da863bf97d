package host

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/address"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// Forged mail in a player's and in the referee's name, to every address
// that takes mail without a token, cannot use up their seats' allowances:
// their real commands afterwards are applied.
func TestForgedMailCannotSilenceASeat(t *testing.T) {
	t.Parallel()
	hs := newLimitedHarness(t, 40) // ten at once per sender, then one every 90 s
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	for i := range 40 {
		for _, from := range []string{addr("Alice"), "ref@example.org"} {
			hs.send(from, "host@example.org", fmt.Sprintf("HELP\r\n\r\nforgery %d", i))
			hs.send(from, "host+g1@example.org", "JOIN Mallory")
		}
		// Mail from ever new addresses draws on the pool of unproven
		// mail, never on a seat.
		hs.send(fmt.Sprintf("eve%d@evil.test", i), "host@example.org", "HELP")
	}
	limited := 0
	for _, in := range mustInbound(t, hs, store.OutcomeRefused) {
		if in.Reason != inbound.ReasonRateLimited {
			t.Errorf("forgery %s refused as %s, want rate-limited", in.MessageID, in.Reason)
		}
		limited++
	}
	if limited < 100 {
		t.Fatalf("only %d of the 200 forgeries were refused: the limit did not bite", limited)
	}
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	if v := hs.game("g1").Player(1).Vote; v != 2 {
		t.Fatalf("Alice's real vote after 80 forgeries in her name: she votes for seat %d, want Bob (2)", v)
	}
	before := hs.game("g1").Deadline
	hs.send("ref@example.org", ref, "EXTEND 12h")
	if after := hs.game("g1").Deadline; !after.After(before) {
		t.Fatalf("the referee's EXTEND after 80 forgeries in his name was not applied: deadline %v, was %v", after, before)
	}
}

func mustInbound(t *testing.T, hs *harness, o store.Outcome) []store.Inbound {
	t.Helper()
	ms, err := hs.st.InboundByOutcome(context.Background(), o, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// A JOIN from a quoted local part that reads, unquoted, as envelope syntax
// is refused, and so is an ADD of one: no seat, no answer, nothing queued
// for anyone but plain addresses.
func TestSignUpTakesOnlyPlainAddresses(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	before := len(hs.outbox())
	hs.send(`"victim@example.test> ORCPT=rfc822;x"@evil.test`, "host+g1@example.org", "JOIN Mallory")
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("%d seats after the JOIN from a quoted address", n)
	}
	refused := mustInbound(t, hs, store.OutcomeRefused)
	if len(refused) != 1 || refused[0].Reason != inbound.ReasonBadAddress {
		t.Fatalf("refused %+v, want the JOIN refused as bad-address", refused)
	}
	hs.send("ref@example.org", ref, "ADD Mallory \"victim@example.test>NOTIFY=NEVER\"@evil.test")
	if n := len(hs.game("g1").Players); n != 0 {
		t.Fatalf("%d seats after the ADD of a quoted address", n)
	}
	answers := hs.outbox()[before:]
	if len(answers) != 1 || !strings.Contains(string(answers[0].Raw), "not a plain mail address") {
		t.Fatalf("%d answers, want one to the referee saying the address is not plain:\n%s", len(answers), answers[0].Raw)
	}
	for _, m := range hs.outbox() {
		for _, to := range m.To {
			if !address.Valid(to) {
				t.Errorf("%s queued for %q", m.Kind, to)
			}
		}
	}
}

// No one signs up under the referee's or the host's voice, or as a
// look-alike of a seated player: each JOIN by mail is refused, and the
// answer says why in words.
func TestJoinCannotImpersonate(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	hs.send(addr("Alice"), "host+g1@example.org", "JOIN Alice")
	tries := []struct{ name, says string }{
		{"The referee", `holds the word "referee"`},
		{"Host", `holds the word "host"`},
		{"Mafiamail", `holds the word "mafiamail"`},
		{"Referee Bob", `holds the word "referee"`},
		{"Mafia g1", `holds the word`},
		{"The R\u0435feree", `looks like the word "referee"`},
		{"H\u03bfst", `looks like the word "host"`},
		{"Mafiamai1", `looks like the word "mafiamail"`},
		{"R\u0435feree B\u043eb", `looks like the word "referee"`},
		{"=?utf-8?q?R=D0=B5feree?=", `looks like the word "referee"`},
		{"\u0410lice", `looks the same as "Alice"`},
		{"Ali\u202ece", "invisible or formatting"},
	}
	for i, tt := range tries {
		from := fmt.Sprintf("mallory%d@players.test", i)
		before := len(hs.outbox())
		hs.send(from, "host+g1@example.org", "JOIN "+tt.name)
		answers := hs.mailTo(from, before)
		if len(answers) != 1 {
			t.Errorf("JOIN %s: %d answers, want 1", tt.name, len(answers))
			continue
		}
		if text := parseLetter(answers[0].Raw).Text; !strings.Contains(text, tt.says) {
			t.Errorf("JOIN %s: the answer does not say %q:\n%s", tt.name, tt.says, text)
		}
	}
	if s := hs.game("g1"); len(s.Players) != 1 {
		t.Errorf("%d seats, want Alice's alone", len(s.Players))
	}
}

// The Message-IDs a Townsperson sees carry nothing of the game's event log:
// the mafia list's posts between two thread posts, which once made them
// jump by exactly that many, leave no number in them to count by.
func TestMessageIDsCountNoSecretEvents(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	s := hs.game("g1")
	var mafioso, towns string
	for _, p := range s.Players {
		switch {
		case p.Role == engine.Mafia && mafioso == "":
			mafioso = p.Name
		case p.Role == engine.Townsperson && towns == "":
			towns = p.Name
		}
	}
	mafia := "host+g1-m-" + hs.token("g1", addr(mafioso)) + "@example.org"
	from := len(hs.outbox())
	hs.send(addr(towns), hs.thread(towns), "First post.")
	for i := range 3 {
		hs.send(addr(mafioso), mafia, fmt.Sprintf("secret plan %d", i))
	}
	hs.send(addr(towns), hs.thread(towns), "Second post.")
	evs, err := hs.st.Events(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	opaque := regexp.MustCompile(`^<g1\.[0-9a-f]{24}@example\.org>$`)
	seen := 0
	for _, m := range hs.mailTo(addr(towns), from) {
		seen++
		if !opaque.MatchString(m.MessageID) {
			t.Errorf("%s mail to a Townsperson has Message-ID %s, not the game and an opaque hash", m.Kind, m.MessageID)
		}
		for _, e := range evs {
			if strings.Contains(m.MessageID, fmt.Sprintf(".%d.", e.Seq)) || strings.Contains(m.MessageID, fmt.Sprintf(".%d-", e.Seq)) {
				t.Errorf("Message-ID %s names event %d of the log", m.MessageID, e.Seq)
			}
		}
		if strings.Contains(string(m.Raw), "secret plan") {
			t.Errorf("a Townsperson's %s mail carries the mafia list's post", m.Kind)
		}
	}
	if seen < 2 {
		t.Fatalf("the Townsperson got %d thread mails for two posts", seen)
	}
}

// One huge post no longer fans out: it is refused with an answer, and the
// bytes queued for it are the answer's alone; a post at the limit queues a
// bounded copy per reader, and an attachment is never relayed. The time the
// host spends on the huge message is logged: it is what every other game
// waits at most for one message. The huge post is 7.8 MB, as large as a
// provider lets a message be, with the full counts, which CI plays;
// the everyday run posts 1 MB, thirty times the limit, which fanned out
// would queue many times the bound the test allows.
func TestHugePostDoesNotFanOut(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	queued := func(from int) (n int) {
		for _, m := range hs.outbox()[from:] {
			n += len(m.Raw)
		}
		return n
	}
	before := len(hs.outbox())
	size := 1 << 20
	if fullCounts {
		size = 7_800_000
	}
	huge := strings.Repeat("Bob is the mafia, and here is why. ", size/35)
	start := time.Now()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob\r\n\r\n"+huge)
	took := time.Since(start)
	t.Logf("a %d MB post took %v to handle", len(huge)>>20, took)
	if v := hs.game("g1").Player(1).Vote; v != 2 {
		t.Errorf("the vote in the huge message was not applied: Alice votes for seat %d", v)
	}
	var answers []store.OutMessage
	for _, m := range hs.mailTo(addr("Alice"), before) {
		if m.Kind != "thread" {
			answers = append(answers, m)
		}
	}
	if len(answers) != 1 || !strings.Contains(parseLetter(answers[0].Raw).Text, "more than the 32 KiB a post may have") {
		t.Fatalf("%d answers to Alice, want one that says the post is over the limit", len(answers))
	}
	// The answer, and the thread's news of the vote to each reader.
	if n, most := queued(before), (len(hs.game("g1").Players)+2)*32<<10; n > most {
		t.Errorf("%d bytes queued for one refused post, want the answer and the vote's news, at most %d", n, most)
	}
	for _, m := range hs.outbox()[before:] {
		if strings.Contains(string(m.Raw), "here is why") {
			t.Errorf("the huge post went out in %s mail to %v", m.Kind, m.To)
		}
	}

	// At the limit: every reader's copy, text and HTML, is bounded.
	before = len(hs.outbox())
	atLimit := strings.Repeat("word ", DefaultMaxPostBytes/5-1)
	hs.send(addr("Bob"), hs.thread("Bob"), atLimit)
	readers := len(hs.game("g1").Players) + 1
	if n := queued(before); n > readers*(3*DefaultMaxPostBytes+32<<10) {
		t.Errorf("%d bytes queued for one post of %d bytes to %d readers", n, len(atLimit), readers)
	}

	// An attachment is not relayed.
	before = len(hs.outbox())
	attached := hs.authResults(addr("Carol")) + "From: " + addr("Carol") + "\r\nTo: " + hs.thread("Carol") + "\r\nSubject: evidence\r\nMessage-ID: <att@players.test>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"See the picture.\r\n--b\r\nContent-Type: image/png; name=proof.png\r\nContent-Disposition: attachment; filename=proof.png\r\n" +
		"Content-Transfer-Encoding: base64\r\n\r\n" + strings.Repeat("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\r\n", 20000) + "--b--\r\n"
	hs.deliver([]byte(attached))
	relayed := 0
	for _, m := range hs.outbox()[before:] {
		if m.Kind != "thread" {
			continue
		}
		relayed++
		if strings.Contains(string(m.Raw), "proof.png") || len(m.Raw) > 64<<10 {
			t.Errorf("the relay of a post with an attachment is %d bytes, or names the attachment", len(m.Raw))
		}
	}
	if relayed == 0 {
		t.Error("the post with an attachment was not relayed at all")
	}
}

// sendAs delivers a message under a Message-ID of the test's choosing.
func (hs *harness) sendAs(id, from, to, body string) {
	hs.t.Helper()
	hs.deliver([]byte(fmt.Sprintf("%sFrom: %s\r\nTo: %s\r\nSubject: game\r\nMessage-ID: %s\r\n"+
		"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		hs.authResults(from), from, to, id, body)))
}

// A forgery sent first under the Message-ID a player's client will give her
// vote cannot make the vote vanish as its duplicate; a true copy (the same
// message delivered again) is still applied once.
func TestForgedMessageIDCannotEraseAVote(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	const id = "<alice.next.vote@players.test>"
	hs.sendAs(id, addr("Alice"), "host@example.org", "HELP")                    // her address, the host's
	hs.sendAs(id, "eve@evil.test", hs.thread("Alice"), "VOTE Dave")             // her channel, another From
	hs.sendAs(id, addr("Alice"), hs.thread("Alice"), "VOTE Dave\r\n\r\nforged") // her channel and From, other text
	if v := hs.game("g1").Player(1).Vote; v != 4 {
		t.Fatalf("the third forgery, the same channel and From with other words, is its own message: vote %d", v)
	}
	hs.sendAs(id, addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	if v := hs.game("g1").Player(1).Vote; v != 2 {
		t.Fatalf("Alice's real vote after forgeries under its Message-ID: she votes for seat %d, want Bob (2)", v)
	}
	hs.sendAs(id, addr("Alice"), hs.thread("Alice"), "VOTE Bob") // the same message again
	hs.send(addr("Alice"), hs.thread("Alice"), "UNVOTE")
	hs.sendAs(id, addr("Alice"), hs.thread("Alice"), "VOTE Bob") // and once more, after she took it back
	if v := hs.game("g1").Player(1).Vote; v != 0 {
		t.Fatalf("a copy of Alice's vote was applied again: she votes for seat %d", v)
	}
}

// A suspension is served only by a JOIN it keeps out: JOINs that would
// have been refused anyway (a game already running, a name taken) leave it
// in force.
func TestSuspensionKeptUntilItKeepsSomeoneOut(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	const troll = "troll@players.test"
	hs.send("ref@example.org", ref, "SUSPEND "+troll)
	hs.send(troll, "host+g1@example.org", "JOIN Troll") // g1 is running
	hs.send("ref@example.org", "host@example.org", "NEW GAME g2")
	hs.send(addr("Alice"), "host+g2@example.org", "JOIN Alice")
	hs.send(troll, "host+g2@example.org", "JOIN Alice") // the name is taken
	if n := len(hs.game("g2").Players); n != 1 {
		t.Fatalf("%d seats in g2, want Alice's", n)
	}
	before := len(hs.outbox())
	hs.send(troll, "host+g2@example.org", "JOIN Troll")
	if n := len(hs.game("g2").Players); n != 1 {
		t.Fatalf("the suspension was used up by JOINs it kept out of nothing: the troll took a seat")
	}
	answers := hs.mailTo(troll, before)
	if len(answers) != 1 || !strings.Contains(parseLetter(answers[0].Raw).Text, "suspend") {
		t.Fatalf("%d answers to the suspended JOIN, want one that names the suspension", len(answers))
	}
	hs.send(troll, "host+g2@example.org", "JOIN Troll") // served: now welcome
	if n := len(hs.game("g2").Players); n != 2 {
		t.Fatalf("%d seats after the suspension was served, want the troll's too", n)
	}
}

// Without an authserv-id, forged mail in a victim's name to the host's and
// to a sign-up address makes the host write to the victim at most once a
// day, in a short answer that repeats nothing the forger wrote. Each
// forgery is 2000 lines, which the host reads as commands: the everyday run
// sends 25 of them, the full counts, which CI plays, 100;
// either stays under the harness's limit of 120 an hour per sender, so
// that the limit of one answer a day is what is tested.
func TestForgedMailGetsTheVictimOneShortAnswer(t *testing.T) {
	t.Parallel()
	hs := newUnprovenHarness(t, 120)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	hs.confirm("ref@example.org")
	const victim = "victim@players.test"
	lure := "URGENT: your account is locked, log in at http://evil.test/login"
	forgeries := 25
	if fullCounts {
		forgeries = 100
	}
	for i := range forgeries {
		to := "host@example.org"
		if i%2 == 1 {
			to = "host+g1@example.org"
		}
		hs.uid++
		hs.deliver([]byte(fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: <lure%d@evil.test>\r\n\r\n%s\r\nHELP %s\r\nJOIN %s\r\n%s\r\n",
			victim, to, lure, i, lure, lure, lure, strings.Repeat(lure+"\r\n", 2000))))
	}
	answers := hs.mailTo(victim, 0)
	if len(answers) != 1 {
		t.Fatalf("%d answers to the victim of %d forgeries, want 1", len(answers), forgeries)
	}
	if n := len(answers[0].Raw); n > 32<<10 {
		t.Errorf("the answer is %d bytes: not short", n)
	}
	for _, word := range []string{"evil", "URGENT", "locked"} {
		if strings.Contains(string(answers[0].Raw), word) {
			t.Errorf("the answer repeats %q of the forgery:\n%s", word, parseLetter(answers[0].Raw).Text)
		}
	}
	// A day later the address may have an answer again.
	hs.now = hs.now.Add(24*time.Hour + time.Minute)
	hs.send(victim, "host@example.org", "HELP")
	if n := len(hs.mailTo(victim, 0)); n != 2 {
		t.Errorf("%d answers after a day, want a second one", n)
	}
}

// A failed delivery is told to the referee once, though the sender reports
// it twice (marked failed, and as refused recipients); an address that
// always bounces is told at most once a day, the untold failures counted in
// the next notice.
func TestFailureNoticesAreSummedUp(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	toAlice := func() []store.OutMessage {
		t.Helper()
		claimed, err := hs.st.ClaimDue(ctx, hs.now.Add(time.Hour), 1000)
		if err != nil {
			t.Fatal(err)
		}
		var out []store.OutMessage
		for _, m := range claimed {
			if len(m.To) == 1 && m.To[0] == addr("Alice") {
				out = append(out, m)
			}
		}
		return out
	}
	notices := func(from int) int {
		n := 0
		for _, m := range hs.mailTo("ref@example.org", from) {
			if strings.Contains(string(m.Raw), "no such user") {
				n++
			}
		}
		return n
	}
	before := len(hs.outbox())
	ms := toAlice()
	if len(ms) < 2 {
		t.Fatalf("%d messages to Alice, want at least 2", len(ms))
	}
	for _, m := range ms {
		if err := hs.h.Outbox().MarkFailed(ctx, m.ID, "550 5.1.1 no such user"); err != nil {
			t.Fatal(err)
		}
		// The same failure, as the sender reports refused recipients.
		if err := hs.h.DeliveryFailed(ctx, m, errors.New("550 5.1.1 no such user")); err != nil {
			t.Fatalf("the second report of one failure: %v", err)
		}
	}
	if n := notices(before); n != 1 {
		t.Fatalf("%d notices for %d failures to one address within a day, want 1", n, len(ms))
	}
	// A day later, the next failure is told with the count of the untold.
	hs.now = hs.now.Add(25 * time.Hour)
	hs.send(addr("Bob"), hs.thread("Bob"), "Anyone there?")
	before = len(hs.outbox())
	more := toAlice()
	if len(more) == 0 {
		t.Fatal("no new mail to Alice")
	}
	if err := hs.h.Outbox().MarkFailed(ctx, more[0].ID, "550 5.1.1 no such user"); err != nil {
		t.Fatal(err)
	}
	got := hs.mailTo("ref@example.org", before)
	if len(got) != 1 || !strings.Contains(parseLetter(got[0].Raw).Text, fmt.Sprintf("and %d more failed deliveries", len(ms)-1)) {
		t.Fatalf("%d notices a day later, want one that counts the %d untold:\n%s", len(got), len(ms)-1, parseLetter(got[0].Raw).Text)
	}
}

// Inbound mail is kept whole until a while after its game ended, and then
// only its header and outcome; mail for no game goes the same way that
// long after it came.
func TestRawMailIsDroppedAfterTheGame(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hs := newHarness(t)
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob\r\n\r\nmy private musings")
	hs.send("stranger@players.test", "host+nosuchgame-t-aaaaaaaaaaaaaaaa@example.org", "refused, and kept a while")
	hs.send("ref@example.org", ref, "END")
	if s := hs.game("g1"); s.Phase != engine.EndedPhase {
		t.Fatalf("phase %s after END", s.Phase)
	}
	bodies := func() (whole int) {
		t.Helper()
		for _, o := range []store.Outcome{store.OutcomeApplied, store.OutcomeRefused} {
			for _, in := range mustInbound(t, hs, o) {
				if strings.Contains(string(in.Raw), "musings") || strings.Contains(string(in.Raw), "kept a while") {
					whole++
				}
				if !strings.Contains(string(in.Raw), "Message-ID:") {
					t.Errorf("inbound %d lost its header: %q", in.ID, in.Raw)
				}
			}
		}
		return whole
	}
	hs.h.dropOldRawMail(ctx)
	if n := bodies(); n != 2 {
		t.Fatalf("%d of 2 bodies kept right after the game, want both", n)
	}
	hs.now = hs.now.Add(DefaultKeepRawMail + time.Hour)
	hs.h.dropOldRawMail(ctx)
	if n := bodies(); n != 0 {
		t.Fatalf("%d bodies kept %v after the game ended, want none", n, DefaultKeepRawMail)
	}
	if refused := mustInbound(t, hs, store.OutcomeRefused); len(refused) == 0 || refused[0].Reason == "" {
		t.Errorf("the refused message lost its outcome: %+v", refused)
	}
}

// A vote for a player who is dead is refused, even when the name starts a
// living player's: "VOTE Bob" with Bob removed and Bobby alive says who
// died and who is alive, and offers the line "VOTE Bobby" to send; no vote
// lands on Bobby. So does "Carol >> Bob".
func TestVoteForTheDeadDoesNotSlideToTheLiving(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	// Two Mafiosi among seven: whatever Bob's role, his removal does not
	// end the game.
	hs.send("ref@example.org", ref, "SETUP players=7 mafia=2 inspectors=1 inspector_knows_mafioso=false")
	for _, p := range []string{"Alice", "Bob", "Bobby", "Carol", "Dave", "Erin", "Frank"} {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	hs.send("ref@example.org", ref, "START")
	hs.send("ref@example.org", ref, "MODKILL Bob")
	if s := hs.game("g1"); s.Phase != engine.DayPhase || s.Player(slotByName(s, "Bob")).Alive {
		t.Fatalf("phase %s, Bob alive %v: the game did not start, or Bob was not removed", s.Phase, s.Player(slotByName(s, "Bob")).Alive)
	}
	carol := "host+g1-t-" + hs.token("g1", addr("Carol")) + "@example.org"
	for _, line := range []string{"VOTE Bob", "Carol >> Bob"} {
		before := len(hs.outbox())
		hs.send(addr("Carol"), carol, line)
		s := hs.game("g1")
		if v := s.Player(slotByName(s, "Carol")).Vote; v != 0 {
			t.Fatalf("%q put Carol's vote on %s", line, s.Player(v).Name)
		}
		answers := hs.mailTo(addr("Carol"), before)
		if len(answers) != 1 {
			t.Fatalf("%q: %d mails to Carol, want one answer", line, len(answers))
		}
		text := strings.Join(strings.Fields(parseLetter(answers[0].Raw).Text), " ")
		want := strings.Replace(line, "Bob", "Bobby", 1)
		for _, says := range []string{"Bob is dead (removed by the referee); the living players are Alice, Bobby, Carol, Dave, Erin and Frank.",
			"If you meant Bobby, send this line: " + want} {
			if !strings.Contains(text, says) {
				t.Errorf("the answer to %q does not say %q:\n%s", line, says, text)
			}
		}
		if strings.Contains(text, "You vote") {
			t.Errorf("the answer to %q tells of a vote:\n%s", line, text)
		}
	}
}

func slotByName(s *engine.State, name string) int {
	for _, p := range s.Players {
		if p.Name == name {
			return p.Slot
		}
	}
	return 0
}

// A verb written with a letter that only looks like a Latin one is no
// command, and is not relayed either: no reader sees "VОTE Erin" in the
// post of someone who cast no vote. The author is told privately which
// character it is and what to send. A verb with an invisible character in
// it is the command it shows, counted and taken out of the post.
func TestLookalikeVerbIsNeitherCountedNorShown(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	before := len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"), "V\u041eTE Erin\r\nErin has been quiet all day.")
	s := hs.game("g1")
	if v := s.Player(slotByName(s, "Alice")).Vote; v != 0 {
		t.Fatalf("the look-alike vote was counted for %s", s.Player(v).Name)
	}
	posted := false
	for _, m := range hs.mailTo(addr("Carol"), before) {
		text := parseLetter(m.Raw).Text
		if strings.Contains(text, "quiet all day") {
			posted = true
		}
		if strings.Contains(text, "TE Erin") {
			t.Errorf("Carol's copy shows the look-alike vote:\n%s", text)
		}
	}
	if !posted {
		t.Errorf("Alice's words were not relayed")
	}
	answer := ""
	for _, m := range hs.mailTo(addr("Alice"), before) {
		if m.Kind == "error" || m.Kind == "confirm" {
			answer = strings.Join(strings.Fields(parseLetter(m.Raw).Text), " ")
		}
	}
	for _, says := range []string{`"О" in this line is a Cyrillic letter that only looks like the Latin letter "O"`,
		"neither done nor passed on", "Send this line instead: VOTE Erin"} {
		if !strings.Contains(answer, says) {
			t.Errorf("Alice's answer does not say %q:\n%s", says, answer)
		}
	}

	before = len(hs.outbox())
	hs.send(addr("Bob"), hs.thread("Bob"), "VO\u200bTE Dave\r\nDave dodged my question.")
	s = hs.game("g1")
	if v := s.Player(slotByName(s, "Bob")).Vote; v != slotByName(s, "Dave") {
		t.Errorf("the vote with an invisible character went to seat %d, not Dave", v)
	}
	for _, m := range hs.mailTo(addr("Carol"), before) {
		if text := parseLetter(m.Raw).Text; strings.Contains(text, "TE Dave") {
			t.Errorf("Carol's copy shows the vote line as a post:\n%s", text)
		}
	}
}
