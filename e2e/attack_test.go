//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/store"
)

// attackAuthserv is the authserv-id of the host's receiving MTA: mail the
// test sends as a genuine sender carries a passing Authentication-Results
// field of this id, as that MTA would have added.
const attackAuthserv = "mx.example.org"

// What the host must make of a message the test sent it.
const (
	attackApplied = "applied" // its commands take effect
	attackRefused = "refused" // a forgery or a message over a limit: nothing applied
	attackIgnored = "ignored" // an auto-reply: recorded, never answered
	attackFlood   = "flood"   // applied while the sender's allowance lasts, refused after
	attackOdd     = "odd"     // malformed: applied, or refused with a private error
)

// attackMsg is one message sent to the host and what it must make of it.
type attackMsg struct {
	id, from, to, what string
	expect             string
	// notify is the registered address a refusal may go to (once); vote
	// tells that the message holds a vote that must make a voted event.
	notify string
	vote   bool
	// mustTell: exactly one private error must go to notify (a genuine
	// sender over a limit); otherwise at most one may.
	mustTell bool
	// strict: the message must not even be recorded as applied; a
	// genuine sender at a wrong address may be answered with an error
	// line, which is recorded as applied with no effect.
	strict bool
	// forgers are addresses that must get nothing in answer.
	forgers []string
	// at is when the message was sent.
	at time.Time
}

// attackRun drives the games and the attacks against one `serve`.
type attackRun struct {
	t    *testing.T
	h    *killHarness
	srv  *mailserver.Server
	view *killView
	rng  *rand.Rand

	mu   sync.Mutex
	sent []*attackMsg
	seq  int

	// The responders at players' addresses, answering the host's mail.
	resp     *responders
	faulting atomic.Bool
	faults   atomic.Int64
	byFault  [mailserver.FaultDropAfterDelivery + 1]atomic.Int64
}

func (a *attackRun) nextID(tag string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seq++
	return fmt.Sprintf("a%d.%s.%d@players.example.org", a.seq, tag, time.Now().UnixNano())
}

// attackMail builds a message. auth is the Authentication-Results field to
// put on top ("" for none); extra are further header lines.
func attackMail(id, from, to, subject, auth string, extra []string, body string) []byte {
	var b bytes.Buffer
	if auth != "" {
		fmt.Fprintf(&b, "Authentication-Results: %s\r\n", auth)
	}
	fmt.Fprintf(&b, "From: <%s>\r\nTo: <%s>\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: %s\r\n", from, to, subject, id,
		time.Now().Format(time.RFC1123Z))
	for _, l := range extra {
		b.WriteString(l + "\r\n")
	}
	if !slices.ContainsFunc(extra, func(l string) bool { return strings.HasPrefix(strings.ToLower(l), "content-type:") }) {
		b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n")
	}
	b.WriteString("\r\n" + strings.ReplaceAll(body, "\n", "\r\n") + "\r\n")
	return b.Bytes()
}

// attackPass is a passing Authentication-Results field for the From domain
// of addr, from the host's own MTA.
func attackPass(addr string) string { return attackPassFrom(attackAuthserv, addr) }

// attackPassFrom is the passing Authentication-Results field that the MTA
// of authserv-id authserv adds to mail from addr.
func attackPassFrom(authserv, addr string) string {
	return fmt.Sprintf("%s; dmarc=pass header.from=%s", authserv, addr[strings.LastIndex(addr, "@")+1:])
}

// record notes a message for the host before it is sent, so that no
// answer can be checked before its cause is known.
func (a *attackRun) record(m *attackMsg) *attackMsg {
	a.mu.Lock()
	a.sent = append(a.sent, m)
	a.mu.Unlock()
	return m
}

// deliver sends raw over SMTP as from to rcpts.
func (a *attackRun) deliver(from string, rcpts []string, raw []byte) error {
	return smtpSend(a.srv.SMTPAddr(), from, rcpts, raw)
}

// smtpSend hands raw to the SMTP server at addr as from to rcpts, on a
// connection of its own.
func smtpSend(addr, from string, rcpts []string, raw []byte) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SendMail(from, rcpts, bytes.NewReader(raw)); err != nil {
		return fmt.Errorf("send from %s to %v: %w", from, rcpts, err)
	}
	return c.Quit()
}

// post sends a message to the host, recorded with its expectation.
func (a *attackRun) post(m *attackMsg, auth string, extra []string, body string) {
	a.t.Helper()
	if m.id == "" {
		m.id = a.nextID("m")
	}
	m.at = time.Now()
	a.record(m)
	if err := a.deliver(m.from, []string{m.to}, attackMail(m.id, m.from, m.to, "Re: the game", auth, extra, body)); err != nil {
		a.t.Fatal(err)
	}
}

// state polls a game until cond holds.
func (a *attackRun) state(game, what string, cond func(*engine.State) bool) (*engine.State, string) {
	a.t.Helper()
	end := time.Now().Add(2 * time.Minute)
	for time.Now().Before(end) {
		a.h.alive()
		s, token, err := a.view.state(game)
		if err != nil {
			a.t.Fatal(err)
		}
		if s != nil && cond(s) {
			return s, token
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.t.Fatalf("game %s: %s did not happen in two minutes\n%s", game, what, a.h.logTail())
	return nil, ""
}

func attackPlayer(name, game string) string {
	return fmt.Sprintf("%s.%s@example.org", strings.ToLower(name), game)
}

// open creates a game, signs the eleven players up and starts it.
func (a *attackRun) open(game string) (*engine.State, string) {
	ref := "referee@example.org"
	a.post(&attackMsg{from: ref, to: "host@example.org", what: "new game", expect: attackApplied}, attackPass(ref), nil, "NEW GAME "+game)
	_, token := a.state(game, "creation", func(*engine.State) bool { return true })
	for _, name := range killNames {
		addr := attackPlayer(name, game)
		a.post(&attackMsg{from: addr, to: "host+" + game + "@example.org", what: "join", expect: attackApplied}, attackPass(addr), nil, "JOIN "+name)
	}
	a.state(game, "sign-up", func(s *engine.State) bool { return len(s.Players) == len(killNames) })
	a.post(&attackMsg{from: ref, to: killAddress(game, "p", token), what: "start", expect: attackApplied}, attackPass(ref), nil, "START")
	s, _ := a.state(game, "the start", func(s *engine.State) bool { return s.Phase == engine.DayPhase })
	return s, token
}

// voteRound has every living player but skip vote for the player offset
// seats on, so that no one gathers a majority and the day goes on.
func (a *attackRun) voteRound(game string, offset int, skip ...string) {
	s, _ := a.state(game, "a day", func(s *engine.State) bool { return s.Phase == engine.DayPhase })
	n := len(s.Players)
	votes := map[int]int{} // voter's slot -> target's
	for i, p := range s.Players {
		target := s.Players[(i+offset)%n]
		if !p.Alive || !target.Alive || target.Slot == p.Slot || slices.Contains(skip, p.Name) || p.Vote == target.Slot {
			continue
		}
		a.post(&attackMsg{from: p.Address, to: killAddress(game, "t", p.Token), what: "vote", expect: attackApplied, vote: true},
			attackPass(p.Address), nil, "VOTE "+target.Name)
		votes[p.Slot] = target.Slot
	}
	// During a backlog the senders take turns, so a later message of
	// another sender (the referee's END, say) may overtake these: what
	// the test sends next waits until they count.
	a.state(game, "the votes", func(s *engine.State) bool {
		for voter, target := range votes {
			if s.Player(voter).Vote != target {
				return false
			}
		}
		return true
	})
}

// onMessage is the mail server's view of every SMTP transaction: the
// responders see each delivered copy.
func (a *attackRun) onMessage(m mailserver.Delivery) {
	if !m.Delivered {
		return
	}
	hdr, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		return
	}
	in := incoming{envFrom: strings.ToLower(m.From), id: bareID(hdr.Header.Get("Message-Id")), subject: hdr.Header.Get("Subject")}
	if l, err := mail.ParseAddressList(hdr.Header.Get("Reply-To")); err == nil && len(l) > 0 {
		in.replyTo = strings.ToLower(l[0].Address)
	}
	for _, r := range m.To {
		in.rcpt = strings.ToLower(r)
		a.resp.offer(in)
	}
}

// fault is the mail server's fault function: while faulting, the host's
// outgoing transactions meet 421, 451 and dropped connections at random.
func (a *attackRun) fault(m mailserver.Delivery) mailserver.Fault {
	if !a.faulting.Load() || m.Auth != "host" && !strings.EqualFold(m.From, "host@example.org") {
		return mailserver.FaultNone
	}
	a.mu.Lock()
	r := a.rng.IntN(100)
	a.mu.Unlock()
	var f mailserver.Fault
	switch {
	case r < 20:
		f = mailserver.FaultTempFail
	case r < 35:
		f = mailserver.FaultShutdown
	case r < 45:
		f = mailserver.FaultDropBeforeDelivery
	case r < 55:
		f = mailserver.FaultDropAfterDelivery
	default:
		return mailserver.FaultNone
	}
	a.faults.Add(1)
	a.byFault[f].Add(1)
	return f
}

// waitDecided waits until every message sent was decided, every game is
// over and the outbox is empty.
func (a *attackRun) waitDecided(timeout time.Duration) {
	a.t.Helper()
	end := time.Now().Add(timeout)
	var why string
	for time.Now().Before(end) {
		a.h.alive()
		a.mu.Lock()
		n := len(a.sent)
		a.mu.Unlock()
		if why = a.view.undrained(n); why == "" {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	a.t.Fatalf("the host did not finish its work in %v: %s\n%s", timeout, why, a.h.logTail())
}

// TestAttack plays games through `mafiamail serve` while forgeries, mail
// loops, floods, odd mail and SMTP faults hit it, then checks that no
// forgery was applied, no auto-reply answered, every genuine command
// applied once, every refusal told once and privately, and every outgoing
// message sent. MAFIAMAIL_LONG=1 makes the flood five times larger.
func TestAttack(t *testing.T) {
	floodSize := 2000
	if os.Getenv("MAFIAMAIL_LONG") == "1" {
		floodSize = 10000
	}
	bin := mafiamail.Path(t)
	a := &attackRun{t: t, rng: rand.New(rand.NewPCG(testSeed(t), 0xa77))}
	a.resp = newResponders(rand.New(rand.NewPCG(a.rng.Uint64(), a.rng.Uint64())))
	a.resp.nextID, a.resp.pass, a.resp.send, a.resp.errorf = a.nextID, attackPass, a.deliver, t.Errorf
	a.resp.record = func(m *attackMsg) { a.record(m) }
	srv, err := mailserver.Start(mailserver.Config{
		Domain: "example.org", AutoCreateUsers: true, AutoCreatePassword: killPassword,
		Users:           map[string]string{"host": killPassword, "referee": killPassword},
		MaxMessageBytes: 40 << 20,
		Fault:           a.fault,
		OnMessage:       a.onMessage,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	a.srv = srv
	// Runs before the server closes, so that no responder outlives the
	// test, even a failed one.
	defer a.resp.stop()

	dir := t.TempDir()
	h := &killHarness{t: t, bin: bin, srv: srv, db: filepath.Join(dir, "attack.db"),
		cfg: filepath.Join(dir, "mafiamail.toml"), logPath: filepath.Join(dir, "serve.log")}
	a.h = h
	// Real time: the attacks, not the clock, are under test here, and the
	// games' deadlines lie a day and more ahead.
	config := fmt.Sprintf(`address = "host@example.org"
referees = ["referee@example.org"]
database = %q
speed = 1
[log]
level = "info"
[imap]
url = "imap://%s"
username = "host"
password = %q
[smtp]
url = "smtp://%s"
username = "host"
password = %q
[auth]
authserv_id = %q
`, h.db, srv.IMAPAddr(), killPassword, srv.SMTPAddr(), killPassword, attackAuthserv)
	if err := os.WriteFile(h.cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)
	h.start()
	h.waitLog("games loaded", time.Minute)
	view, err := openView(h.db)
	if err != nil {
		t.Fatal(err)
	}
	h.view, a.view = view, view

	// The responders of the second game answer from its first message on.
	var atk2 []string
	for _, name := range killNames {
		atk2 = append(atk2, attackPlayer(name, "atk2"))
	}
	a.resp.start(attackPlayer("Bob", "atk2"), attackPlayer("Dave", "atk2"), attackPlayer("Erin", "atk2"), atk2)

	// A first game, played a little and ended by the referee.
	old, oldRef := a.open("atk1")
	a.voteRound("atk1", 1)
	a.post(&attackMsg{from: "referee@example.org", to: killAddress("atk1", "p", oldRef), what: "end", expect: attackApplied},
		attackPass("referee@example.org"), nil, "END")
	a.state("atk1", "the end", func(s *engine.State) bool { return s.Phase == engine.EndedPhase })

	s, ref := a.open("atk2")
	a.voteRound("atk2", 1)
	player := func(name string) engine.Player {
		for _, p := range s.Players {
			if p.Name == name {
				return p
			}
		}
		t.Fatalf("no player %s", name)
		return engine.Player{}
	}
	alice, carol := player("Alice"), player("Carol")
	mallory := "mallory@evil.example.org"

	// Forgeries.
	a.post(&attackMsg{from: mallory, to: killAddress("atk2", "t", alice.Token), what: "stolen token", expect: attackRefused, strict: true,
		notify: alice.Address, forgers: []string{mallory}}, attackPass(mallory), nil, "VOTE Grace")
	a.post(&attackMsg{from: alice.Address, to: "host+atk2@example.org", what: "no token", expect: attackRefused,
		notify: alice.Address}, attackPass(alice.Address), nil, "VOTE Grace")
	a.post(&attackMsg{from: alice.Address, to: killAddress("atk2", "t", alice.Token), what: "foreign authserv-id", expect: attackRefused, strict: true,
		notify: alice.Address}, "mx.evil.example; dmarc=pass header.from=example.org", nil, "VOTE Grace")
	// The host's own MTA says fail on top; a pass of the same id lower
	// down was written by the sender and must not count.
	a.post(&attackMsg{from: alice.Address, to: killAddress("atk2", "t", alice.Token), what: "forged pass below the MTA's fail",
		expect: attackRefused, strict: true, notify: alice.Address},
		attackAuthserv+"; dmarc=fail header.from=example.org",
		[]string{"Authentication-Results: " + attackPass(alice.Address)}, "VOTE Grace")
	for _, p := range old.Players {
		if p.Name == "Judy" {
			a.post(&attackMsg{from: p.Address, to: killAddress("atk1", "t", p.Token), what: "finished game", expect: attackRefused,
				notify: p.Address}, attackPass(p.Address), nil, "VOTE Alice")
		}
	}
	newCarol := "carol.sub@example.org"
	a.post(&attackMsg{from: "referee@example.org", to: killAddress("atk2", "p", ref), what: "replace", expect: attackApplied},
		attackPass("referee@example.org"), nil, "REPLACE Carol WITH "+newCarol)
	a.state("atk2", "the replacement", func(s *engine.State) bool { return s.Player(carol.Slot).Address == newCarol })
	a.post(&attackMsg{from: carol.Address, to: killAddress("atk2", "t", carol.Token), what: "replaced address", expect: attackRefused, strict: true,
		notify: newCarol, forgers: []string{carol.Address}}, attackPass(carol.Address), nil, "VOTE Grace")

	// Odd mail.
	grace, heidi, ivan, frank := player("Grace"), player("Heidi"), player("Ivan"), player("Frank")
	a.post(&attackMsg{from: grace.Address, to: killAddress("atk2", "p", grace.Token), what: "malformed MIME", expect: attackOdd,
		notify: grace.Address}, attackPass(grace.Address),
		[]string{"MIME-Version: 1.0", "Content-Type: multipart/alternative; boundary=\"zz\"", "Content-Transfer-Encoding: quoted-printable"},
		"--zz\nContent-Type: text/plain; charset=no-such-charset\nContent-Transfer-Encoding: base64\n\n!!!! not base64 ====\n--zz\nContent-Type: text/html\n\n<p>STATUS<p><b>")
	big := strings.Repeat(strings.Repeat("x", 99)+"\n", 25<<20/100+1)
	a.post(&attackMsg{from: heidi.Address, to: killAddress("atk2", "p", heidi.Token), what: "25 MiB", expect: attackRefused, strict: true, mustTell: true,
		notify: heidi.Address}, attackPass(heidi.Address), nil, "STATUS\n\n"+big)
	a.post(&attackMsg{from: ivan.Address, to: killAddress("atk2", "t", ivan.Token), what: "5,000 command lines", expect: attackRefused, strict: true, mustTell: true,
		notify: ivan.Address}, attackPass(ivan.Address), nil, strings.Repeat("TALLY\n", 5000))

	// The flood, on one connection, while the game goes on.
	floodDone := make(chan error, 1)
	floodStart := time.Now()
	go func() {
		floodDone <- func() error {
			c, err := smtp.Dial(srv.SMTPAddr())
			if err != nil {
				return err
			}
			defer c.Close()
			to := killAddress("atk2", "p", frank.Token)
			for i := 0; i < floodSize; i++ {
				m := a.record(&attackMsg{id: a.nextID("flood"), from: frank.Address, to: to, what: "flood", expect: attackFlood,
					notify: frank.Address})
				if err := c.SendMail(frank.Address, []string{to}, bytes.NewReader(attackMail(m.id, m.from, to, "STATUS?", attackPass(m.from), nil, "STATUS"))); err != nil {
					return fmt.Errorf("flood message %d: %w", i, err)
				}
			}
			return c.Quit()
		}()
	}()
	a.voteRound("atk2", 2, "Frank")

	// SMTP faults on the host's outgoing mail while the game goes on.
	a.faulting.Store(true)
	a.voteRound("atk2", 3, "Frank")
	for a.faults.Load() < 20 && time.Since(floodStart) < 90*time.Second {
		time.Sleep(200 * time.Millisecond)
	}
	a.voteRound("atk2", 4, "Frank")
	time.Sleep(2 * time.Second)
	a.faulting.Store(false)
	if err := <-floodDone; err != nil {
		t.Fatal(err)
	}
	floodSent := time.Since(floodStart)

	a.post(&attackMsg{from: "referee@example.org", to: killAddress("atk2", "p", ref), what: "end", expect: attackApplied},
		attackPass("referee@example.org"), nil, "END")
	a.waitDecided(4 * time.Minute)
	// The last of the host's mail may still draw answers: stop the
	// responders, let those in flight finish, and wait again.
	a.resp.stop()
	a.waitDecided(4 * time.Minute)
	floodWindow := time.Since(floodStart)
	h.terminate()
	view.close()

	st, err := store.OpenReadOnly(context.Background(), h.db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	a.check(st, floodSize, floodWindow, floodSent)
}

// check reads the database and the mail server's record after the run.
func (a *attackRun) check(st *store.Store, floodSize int, floodWindow, floodSent time.Duration) {
	t := a.t
	ctx := context.Background()
	reported := 0
	errorf := func(format string, args ...any) {
		t.Helper()
		if reported++; reported <= 30 {
			t.Errorf(format, args...)
		}
	}
	defer func() {
		if reported > 30 {
			t.Errorf("and %d more failures", reported-30)
		}
	}()

	rows, dupRows := readInbox(t, st, errorf, nil)

	// Events by cause, in transactions.
	games, err := st.Games(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]store.Event{}
	blocks := map[string]int{}
	for _, g := range games {
		evs, err := st.Events(ctx, g.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range evs {
			events[e.Cause] = append(events[e.Cause], e)
			if i == 0 || evs[i-1].Cause != e.Cause || !evs[i-1].At.Equal(e.At) {
				blocks[e.Cause]++
			}
		}
	}
	appliedTwice := dupRows
	for cause, n := range blocks {
		if strings.HasPrefix(cause, "inbox:") && n != 1 {
			appliedTwice++
			errorf("events caused by %s come in %d transactions", cause, n)
		}
	}

	// The outbox: every message sent; answers by cause.
	_, answers := readOutbox(t, st, errorf)

	f := checkExpected(t, a.sent, rows, events, answers, floodWindow, floodSize, 120, errorf)
	lost, floodApplied, floodRefused, floodAnswers, voteLag := f.lost, f.applied, f.refused, f.answers, f.voteLag

	// Loops: what went to and from the looping addresses.
	// A loop is a chain of answers: the host answers none, and the pair
	// stops after three rounds each, so no chain is longer than seven.
	busiest, busiestAt := 0, ""
	largest, loopMail := a.resp.loops()
	for addr, n := range loopMail {
		if n > busiest {
			busiest, busiestAt = n, addr
		}
	}
	if largest > 7 {
		errorf("a chain of %d answers ran between the responders and the host", largest)
	}
	autoRows := 0
	for _, m := range a.sent {
		if m.expect == attackIgnored {
			autoRows++
		}
	}

	// The mail server's record: nothing ever went to a forger.
	for _, m := range a.srv.Messages() {
		for _, r := range m.To {
			if strings.EqualFold(r, "mallory@evil.example.org") {
				errorf("mail went to the forger: transaction %d from %s", m.Seq, m.From)
			}
		}
	}

	checkServeLog(t, a.h.logPath, errorf)

	// The host's mailbox: every message read and flagged \Seen.
	if total, unseen := hostInbox(t, a.srv.IMAPAddr()); unseen > 0 || total != len(a.sent) {
		errorf("the host's INBOX holds %d messages, %d unseen; %d were sent", total, unseen, len(a.sent))
	}

	if a.faults.Load() == 0 {
		errorf("no SMTP fault was injected")
	}
	var kinds []string
	for f := range a.byFault {
		if n := a.byFault[f].Load(); n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %v", n, mailserver.Fault(f)))
		}
	}
	line := fmt.Sprintf("attack run: %d games, %d SMTP faults injected (%s), %d messages checked, %d lost, %d applied twice, "+
		"largest loop %d messages (%d auto-replies to the host, none answered; at most %d messages to and from %s); flood %d messages sent in %v: %d applied, %d refused, %d answers; votes applied at most %v after sending",
		len(games), a.faults.Load(), strings.Join(kinds, ", "), len(a.sent), lost, appliedTwice, largest, autoRows, busiest, busiestAt,
		floodSize, floodSent.Round(time.Second), floodApplied, floodRefused, floodAnswers, voteLag.Round(time.Millisecond))
	t.Log(line)
	if testing.Verbose() {
		fmt.Println(line)
	}
}

// expectedFigures is what became of the messages with an expectation of
// their own.
type expectedFigures struct {
	lost                      int
	applied, refused, answers int // of the flood
	voteLag                   time.Duration
	largestLoop               int
}

// checkExpected checks each message against what the host made of it: its
// inbox row (rows, by Message-ID), the events it caused and the mail that
// answered it (events and answers, by cause). The flood's allowance,
// perHour messages an hour as the host configures it, is checked against
// floodWindow, the time it took to send and work off.
func checkExpected(t *testing.T, sent []*attackMsg, rows map[string]store.Inbound, events map[string][]store.Event,
	answers map[string][]store.OutMessage, floodWindow time.Duration, floodSize, perHour int, errorf func(string, ...any)) expectedFigures {
	t.Helper()
	var f expectedFigures
	for _, m := range sent {
		in, ok := rows[m.id]
		if !ok {
			f.lost++
			errorf("%s %s from %s to %s was never recorded", m.what, m.id, m.from, m.to)
			continue
		}
		cause := "inbox:" + strconv.FormatInt(in.ID, 10)
		evs, outs := events[cause], answers[cause]
		voted := 0
		for _, e := range evs {
			if e.Type == string(engine.EvVoted) {
				voted++
			}
		}
		to := map[string]int{}
		for _, o := range outs {
			for _, r := range o.To {
				to[strings.ToLower(r)]++
			}
		}
		for _, fg := range m.forgers {
			if to[fg] > 0 {
				errorf("%s %s: the forger's address %s got %d answers", m.what, m.id, fg, to[fg])
			}
		}
		switch m.expect {
		case attackApplied:
			if in.Outcome != store.OutcomeApplied {
				errorf("%s %s from %s to %s is %s: %s", m.what, m.id, m.from, m.to, in.Outcome, in.Reason)
			}
			if m.vote && voted != 1 {
				errorf("%s %s from %s made %d voted events, want 1", m.what, m.id, m.from, voted)
			}
			if m.vote && len(evs) > 0 {
				// At speed 1 the game clock is the real one.
				f.voteLag = max(f.voteLag, evs[0].At.Sub(m.at))
			}
		case attackRefused:
			// A genuine sender at a wrong address may be answered with an
			// error line, recorded as applied with no effect; a strict
			// one must not even be recorded as applied.
			if m.strict && in.Outcome == store.OutcomeApplied || len(evs) > 0 {
				errorf("%s %s from %s was applied (%s, %d events)", m.what, m.id, m.from, in.Outcome, len(evs))
			}
			for addr, n := range to {
				if addr != m.notify {
					errorf("%s %s: its refusal went to %s, not the registered %s", m.what, m.id, addr, m.notify)
				}
				if n > 1 {
					errorf("%s %s: %s got %d refusals", m.what, m.id, addr, n)
				}
			}
			if m.mustTell && to[m.notify] != 1 {
				errorf("%s %s: %s got %d private errors, want 1", m.what, m.id, m.notify, to[m.notify])
			}
			t.Logf("%s: %s (%s), answered to %v", m.what, in.Outcome, in.Reason, slices.Sorted(maps.Keys(to)))
		case attackIgnored:
			if in.Outcome != store.OutcomeIgnored {
				errorf("%s %s from %s to %s is %s (%s), want ignored", m.what, m.id, m.from, m.to, in.Outcome, in.Reason)
			}
			if len(evs) > 0 || len(outs) > 0 {
				errorf("%s %s from %s was answered: %d events, %d messages", m.what, m.id, m.from, len(evs), len(outs))
			}
		case attackOdd:
			if in.Outcome == store.OutcomePending {
				errorf("%s %s was never decided", m.what, m.id)
			}
			if in.Outcome != store.OutcomeApplied && to[m.notify] != 1 {
				errorf("%s %s is %s (%s) and %s got %d private errors, want 1", m.what, m.id, in.Outcome, in.Reason, m.notify, to[m.notify])
			}
			t.Logf("%s: %s (%s), %d answers", m.what, in.Outcome, in.Reason, len(outs))
		case attackFlood:
			switch in.Outcome {
			case store.OutcomeApplied:
				f.applied++
			case store.OutcomeRefused:
				f.refused++
				if len(evs) > 0 {
					errorf("flood message %s was refused yet made events", m.id)
				}
			default:
				errorf("flood message %s is %s: %s", m.id, in.Outcome, in.Reason)
			}
			f.answers += to[m.notify]
		}
	}
	// The allowance is a bucket of a quarter of the hourly messages (at
	// least ten), refilled evenly over the hour (host.New): a few more for
	// a slow run, never most of the flood.
	burst, every := max(10, perHour/4), time.Hour/time.Duration(perHour)
	if most := burst + int(floodWindow/every) + 2; f.applied > most {
		errorf("the rate limiter let %d of %d flood messages through in %v; at most %d expected", f.applied, floodSize, floodWindow, most)
	}
	if f.answers > f.applied+int(floodWindow/every)+2 {
		errorf("the flooder got %d answers for %d messages applied: refusals were not limited to one", f.answers, f.applied)
	}
	return f
}
