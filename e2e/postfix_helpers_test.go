//go:build integration

package e2e

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/hostrun"
	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/service"
)

// The helpers here run the host as `mafiamail serve` does (service.Start)
// against a real Postfix and Dovecot from internal/testkit/mailstack, with players
// who read their mail over IMAP and answer through Postfix, as people with a
// mail client would.

const (
	e2eGame  = "g1"
	hostUser = "host"
	// e2eAuthServ is the receiving server the host trusts.
	e2eAuthServ = "mx.players.test"
)

// e2e is one test's mail servers, host runtime and participants.
type e2e struct {
	t     *testing.T
	stack *mailstack.Stack
	db    string
	clock host.Clock
	log   *slog.Logger
	rt    *hostrun.Runtime
	ref   *person
	// players in seat order once they have joined.
	players []*person
}

// person is a participant with a mailbox on Dovecot and a mail client.
type person struct {
	e          *e2e
	name, user string
	addr       string
	// The addresses the host's mail told them to answer to.
	private, thread, mafia string
	// role is what their role message says.
	role engine.Role
	sent int
}

// newE2E starts Postfix and Dovecot with a mailbox for the host, the
// referee and each named player, and the host runtime with clock. Where
// the servers are missing, mailstack.Start skips the test (fails it in CI).
func newE2E(t *testing.T, clock host.Clock, names ...string) *e2e {
	t.Helper()
	s := mailstack.Start(t, mailstack.Config{})
	e := &e2e{t: t, stack: s, db: filepath.Join(t.TempDir(), "host.db"), clock: clock, log: testlog.New(t, slog.LevelInfo)}
	if err := s.AddUser(hostUser, e2ePass); err != nil {
		e.t.Fatal(err)
	}
	e.ref = e.newPerson("Referee", "referee")
	for _, n := range names {
		e.players = append(e.players, e.newPerson(n, strings.ToLower(n)))
	}
	e.rt = e.startRuntime()
	return e
}

func (e *e2e) newPerson(name, user string) *person {
	if err := e.stack.AddUser(user, e2ePass); err != nil {
		e.t.Fatal(err)
	}
	return &person{e: e, name: name, user: user, addr: e.stack.Address(user)}
}

func (e *e2e) hostAddr() string { return e.stack.Address(hostUser) }

// startRuntime starts the host on the store at e.db as serve starts it,
// with the configuration's defaults and the host's accounts on the stack
// (Postfix relays for loopback without credentials).
func (e *e2e) startRuntime() *hostrun.Runtime {
	e.t.Helper()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees, cfg.Database = e.hostAddr(), []string{e.ref.addr}, e.db
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+e.stack.IMAPAddr(), hostUser, e2ePass
	cfg.SMTP.URL = "smtp://" + e.stack.SMTPAddr()
	cfg.Auth.AuthservID = e2eAuthServ
	return hostrun.Start(e.t, &cfg, service.Config{Clock: e.clock, Log: e.log})
}

// game is the live game as the host holds it.
func (e *e2e) game() *engine.State {
	e.t.Helper()
	s, ok := e.rt.Host().Game(e2eGame)
	if !ok {
		e.t.Fatalf("the host has no game %s", e2eGame)
	}
	return s
}

// waitGame waits until the live game satisfies cond.
func (e *e2e) waitGame(what string, cond func(s *engine.State) bool) *engine.State {
	e.t.Helper()
	var s *engine.State
	waitFor(e.t, what, func() bool {
		var ok bool
		s, ok = e.rt.Host().Game(e2eGame)
		return ok && cond(s)
	})
	return s
}

// settle waits until everything in flight has arrived: the players' mail
// in the host's INBOX, taken in (\Seen); the host's answers handed to
// Postfix; and those in the players' mailboxes. Nothing the host sends
// comes back to it, so one pass suffices.
func (e *e2e) settle() {
	e.t.Helper()
	if err := e.stack.WaitDelivered(); err != nil {
		e.t.Fatal(err)
	}
	waitFor(e.t, "the host to take in all its mail", func() bool {
		for _, l := range readMailbox(e.t, e.stack.IMAPAddr(), hostUser) {
			if !l.Seen {
				return false
			}
		}
		return true
	})
	waitFor(e.t, "the outbox to drain", func() bool {
		drained, err := outboxDrained(e.rt.Store())
		if err != nil {
			e.t.Fatalf("outbox: %v", err)
		}
		return drained
	})
	if err := e.stack.WaitDelivered(); err != nil {
		e.t.Fatal(err)
	}
}

// player returns the player called name.
func (e *e2e) player(name string) *person {
	e.t.Helper()
	for _, p := range e.players {
		if p.name == name {
			return p
		}
	}
	e.t.Fatalf("no player %s", name)
	return nil
}

// setUpGame plays the opening as people would: the referee creates the
// game and sets it up from the answers' Reply-To, every player joins at the
// sign-up address, the referee starts, and each player learns their role
// and their addresses from the mail they get.
func (e *e2e) setUpGame(setup string) {
	t := e.t
	t.Helper()
	e.ref.send(e.hostAddr(), "NEW GAME "+e2eGame)
	created := e.ref.await("the answer to NEW GAME", func(l letter) bool { return l.Game == e2eGame && l.ReplyTo != "" })
	e.ref.private = created.ReplyTo
	e.ref.send(e.ref.private, "SETUP "+setup)
	e.waitGame("the setup", func(s *engine.State) bool { return s.Setup.Players == len(e.players) })
	signup := strings.Replace(e.hostAddr(), "@", "+"+e2eGame+"@", 1)
	for _, p := range e.players {
		p.send(signup, "JOIN "+p.name)
	}
	e.waitGame("every sign-up", func(s *engine.State) bool { return len(s.Players) == len(e.players) })
	e.ref.send(e.ref.private, "START")
	s := e.waitGame("the start", func(s *engine.State) bool { return s.Phase == engine.DayPhase })
	byAddr := map[string]*person{}
	for _, p := range e.players {
		byAddr[p.addr] = p
	}
	seated := make([]*person, 0, len(e.players))
	for _, sp := range s.Players {
		p := byAddr[sp.Address]
		if p == nil {
			t.Fatalf("seat %d holds %s, who did not join", sp.Slot, sp.Address)
		}
		seated = append(seated, p)
	}
	e.players = seated
	for _, p := range e.players {
		p.learn()
	}
}

var (
	roleLine     = regexp.MustCompile(`your role is (\w+)\.`)
	mafiaAddress = regexp.MustCompile(`Mafia list: (\S+@\S+)`)
)

// learn reads the role message and the first thread mail for what a
// person needs to play: their role, their private address (the role
// message's Reply-To), the thread's (a thread message's Reply-To), and for
// a Mafioso the mafia list's, which the role message names.
func (p *person) learn() {
	t := p.e.t
	t.Helper()
	var role, thread letter
	p.awaitAll("the role message and the thread", func(ls []letter) bool {
		var gotRole, gotThread bool
		for _, l := range ls {
			switch l.Kind {
			case "role":
				role, gotRole = l, true
			case "thread":
				if !gotThread {
					thread, gotThread = l, true
				}
			}
		}
		return gotRole && gotThread
	})
	m := roleLine.FindStringSubmatch(role.Text)
	if m == nil {
		t.Fatalf("%s's role message names no role:\n%s", p.name, role.Text)
	}
	p.role = engine.Role(m[1])
	p.private, p.thread = role.ReplyTo, thread.ReplyTo
	if p.role == engine.Mafia {
		am := mafiaAddress.FindStringSubmatch(role.Text)
		if am == nil {
			t.Fatalf("%s's role message names no mafia list:\n%s", p.name, role.Text)
		}
		p.mafia = am[1]
	}
}

// sentMail is a message a person sent: its Message-ID and exact bytes.
type sentMail struct {
	id  string
	raw []byte
}

// send writes a plain text message to the host through Postfix.
func (p *person) send(to, body string) sentMail {
	p.e.t.Helper()
	p.sent++
	id := fmt.Sprintf("<%s.%d.%d@players.example.test>", p.user, p.sent, time.Now().UnixNano())
	// The players' provider vouches for them, as a receiving server the
	// host trusts (e2eAuthServ) records; Postfix passes the field on.
	raw := []byte(fmt.Sprintf("Authentication-Results: "+e2eAuthServ+"; dmarc=pass header.from=%s\r\n"+
		"From: %s <%s>\r\nTo: %s\r\nSubject: Re: [%s]\r\nMessage-ID: %s\r\nDate: %s\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		p.e.stack.Domain(), p.name, p.addr, to, e2eGame, id, time.Now().Format(time.RFC1123Z), strings.ReplaceAll(body, "\n", "\r\n")))
	p.e.submit(p.addr, to, raw)
	return sentMail{id: id, raw: raw}
}

// submit hands a message to Postfix, as a mail client would.
func (e *e2e) submit(from, to string, raw []byte) {
	e.t.Helper()
	c, err := smtp.Dial(e.stack.SMTPAddr())
	if err != nil {
		e.t.Fatalf("dial Postfix: %v", err)
	}
	defer c.Close()
	if err := c.SendMail(from, []string{to}, bytes.NewReader(raw)); err != nil {
		e.t.Fatalf("send from %s to %s through Postfix: %v", from, to, err)
	}
	if err := c.Quit(); err != nil {
		e.t.Logf("QUIT: %v", err)
	}
}

// mailbox reads the person's whole INBOX from Dovecot.
func (p *person) mailbox() []letter {
	p.e.t.Helper()
	return readMailbox(p.e.t, p.e.stack.IMAPAddr(), p.user)
}

// await waits for a letter that satisfies cond and returns it.
func (p *person) await(what string, cond func(letter) bool) letter {
	p.e.t.Helper()
	var found letter
	p.awaitAll(what, func(ls []letter) bool {
		for _, l := range ls {
			if cond(l) {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// awaitAll waits until the whole mailbox satisfies cond.
func (p *person) awaitAll(what string, cond func([]letter) bool) {
	p.e.t.Helper()
	waitFor(p.e.t, p.name+": "+what, func() bool { return cond(p.mailbox()) })
}
