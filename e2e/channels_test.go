//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/hostrun"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// embeddedGame is a host run as `mafiamail serve --embedded` runs it, on
// the embedded mail servers, with a game clock the test moves, and
// participants who read their mail over IMAP and write over SMTP.
type embeddedGame struct {
	t   *testing.T
	srv *mailserver.Server
	st  *store.Store
	h   *host.Host

	mu  sync.Mutex
	now time.Time
	n   int
}

func startEmbedded(t *testing.T) *embeddedGame {
	t.Helper()
	srv, err := mailserver.Start(mailserver.Config{AutoCreateUsers: true, AutoCreatePassword: e2ePass,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("mailserver.Start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	// The game starts at 15:00 on a Wednesday about a month ago and the
	// test moves it on by days, never past real time: the host stamps the
	// mail it queues with its clock, and the sender, which keeps real
	// time, sends what is due. Always a Wednesday, so that the tests'
	// days fall on the same weekdays whatever today is (a round's close
	// and its reminders depend on the weekend).
	start := time.Now().UTC().AddDate(0, -1, 0)
	for start.Weekday() != time.Wednesday {
		start = start.AddDate(0, 0, -1)
	}
	g := &embeddedGame{t: t, srv: srv, now: time.Date(start.Year(), start.Month(), start.Day(), 15, 0, 0, 0, time.UTC)}
	cfg := service.Embedded(srv, e2ePass, filepath.Join(t.TempDir(), "host.db"))
	// The host trusts its receiving server's authentication, as a real
	// one does with authserv_id set: then every answer quotes what it
	// answers (without it, answers to mail at the sign-up and host
	// addresses are cut short, as host/adversary_test.go checks).
	cfg.Auth.AuthservID = "mx.example.org"
	rt := hostrun.Start(t, &cfg, service.Config{Clock: host.Clock{Real: g.clock},
		// drawSeed(7) of host/channels_test.go: the same draw every run.
		Draw: rand.NewChaCha8([32]byte{7}), Log: testlog.New(t, slog.LevelWarn),
		// Arrival order maps the instant mail reached the mailbox, real
		// time, onto game time. Here game time is a clock the test moves a
		// day at a time, with no tie to real time: commands would count at
		// an arrival instant that means nothing to the game, and deadlines
		// would wait for the watermark to pass their game time on the real
		// clock. Without it, as for a host no watcher feeds, commands count
		// when they are handled and a deadline applies once advance has
		// moved the clock past it.
		TuneHost: func(c *host.Config) { c.ArrivalOrder = false }})
	g.st, g.h = rt.Store(), rt.Host()
	return g
}

func (g *embeddedGame) clock() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now
}

// advance moves game time on and applies what fell due, as the clock loop
// would if it were woken.
func (g *embeddedGame) advance(d time.Duration) {
	g.t.Helper()
	g.mu.Lock()
	g.now = g.now.Add(d)
	g.mu.Unlock()
	if err := g.h.TickDue(context.Background()); err != nil {
		g.t.Fatalf("tick: %v", err)
	}
}

// send writes a plain text message from user@example.org.
func (g *embeddedGame) send(user, to, body string) { g.reply(user, to, "", body) }

// reply writes a plain text message from user@example.org that answers
// the letter with references refs (In-Reply-To, then References, as a
// mail client sets them), if any.
func (g *embeddedGame) reply(user, to, refs, body string) {
	g.t.Helper()
	g.n++
	from := user + "@example.org"
	answers := ""
	if refs != "" {
		answers = "In-Reply-To: " + refs[strings.LastIndex(refs, " ")+1:] + "\r\nReferences: " + refs + "\r\n"
	}
	raw := []byte(fmt.Sprintf("Authentication-Results: mx.example.org; dmarc=pass header.from=example.org\r\n"+
		"From: %s <%s>\r\nTo: %s\r\nSubject: Re: [g1]\r\nMessage-ID: <c%d.%s@example.org>\r\nDate: %s\r\n%s"+
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		user, from, to, g.n, user, g.clock().Format(time.RFC1123Z), answers, strings.ReplaceAll(body, "\n", "\r\n")))
	c, err := smtp.Dial(g.srv.SMTPAddr())
	if err != nil {
		g.t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMail(from, []string{to}, bytes.NewReader(raw)); err != nil {
		g.t.Fatalf("send from %s to %s: %v", user, to, err)
	}
	c.Quit()
}

func (g *embeddedGame) mailbox(user string) []letter { return readMailbox(g.t, g.srv.IMAPAddr(), user) }

// await waits for a letter to user that cond accepts, and returns it.
func (g *embeddedGame) await(user, what string, cond func(letter) bool) letter {
	g.t.Helper()
	var found letter
	waitFor(g.t, user+": "+what, func() bool {
		for _, l := range g.mailbox(user) {
			if cond(l) {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// started opens game g1 from the referee's address ref, sets it up with
// the setup line, signs users up (each under their name capitalized) and
// starts it, waiting for Day 1. It returns the referee's channel.
func (g *embeddedGame) started(ref, setup string, users []string) (refChannel string) {
	g.t.Helper()
	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel = created.ReplyTo
	g.send(ref, refChannel, setup)
	g.answerTo(ref, "SETUP")
	for _, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
		g.answerTo(u, "JOIN")
	}
	g.send(ref, refChannel, "START")
	waitFor(g.t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	return refChannel
}

// answerTo waits for the host's answer quoting line.
func (g *embeddedGame) answerTo(user, line string) letter {
	g.t.Helper()
	return g.await(user, "the answer to "+line, func(l letter) bool {
		// A message to the thread whose lines were all done is answered
		// in the sender's own thread copy, on its first line.
		first, _, _ := strings.Cut(l.Text, "\n")
		return (l.Kind == "error" || l.Kind == "confirm") && strings.Contains(l.Text, line) ||
			l.Kind == "thread" && strings.HasPrefix(first, "Your message: ") && strings.Contains(first, line)
	})
}

// settled waits until every message in the host's mailbox has an outcome
// and the outbox is empty.
func (g *embeddedGame) settled() {
	g.t.Helper()
	ctx := context.Background()
	waitFor(g.t, "the host to work off its mail", func() bool {
		if drained, _ := outboxDrained(g.st); !drained {
			return false
		}
		ms, err := g.st.InboundByOutcome(ctx, store.OutcomePending, 1)
		return err == nil && len(ms) == 0
	})
}

func (g *embeddedGame) state() *engine.State {
	s, ok := g.h.Game("g1")
	if !ok {
		g.t.Fatal("no game g1")
	}
	return s
}

func (g *embeddedGame) addrs(slot int) (thread, private string) {
	p := g.state().Player(slot)
	return "host+g1-t-" + p.Token + "@example.org", "host+g1-p-" + p.Token + "@example.org"
}

// TestWrongPlaceWrongTime plays a game over the embedded mail servers in
// which every mistake of a new player is made once: a night action in the
// thread, a vote in the private channel, referee commands in the thread, a
// vote for the dead, talk in the message that ends the game and after it,
// mail to the wrong address, and footers read by the dead. It checks every
// mailbox: no misplaced line reaches anyone, every one is answered with
// where it belongs, and nothing is lost.
func TestWrongPlaceWrongTime(t *testing.T) {
	t.Parallel()
	g := startEmbedded(t)
	const ref = "referee"
	users := []string{"alice", "bob", "carol", "dave"}

	// 6. Mail at the wrong address, before anyone plays.
	g.send("alice", "host@example.org", "JOIN Alice")
	if a := g.answerTo("alice", "JOIN Alice"); !strings.Contains(a.Text, "sign-up address of a game") ||
		!strings.Contains(a.Text, "ask the game's referee") {
		t.Errorf("JOIN at the host's address:\n%s", a.Text)
	}
	g.send("alice", "host+nosuch@example.org", "JOIN Alice")
	if a := g.await("alice", "the answer about game nosuch", func(l letter) bool { return strings.Contains(l.Text, "nosuch") }); !strings.Contains(a.Text, "Ask the referee") || strings.Contains(a.Text, "game  ") {
		t.Errorf("JOIN at an unknown game's address:\n%s", a.Text)
	}

	g.send(ref, "host@example.org", "NEW GAME g1")
	created := g.await(ref, "the answer to NEW GAME", func(l letter) bool { return l.Game == "g1" && l.ReplyTo != "" })
	refChannel := created.ReplyTo
	g.send(ref, refChannel, "SETUP players=4 mafia=1 doctors=1 inspectors=0 vigilantes=0")
	g.answerTo(ref, "SETUP")
	for _, u := range users {
		g.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
		g.answerTo(u, "JOIN")
	}
	g.send(ref, refChannel, "START")
	g.answerTo(ref, "START")
	// The answer to NEW GAME also says START; the draw is in once Day 1 is.
	waitFor(t, "Day 1", func() bool { return g.state().Phase == engine.DayPhase })
	s := g.state()
	var mafioso, doctor, town []int
	for _, p := range s.Players {
		switch p.Role {
		case engine.Mafia:
			mafioso = append(mafioso, p.Slot)
		case engine.Doctor:
			doctor = append(doctor, p.Slot)
		default:
			town = append(town, p.Slot)
		}
	}
	if len(mafioso) != 1 || len(doctor) != 1 || len(town) != 2 {
		t.Fatalf("roles: %+v", s.Players)
	}
	user := func(slot int) string { return strings.ToLower(s.Player(slot).Name) }
	name := func(slot int) string { return s.Player(slot).Name }
	m, d, t1, t2 := mafioso[0], doctor[0], town[0], town[1]
	refToken := strings.TrimSuffix(strings.TrimPrefix(refChannel, "host+g1-p-"), "@example.org")
	refThread := "host+g1-t-" + refToken + "@example.org"

	// 6. A vote at the sign-up address names the player's own thread.
	t2Thread, t2Private := g.addrs(t2)
	g.send(user(t2), "host+g1@example.org", "VOTE "+name(m))
	if a := g.answerTo(user(t2), "VOTE "+name(m)); !strings.Contains(a.Text, t2Thread) || a.ReplyTo != t2Thread {
		t.Errorf("VOTE at the sign-up address: Reply-To %s:\n%s", a.ReplyTo, a.Text)
	}

	// 3. Referee commands in the thread are neither posted nor carried out.
	g.send(ref, refThread, "CLOSE\nSTATUS")
	if a := g.answerTo(ref, "CLOSE"); !strings.Contains(a.Text, refChannel) || !strings.Contains(a.Text, "STATUS") {
		t.Errorf("CLOSE in the thread:\n%s", a.Text)
	}
	if g.state().Phase != engine.DayPhase {
		t.Fatalf("CLOSE in the thread closed the day")
	}

	// 2. A vote in the private channel is answered, with the thread as
	// Reply-To; pressing Reply and sending it again casts it.
	g.send(user(t2), t2Private, "VOTE NULL")
	a := g.answerTo(user(t2), "VOTE NULL")
	if a.ReplyTo != t2Thread || !strings.Contains(a.Text, "town thread") {
		t.Errorf("VOTE in the private channel: Reply-To %s:\n%s", a.ReplyTo, a.Text)
	}
	g.send(user(t2), a.ReplyTo, "VOTE NULL")
	waitFor(t, "the vote sent again", func() bool { return g.state().Player(t2).Vote == engine.NullVote })

	// 2. The reminder to vote leads to the thread.
	g.advance(g.state().Deadline.Add(-5 * time.Hour).Sub(g.clock())) // within the 6 h before the close
	mThread, mPrivate := g.addrs(m)
	rem := g.await(user(m), "the reminder to vote", func(l letter) bool {
		return l.Kind == "private" && strings.Contains(l.Text, "Voting closes")
	})
	if rem.ReplyTo != mThread {
		t.Errorf("the reminder to vote has Reply-To %s, not the thread %s", rem.ReplyTo, mThread)
	}

	// 4. A vote for the dead says who died, how, and who can be voted for.
	g.send(ref, refChannel, "MODKILL "+name(t1))
	g.answerTo(ref, "MODKILL")
	g.send(user(m), mThread, "VOTE "+name(t1))
	a = g.answerTo(user(m), "VOTE "+name(t1))
	if !strings.Contains(a.Text, name(t1)+" is dead (removed by the referee)") || !strings.Contains(a.Text, name(t2)) {
		t.Errorf("a vote for the dead:\n%s", a.Text)
	}

	// 7. The dead player's footer offers no VOTE or LOCK.
	last := g.await(user(t1), "thread mail after the death", func(l letter) bool {
		return l.Kind == "thread" && strings.Contains(l.Text, "removed by the referee")
	})
	if foot := last.Text[strings.LastIndex(last.Text, "-- "):]; strings.Contains(foot, "VOTE") || strings.Contains(foot, "LOCK") {
		t.Errorf("the dead player's footer:\n%s", foot)
	}

	// 1. Night actions written in the thread: caught for every role alike.
	g.send(ref, refChannel, "CLOSE")
	waitFor(t, "the night", func() bool { return g.state().Phase == engine.NightPhase })
	dThread, dPrivate := g.addrs(d)
	g.send(user(d), dThread, "PROTECT "+name(t2)+"\n\nQuiet night, isn't it?")
	g.send(user(m), mThread, "KILL "+name(t2))
	g.send(user(t2), t2Thread, "KILL "+name(m))
	ad := g.answerTo(user(d), "PROTECT "+name(t2))
	am := g.answerTo(user(m), "KILL "+name(t2))
	at := g.answerTo(user(t2), "KILL "+name(m))
	for _, c := range []struct {
		l       letter
		private string
	}{{ad, dPrivate}, {am, mPrivate}, {at, t2Private}} {
		// The same answer for the Doctor, the Mafioso and a Townsperson.
		if !strings.Contains(c.l.Text, c.private) || !strings.Contains(c.l.Text, "is sent from your private channel and was not applied here") {
			t.Errorf("night action in the thread:\n%s", c.l.Text)
		}
	}
	g.await(user(t2), "the discussion around the misplaced PROTECT", func(l letter) bool {
		return l.Kind == "thread" && strings.Contains(l.Text, "Quiet night, isn't it?")
	})
	g.send(user(m), mPrivate, "KILL "+name(t2))
	g.send(user(d), dPrivate, "PROTECT "+name(t2))
	g.await(user(m), "the answer to KILL in the private channel", func(l letter) bool {
		return l.Kind == "confirm" && strings.Contains(l.Text, "✓ KILL "+name(t2))
	})
	waitFor(t, "both night actions", func() bool { return g.state().Night.Protection(d) == t2 && g.state().Night.Whack == t2 })
	g.advance(g.state().NightEndsAt().Sub(g.clock()))
	waitFor(t, "Day 2", func() bool { return g.state().Phase == engine.DayPhase && g.state().Day == 2 })

	// 5. The vote that ends the game carries the last word, which is
	// relayed before the end; after it, talk goes on for a week.
	g.send(user(d), dThread, "VOTE "+name(m)+"\nLOCK")
	g.answerTo(user(d), "LOCK")
	g.send(user(t2), t2Thread, "VOTE "+name(m)+"\nLOCK\n\nGG, well played.")
	waitFor(t, "the end", func() bool { return g.state().Phase == engine.EndedPhase })
	evs, err := g.st.Events(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	lastWord, end := -1, -1
	for i, e := range evs {
		switch {
		case e.Type == string(engine.EvThreadPost) && strings.Contains(string(e.Payload), "GG, well played."):
			lastWord = i
		case e.Type == string(engine.EvGameEnded):
			end = i
		}
	}
	if lastWord < 0 || end < 0 || lastWord > end {
		t.Errorf("the last word is event %d and the end %d", lastWord, end)
	}
	g.send(user(m), mThread, "GG. You got me.")
	for _, u := range append(users, ref) {
		// The last word may come in the very mail that tells the end,
		// ahead of it.
		g.await(u, "the last word", func(l letter) bool {
			return (l.Kind == "thread" || l.Kind == "end") && strings.Contains(l.Text, "GG, well played.")
		})
		g.await(u, "the post-game talk", func(l letter) bool { return l.Kind == "thread" && strings.Contains(l.Text, "GG. You got me.") })
	}
	g.advance(8 * 24 * time.Hour)
	g.send(user(m), mThread, "Anyone still here?")
	if a := g.await(user(m), "the note after the talk", func(l letter) bool { return l.Kind == "error" && strings.Contains(l.Text, "post-game talk has closed") }); a.Text == "" {
		t.Error("no note after the talk closed")
	}

	// Nothing lost, nothing leaked: every message has its verdict, every
	// answer went out, and no misplaced line is in anyone's mail but its
	// sender's answer.
	g.settled()
	misplaced := map[string]string{"CLOSE": ref, "PROTECT " + name(t2): user(d), "KILL " + name(t2): user(m), "KILL " + name(m): user(t2)}
	for _, u := range append(users, ref) {
		for _, l := range g.mailbox(u) {
			if l.Err != nil {
				t.Errorf("%s: unreadable mail: %v", u, l.Err)
			}
			for _, text := range strings.Split(strings.ReplaceAll(l.Text, "\r", ""), "\n") {
				if author, ok := misplaced[strings.TrimSpace(text)]; ok && l.Kind == "thread" {
					t.Errorf("%s got %q in thread mail (written by %s):\n%s", u, text, author, l.Text)
				}
			}
			if strings.Contains(l.Text, "Anyone still here?") && l.Kind == "thread" {
				t.Errorf("%s got a post sent after the talk closed", u)
			}
		}
	}
	rows := 0
	for _, o := range []store.Outcome{store.OutcomeApplied, store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError, store.OutcomePending} {
		in, err := g.st.InboundByOutcome(context.Background(), o, 1000)
		if err != nil {
			t.Fatal(err)
		}
		rows += len(in)
		if o == store.OutcomeError || o == store.OutcomePending {
			for _, r := range in {
				t.Errorf("inbox row %d: outcome %s (%s)", r.ID, r.Outcome, r.Reason)
			}
		}
	}
	if rows != g.n {
		t.Errorf("%d inbox rows for %d messages sent", rows, g.n)
	}
	if failed, err := g.st.OutMessages(context.Background(), store.OutFailed); err != nil || len(failed) > 0 {
		t.Errorf("failed deliveries: %d (%v)", len(failed), err)
	}
}
