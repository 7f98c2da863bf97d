//go:build integration

package host_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/mailstack"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// The helpers here run the host as `mafiamail serve` does (service.Start)
// against a real Postfix and Dovecot from internal/testkit/mailstack, with players
// who read their mail over IMAP and answer through Postfix, as people with a
// mail client would.

const (
	// e2eWait bounds every wait for mail or for the game to move on. It
	// only matters when something is broken: a healthy step takes well
	// under a second, but the machine may be loaded.
	e2eWait  = 90 * time.Second
	e2ePass  = "e2e-secret"
	e2eGame  = "g1"
	hostUser = "host"
)

// e2e is one test's mail servers, host runtime and participants.
type e2e struct {
	t     *testing.T
	stack *mailstack.Stack
	db    string
	clock host.Clock
	log   *slog.Logger
	rt    *e2eRuntime
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
	s := mailstack.Start(t, mailstack.Options{})
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

// e2eRuntime is a host started by service.Start, as serve starts it, and
// running in the background until stop.
type e2eRuntime struct {
	svc    *service.Service
	cancel context.CancelFunc
	done   chan struct{}
	err    error // what Run returned; read after done is closed
}

// startRuntime starts the host on the store at e.db through
// service.Start, with the configuration's defaults and the host's accounts
// on the stack (Postfix relays for loopback without credentials).
func (e *e2e) startRuntime() *e2eRuntime {
	t := e.t
	t.Helper()
	cfg := config.Defaults()
	cfg.Address, cfg.Referees, cfg.Database = e.hostAddr(), []string{e.ref.addr}, e.db
	cfg.IMAP.URL, cfg.IMAP.Username, cfg.IMAP.Password = "imap://"+e.stack.IMAPAddr(), hostUser, e2ePass
	cfg.SMTP.URL = "smtp://" + e.stack.SMTPAddr()
	svc, err := service.Start(context.Background(), &cfg, service.Options{Clock: e.clock, Log: e.log})
	if err != nil {
		t.Fatalf("start the host: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &e2eRuntime{svc: svc, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(rt.done)
		rt.err = svc.Run(ctx)
	}()
	t.Cleanup(func() { rt.stop(t) })
	return rt
}

// stop ends the runtime as a signal ends serve: every loop returns, and
// only then the store closes. It reports whatever failed meanwhile.
func (rt *e2eRuntime) stop(t *testing.T) {
	t.Helper()
	if rt.cancel == nil {
		return
	}
	rt.cancel()
	rt.cancel = nil
	select {
	case <-rt.done:
	case <-time.After(e2eWait):
		t.Fatalf("the host runtime did not stop within %v", e2eWait)
	}
	if rt.err != nil {
		t.Errorf("host runtime: %v", rt.err)
	}
	if err := rt.svc.Close(); err != nil {
		t.Errorf("close store: %v", err)
	}
}

// game is the live game as the host holds it.
func (e *e2e) game() *engine.State {
	e.t.Helper()
	s, ok := e.rt.svc.Host().Game(e2eGame)
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
		s, ok = e.rt.svc.Host().Game(e2eGame)
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
			if !l.seen {
				return false
			}
		}
		return true
	})
	waitFor(e.t, "the outbox to drain", func() bool {
		for _, status := range []store.OutStatus{store.OutPending, store.OutSending} {
			ms, err := e.rt.svc.Store().OutMessages(context.Background(), status)
			if err != nil {
				e.t.Fatalf("outbox: %v", err)
			}
			if len(ms) > 0 {
				return false
			}
		}
		return true
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
	created := e.ref.await("the answer to NEW GAME", func(l letter) bool { return l.game == e2eGame && l.replyTo != "" })
	e.ref.private = created.replyTo
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
			switch l.kind {
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
	m := roleLine.FindStringSubmatch(role.text)
	if m == nil {
		t.Fatalf("%s's role message names no role:\n%s", p.name, role.text)
	}
	p.role = engine.Role(m[1])
	p.private, p.thread = role.replyTo, thread.replyTo
	if p.role == engine.Mafia {
		am := mafiaAddress.FindStringSubmatch(role.text)
		if am == nil {
			t.Fatalf("%s's role message names no mafia list:\n%s", p.name, role.text)
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
	raw := []byte(fmt.Sprintf("From: %s <%s>\r\nTo: %s\r\nSubject: Re: [%s]\r\nMessage-ID: %s\r\nDate: %s\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		p.name, p.addr, to, e2eGame, id, time.Now().Format(time.RFC1123Z), strings.ReplaceAll(body, "\n", "\r\n")))
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

// letter is one message as read from a mailbox, parsed with go-message.
type letter struct {
	uid  imap.UID
	seen bool
	raw  []byte
	// err is why the message could not be parsed; the fields below are
	// then as far as parsing got.
	err       error
	header    gomail.Header
	messageID string
	kind      string
	game      string
	subject   string
	replyTo   string
	// text and html are the decoded bodies of the alternatives.
	text, html string
	parts      []string // the media types of the parts, in order
}

// readMailbox fetches every message of user's INBOX without changing flags.
func readMailbox(t *testing.T, imapAddr, user string) []letter {
	t.Helper()
	c, err := imapclient.DialInsecure(imapAddr, nil)
	if err != nil {
		t.Fatalf("dial Dovecot: %v", err)
	}
	defer c.Close()
	if err := c.Login(user, e2ePass).Wait(); err != nil {
		t.Fatalf("login %s: %v", user, err)
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		t.Fatalf("examine %s's INBOX: %v", user, err)
	}
	var out []letter
	if sel.NumMessages > 0 {
		section := &imap.FetchItemBodySection{Peek: true}
		msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true,
			BodySection: []*imap.FetchItemBodySection{section}}).Collect()
		if err != nil {
			t.Fatalf("fetch %s's INBOX: %v", user, err)
		}
		for _, m := range msgs {
			l := parseLetter(m.FindBodySection(section))
			l.uid = m.UID
			for _, f := range m.Flags {
				if f == imap.FlagSeen {
					l.seen = true
				}
			}
			out = append(out, l)
		}
	}
	if err := c.Logout().Wait(); err != nil {
		t.Logf("logout %s: %v", user, err)
	}
	return out
}

// parseLetter reads a message strictly: any error of go-message is kept.
func parseLetter(raw []byte) letter {
	l := letter{raw: raw}
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		l.err = fmt.Errorf("read header: %w", err)
		return l
	}
	defer r.Close()
	l.header = r.Header
	l.kind = r.Header.Get("X-Mafiamail-Kind")
	l.game = r.Header.Get("X-Mafiamail-Game")
	if l.messageID, err = r.Header.MessageID(); err != nil {
		l.err = fmt.Errorf("Message-Id: %w", err)
	}
	if l.subject, err = r.Header.Subject(); err != nil && l.err == nil {
		l.err = fmt.Errorf("Subject: %w", err)
	}
	if rt, err := r.Header.AddressList("Reply-To"); err != nil {
		if l.err == nil {
			l.err = fmt.Errorf("Reply-To: %w", err)
		}
	} else if len(rt) == 1 {
		l.replyTo = strings.ToLower(rt[0].Address)
	}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if l.err == nil {
				l.err = fmt.Errorf("next part: %w", err)
			}
			break
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			l.parts = append(l.parts, "attachment")
			continue
		}
		ct, params, err := h.ContentType()
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("part Content-Type: %w", err)
		}
		body, err := io.ReadAll(p.Body)
		if err != nil && l.err == nil {
			l.err = fmt.Errorf("read %s part: %w", ct, err)
		}
		if !strings.EqualFold(params["charset"], "utf-8") && l.err == nil {
			l.err = fmt.Errorf("%s part in charset %q", ct, params["charset"])
		}
		l.parts = append(l.parts, ct)
		switch ct {
		case "text/plain":
			l.text = string(body)
		case "text/html":
			l.html = string(body)
		}
	}
	return l
}

// mediaType is the media type of the message's top-level Content-Type.
func (l letter) mediaType() string {
	mt, _, err := l.header.ContentType()
	if err != nil {
		return ""
	}
	return mt
}

// references returns the References field's message IDs.
func (l letter) references() []string {
	ids, err := l.header.MsgIDList("References")
	if err != nil {
		return nil
	}
	return ids
}

// blockEnd matches the HTML tags after which a reader sees a new line.
var (
	blockEnd = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|li|tr|td|th|h[1-6]|blockquote|pre|table|ul|ol)>`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// htmlLines renders an HTML body to the lines a reader would see.
func htmlLines(s string) string {
	s = blockEnd.ReplaceAllString(s, "$0\n")
	return html.UnescapeString(anyTag.ReplaceAllString(s, ""))
}

// waitFor polls cond until it holds, failing the test after e2eWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(e2eWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", e2eWait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
