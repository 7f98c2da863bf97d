//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/hostrun"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// embeddedHost is the host as `mafiamail serve --embedded` runs it, on the
// built-in IMAP and SMTP servers of mail/mailserver, every address
// @example.org a mailbox.
type embeddedHost struct {
	t   *testing.T
	srv *mailserver.Server
	rt  *hostrun.Runtime
	n   int // messages sent, for unique Message-IDs
}

func startEmbeddedHost(t *testing.T) *embeddedHost {
	t.Helper()
	log := testlog.New(t, slog.LevelInfo)
	srv := mailtest.StartServer(t, mailserver.Config{Domain: "example.org", AutoCreateUsers: true, AuthResults: true,
		AutoCreatePassword: embeddedPass, Users: map[string]string{"host": embeddedPass}, Logger: log})
	cfg := service.Embedded(srv, embeddedPass, filepath.Join(t.TempDir(), "host.db"))
	rt := hostrun.Start(t, &cfg, service.Config{Log: log})
	return &embeddedHost{t: t, srv: srv, rt: rt}
}

// embeddedPass is every embedded mailbox's password.
const embeddedPass = "mafia"

// send writes a plain text message from user@example.org through the
// embedded SMTP server, as a mail client would.
func (e *embeddedHost) send(user, to, body string) {
	e.t.Helper()
	e.n++
	from := user + "@example.org"
	raw := fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: Re: [g1]\r\nMessage-ID: <%s.%d@example.org>\r\nDate: %s\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		from, to, user, e.n, time.Now().Format(time.RFC1123Z), body)
	c, err := smtp.Dial(e.srv.SMTPAddr())
	if err != nil {
		e.t.Fatalf("dial SMTP: %v", err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", user, embeddedPass)); err != nil {
		e.t.Fatalf("log in as %s: %v", user, err)
	}
	if err := c.SendMail(from, []string{to}, bytes.NewReader([]byte(raw))); err != nil {
		e.t.Fatalf("send from %s: %v", from, err)
	}
}

// game waits until game g1 satisfies cond and returns it.
func (e *embeddedHost) game(what string, cond func(*engine.State) bool) *engine.State {
	e.t.Helper()
	var s *engine.State
	waitFor(e.t, what, func() bool {
		var ok bool
		s, ok = e.rt.Host().Game("g1")
		return ok && cond(s)
	})
	return s
}

// address is the participant's channel address of kind (t, p) in g1.
func (e *embeddedHost) address(user, kind string) string {
	e.t.Helper()
	ps, err := e.rt.Store().Participants(context.Background(), "g1")
	if err != nil {
		e.t.Fatal(err)
	}
	for _, p := range ps {
		if strings.EqualFold(p.Address, user+"@example.org") && p.Status == store.StatusActive {
			return "host+g1-" + kind + "-" + p.Token + "@example.org"
		}
	}
	e.t.Fatalf("%s is not in g1", user)
	return ""
}

// drained waits until the host has taken in all its mail and sent all its
// answers; the embedded SMTP server delivers before it answers, so the
// answers are then in their mailboxes.
func (e *embeddedHost) drained() {
	e.t.Helper()
	waitFor(e.t, "the host to take in its mail and send its answers", func() bool {
		for _, l := range readMailboxAs(e.t, e.srv.IMAPAddr(), "host", embeddedPass) {
			if !l.Seen {
				return false
			}
		}
		drained, err := outboxDrained(e.rt.Store())
		if err != nil {
			e.t.Fatalf("outbox: %v", err)
		}
		return drained
	})
}

// TestD14_DayShotClearsAVoteByMail plays, through the embedded IMAP and SMTP
// servers, a day on which the Vigilante shoots the player someone voted
// for: the voter gets one private mail saying so, the thread's tally shows
// the vote as cleared and cast, and the close charges the voter no missed
// vote.
func TestD14_DayShotClearsAVoteByMail(t *testing.T) {
	t.Parallel()
	e := startEmbeddedHost(t)
	users := []string{"alice", "bob", "carol", "dave", "erin"}
	e.send("referee", "host@example.org", "NEW GAME g1")
	e.game("the game", func(*engine.State) bool { return true })
	ref := e.address("referee", "p")
	e.send("referee", ref, "SETUP players=5 mafia=1 vigilantes=1")
	e.game("the setup", func(s *engine.State) bool { return s.Setup.Vigilantes == 1 && s.Setup.Players == 5 })
	for _, u := range users {
		e.send(u, "host+g1@example.org", "JOIN "+strings.ToUpper(u[:1])+u[1:])
	}
	e.game("every sign-up", func(s *engine.State) bool { return len(s.Players) == 5 })
	e.send("referee", ref, "START")
	s := e.game("the start", func(s *engine.State) bool { return s.Phase == engine.DayPhase })

	user := func(p engine.Player) string { return strings.TrimSuffix(p.Address, "@example.org") }
	var vig, voter, target engine.Player
	for _, p := range s.Players {
		switch {
		case p.Role == engine.Vigilante:
			vig = p
		case p.Role == engine.Townsperson && target.Slot == 0:
			target = p // not the Mafioso, so that the shot does not end the game
		case voter.Slot == 0:
			voter = p
		}
	}
	e.send(user(voter), e.address(user(voter), "t"), "VOTE "+target.Name)
	e.game("the vote", func(s *engine.State) bool { return s.Player(voter.Slot).Vote == target.Slot })
	e.drained()
	before := map[string]bool{}
	for _, l := range readMailboxAs(t, e.srv.IMAPAddr(), user(voter), embeddedPass) {
		before[l.MessageID] = true
	}

	e.send(user(vig), e.address(user(vig), "p"), "SHOOT "+target.Name)
	e.game("the day shot", func(s *engine.State) bool { return !s.Player(target.Slot).Alive })
	e.drained()
	var private, thread []letter
	for _, l := range readMailboxAs(t, e.srv.IMAPAddr(), user(voter), embeddedPass) {
		if before[l.MessageID] {
			continue
		}
		switch l.Kind {
		case "private":
			private = append(private, l)
		case "thread":
			thread = append(thread, l)
		}
	}
	notice := "Your vote for " + target.Name + " was cleared because " + target.Name + " was shot by the Vigilante."
	if len(private) != 1 || !strings.Contains(private[0].Text, notice) || !strings.Contains(htmlLines(private[0].HTML), notice) {
		t.Fatalf("the voter must get exactly one private mail with the notice, got %d:\n%v", len(private), private)
	}
	// A private channel keeps one subject so that its mails thread; the
	// news is the first line.
	if first, _, _ := strings.Cut(strings.TrimSpace(private[0].Text), "\n"); !strings.Contains(first, "you may vote again") {
		t.Errorf("the notice's first line says what to do: %q", first)
	}
	shown := voter.Name + ": voted for " + target.Name + ", cleared when " + target.Name + " left the game (still counts as cast)"
	if len(thread) != 1 || !strings.Contains(strings.Join(strings.Fields(thread[0].Text), " "), shown) || !strings.Contains(htmlLines(thread[0].HTML), "voted for "+target.Name+", cleared") {
		t.Fatalf("the thread's mail of the shot must show the cleared vote in its tally:\n%v", thread)
	}
	if strings.Contains(thread[0].Text, "Not voted") && strings.Contains(lineWith(thread[0].Text, "Not voted"), voter.Name) {
		t.Fatalf("the tally lists %s as not voted:\n%s", voter.Name, thread[0].Text)
	}

	// The referee closes the round: the voter is not charged.
	e.send("referee", ref, "CLOSE")
	s = e.game("the close", func(s *engine.State) bool { return s.Phase != engine.DayPhase || s.Round != engine.Opening })
	if s.Player(voter.Slot).Missed != 0 {
		t.Fatalf("%s was charged a missed vote for a vote the shot cleared", voter.Name)
	}
	for _, p := range s.Players {
		if p.Alive && p.Slot != voter.Slot && p.Missed != 1 {
			t.Errorf("%s did not vote and should have missed one: %d", p.Name, p.Missed)
		}
	}
}

// lineWith is the first line of text that contains sub.
func lineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
