//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/hostrun"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// The tests here run the host as serve runs it (service.Start, through
// hostrun) on the embedded mail server, whose mailbox can record when a
// message arrived. Its SMTP server is out of reach: what the host would
// send waits in the outbox, where the tests read it, and the sender's work
// stays out of the watcher's timings.

const (
	rigPass = "rig-secret"
	rigHost = "host@example.org"
	rigRef  = "referee@example.org"
	// rigWait bounds every wait; a healthy step takes well under it.
	rigWait = 30 * time.Second
)

// players are the five players of game g1, who write from addr.
var players = []string{"Alice", "Bob", "Carol", "Dave", "Erin"}

func addr(name string) string { return strings.ToLower(name) + "@players.test" }

// rig is one test's mail server and, while it runs, its host.
type rig struct {
	t     *testing.T
	srv   *mailserver.Server
	db    string
	log   *slog.Logger
	grace time.Duration
	// noSMTP is the host's SMTP server, which refuses every connection.
	noSMTP string
	// deadline is the first round's deadline, game time.
	deadline time.Time

	// While the host runs: its runtime, store, rules, watcher and clock.
	rt    *hostrun.Runtime
	st    *store.Store
	h     *host.Host
	w     *watcher.Watcher
	clock host.Clock

	mu     sync.Mutex
	floods []watcher.Flood
}

// newRig starts the mail server and sets up game g1 (five players, one
// Mafioso, one Inspector, Day 1 running) by handing the rules their mail
// directly, at a fixed game time; no host runs yet.
func newRig(t *testing.T, grace time.Duration) *rig {
	t.Helper()
	srv, err := mailserver.Start(mailserver.Config{Domain: "example.org", Users: map[string]string{"host": rigPass},
		AutoCreateUsers: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("mailserver.Start: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	r := &rig{t: t, srv: srv, db: filepath.Join(t.TempDir(), "host.db"), log: testlog.New(t, slog.LevelWarn), grace: grace}
	// An address no server listens on: the sender's connections are
	// refused, and it waits longer after each.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.noSMTP = ln.Addr().String()
	ln.Close()

	setupAt := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	st, err := store.Open(context.Background(), r.db, store.Config{Logger: r.log})
	if err != nil {
		t.Fatal(err)
	}
	// A fixed draw, in which Dave, whom the tests vote for, is not the
	// Mafioso: voting him out does not end the game, which still has a
	// referee to tell of a flood.
	h, err := host.New(context.Background(), host.Config{Address: rigHost, Referees: []string{rigRef},
		Clock: host.Clock{Real: func() time.Time { return setupAt }}, Rand: rand.NewChaCha8([32]byte{1}),
		AuthServID: rigAuthServ, Store: st, Log: r.log})
	if err != nil {
		t.Fatal(err)
	}
	uid := uint32(0)
	send := func(from, to, body string) {
		uid++
		if err := h.HandleMessage(context.Background(), "setup", 1, uid, rigMail(from, to, fmt.Sprintf("setup-%d", uid), body)); err != nil {
			t.Fatalf("set-up mail %q: %v", body, err)
		}
	}
	send(rigRef, rigHost, "NEW GAME g1")
	r.st, r.h = st, h
	send(rigRef, r.private("Referee"), "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false reminder_before=0")
	for _, p := range players {
		send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	send(rigRef, r.private("Referee"), "START")
	s, _ := h.Game("g1")
	if s.Phase != engine.DayPhase {
		t.Fatalf("phase %s after START", s.Phase)
	}
	for _, p := range s.Players {
		if p.Name == "Dave" && p.Role == engine.Mafia {
			t.Fatalf("the draw made Dave the Mafioso")
		}
	}
	r.deadline, _ = engine.NextDeadline(s)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	r.st, r.h = nil, nil
	return r
}

// rigAuthServ is the receiving server the rig's host trusts.
const rigAuthServ = "mx.players.test"

func rigMail(from, to, id, body string) []byte {
	// The players' mail comes from outside, through a receiving server
	// the host trusts (rigAuthServ) that vouched for its sender.
	return []byte(fmt.Sprintf("Authentication-Results: %s; dmarc=pass header.from=%s\r\n"+
		"From: %s\r\nTo: %s\r\nSubject: g1\r\nMessage-ID: <%s@players.test>\r\n"+
		"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		rigAuthServ, from[strings.LastIndexByte(from, '@')+1:], from, to, id, body))
}

// participant is the active participant of g1 with the given name
// ("Referee" for the referee).
func (r *rig) participant(name string) store.Participant {
	r.t.Helper()
	st := r.st
	if st == nil {
		var err error
		st, err = store.Open(context.Background(), r.db, store.Config{Logger: r.log})
		if err != nil {
			r.t.Fatal(err)
		}
		defer st.Close()
	}
	ps, err := st.Participants(context.Background(), "g1")
	if err != nil {
		r.t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == name && p.Status == store.StatusActive {
			return p
		}
	}
	r.t.Fatalf("no participant %s in g1", name)
	return store.Participant{}
}

func (r *rig) private(name string) string {
	return "host+g1-p-" + r.participant(name).Token + "@example.org"
}
func (r *rig) thread(name string) string {
	return "host+g1-t-" + r.participant(name).Token + "@example.org"
}

// start runs the host on the store with clock, as serve runs it, tuned
// for a test: the rig's mail grace, quick reconnections, a flood that ends
// after a quiet second, and every flood the watcher reports recorded on its
// way to the referees.
func (r *rig) start(clock host.Clock) {
	r.t.Helper()
	cfg := service.Embedded(r.srv, rigPass, r.db)
	cfg.Auth.AuthservID = rigAuthServ
	cfg.SMTP.URL = "smtp://" + r.noSMTP
	// No limit per sender: the flood test's yardstick is a thousand posts
	// from each player within the hour.
	cfg.Limits.PerSenderPerHour = 0
	r.rt = hostrun.Start(r.t, &cfg, service.Config{Clock: clock, Log: r.log,
		TuneHost: func(c *host.Config) { c.MailGrace = r.grace },
		TuneWatcher: func(c *watcher.Config) {
			c.MinBackoff, c.MaxBackoff, c.FloodQuiet = 20*time.Millisecond, 200*time.Millisecond, time.Second
			report := c.OnFlood
			c.OnFlood = func(f watcher.Flood) {
				r.mu.Lock()
				r.floods = append(r.floods, f)
				r.mu.Unlock()
				report(f)
			}
		}})
	r.st, r.h, r.w, r.clock = r.rt.Store(), r.rt.Host(), r.rt.Watcher(), clock
}

// stop ends the host and closes its store.
func (r *rig) stop() {
	if r.rt == nil {
		return
	}
	r.rt.Stop(r.t)
	r.rt, r.st, r.h, r.w = nil, nil, nil, nil
}

// clockAt is a real-time clock at which game time is now game.
func clockAt(game time.Time) host.Clock {
	return host.Clock{Anchor: time.Now(), Start: game}
}

// deliver puts a message into the host's mailbox as arriving at the real
// instant at (zero: now).
func (r *rig) deliver(from, to, id, body string, at time.Time) {
	r.t.Helper()
	if err := r.srv.DeliverAt(from, to, rigMail(from, to, id, body), at); err != nil {
		r.t.Fatalf("deliver %s: %v", id, err)
	}
}

// waitFor polls cond until it holds.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	r.waitWithin(rigWait, what, cond)
}

// waitWithin is waitFor with its own bound.
func (r *rig) waitWithin(d time.Duration, what string, cond func() bool) {
	r.t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			r.t.Fatalf("waited %v for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// closing is the tally with which Day 1's first round closed, once it has.
func (r *rig) closing() *engine.Tally {
	r.t.Helper()
	var tally *engine.Tally
	r.waitFor("Day 1 to close", func() bool {
		tally = r.closedTally()
		return tally != nil
	})
	return tally
}

func (r *rig) closedTally() *engine.Tally {
	r.t.Helper()
	evs, err := r.st.Events(context.Background(), "g1", 0)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, se := range evs {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			r.t.Fatal(err)
		}
		if e.Type == engine.EvRoundClosed && e.Day == 1 {
			return e.Tally
		}
	}
	return nil
}

// votesFor lists who voted for target in a tally.
func votesFor(t *engine.Tally, target string) []string {
	var out []string
	for _, v := range t.Votes {
		if v.Target == target {
			out = append(out, v.Name)
		}
	}
	return out
}

// refereeNotices counts the mail queued for the referee whose text holds text.
func (r *rig) refereeNotices(text string) int {
	r.t.Helper()
	ms, err := r.st.OutMessages(context.Background(), "")
	if err != nil {
		r.t.Fatal(err)
	}
	n := 0
	for _, m := range ms {
		if len(m.To) != 1 || !strings.EqualFold(m.To[0], rigRef) {
			continue
		}
		mr, err := gomail.CreateReader(bytes.NewReader(m.Raw))
		if err != nil {
			r.t.Fatalf("read %s: %v", m.MessageID, err)
		}
		var body strings.Builder
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if h, ok := p.Header.(*gomail.InlineHeader); ok {
				if ct, _, _ := h.ContentType(); ct == "text/plain" {
					b, _ := io.ReadAll(p.Body)
					body.Write(b)
				}
			}
		}
		if strings.Contains(strings.Join(strings.Fields(body.String()), " "), text) {
			n++
		}
	}
	return n
}

func (r *rig) phase() engine.Phase {
	s, _ := r.h.Game("g1")
	return s.Phase
}

// D8: the host was stopped; votes reached its mailbox before the deadline;
// it starts after the deadline. They count: the round closes with them.
func TestD8_VotesThatReachedTheMailboxWhileTheHostWasDownCount(t *testing.T) {
	t.Parallel()
	r := newRig(t, time.Minute)
	clock := clockAt(r.deadline.Add(10 * time.Second)) // started ten seconds after the deadline
	for i, p := range []string{"Alice", "Bob", "Carol"} {
		r.deliver(addr(p), r.thread(p), fmt.Sprintf("down-%d", i), "VOTE Dave", clock.RealAt(r.deadline.Add(-3*time.Second)))
	}
	r.start(clock)
	tally := r.closing()
	if got := votesFor(tally, "Dave"); strings.Join(got, ",") != "Alice,Bob,Carol" {
		t.Fatalf("the closing tally has %v voting for Dave, want Alice, Bob and Carol: %+v", got, tally)
	}
	if !tally.At.Equal(r.deadline) {
		t.Errorf("the round closed at %v, want its deadline %v", tally.At, r.deadline)
	}
	if n := r.refereeNotices("held the deadline of"); n != 0 {
		t.Errorf("the referee was told %d times of unread mail, though all of it was read", n)
	}
}

// D8: the IMAP server cannot be reached across a deadline. For less than
// the grace, the deadline waits and the votes that reached the mailbox
// before it count; for longer, it is applied when the grace ends, the
// referee is told, and the votes read later count after it.
func TestD8_MailboxUnreadableAcrossADeadline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		grace, outage time.Duration
		counted       bool
	}{
		{name: "for less than the grace", grace: 6 * time.Second, outage: 3 * time.Second, counted: true},
		{name: "for longer than the grace", grace: 2 * time.Second, outage: 5 * time.Second, counted: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.grace)
			r.start(clockAt(r.deadline.Add(-2 * time.Second)))
			r.waitFor("the watcher to catch up", func() bool { return r.w.Stats().CaughtUp })
			// The server refuses the host from now on.
			if err := r.srv.SetPassword("host", "changed"); err != nil {
				t.Fatal(err)
			}
			r.srv.DropConnections("host")
			r.waitFor("the watcher to lose its connection", func() bool { return !r.w.Stats().Connected })
			for i, p := range []string{"Alice", "Bob", "Carol"} {
				r.deliver(addr(p), r.thread(p), fmt.Sprintf("outage-%d", i), "VOTE Dave", time.Time{})
			}
			if !time.Now().Before(r.clock.RealAt(r.deadline)) {
				t.Skip("the machine is too slow: the votes reached the mailbox after the deadline")
			}
			back := r.clock.RealAt(r.deadline).Add(tc.outage)
			time.Sleep(time.Until(r.clock.RealAt(r.deadline).Add(time.Second)))
			if r.phase() != engine.DayPhase {
				t.Fatalf("the deadline was applied a second after it, while the mailbox could not be read (grace %v)", tc.grace)
			}
			if !tc.counted {
				r.waitFor("the grace to run out", func() bool { return r.closedTally() != nil })
				if time.Now().After(back) {
					t.Fatalf("the deadline waited longer than its grace")
				}
				if n := r.refereeNotices("held the deadline of"); n != 1 {
					t.Errorf("the referee got %d notices of unread mail, want 1", n)
				}
			}
			time.Sleep(time.Until(back))
			if err := r.srv.SetPassword("host", rigPass); err != nil {
				t.Fatal(err)
			}
			tally := r.closing()
			r.waitFor("the votes to be read", func() bool { return r.w.Stats().Handled >= 3 && r.w.Stats().CaughtUp })
			got := votesFor(tally, "Dave")
			if tc.counted && strings.Join(got, ",") != "Alice,Bob,Carol" {
				t.Fatalf("the closing tally has %v voting for Dave, want Alice, Bob and Carol", got)
			}
			if !tc.counted && len(got) != 0 {
				t.Fatalf("the deadline was applied after its grace, yet the tally has %v voting for Dave", got)
			}
			if n := r.refereeNotices("held the deadline of"); tc.counted && n != 0 {
				t.Errorf("the referee was told of unread mail %d times, though none was missing", n)
			}
		})
	}
}

// D8: messages that reached the mailbox just before and just after the
// deadline are read in one batch: those before count before it, whatever
// their order in the mailbox, and the one after counts after it.
func TestD8_ArrivalsEitherSideOfADeadlineInOneBatch(t *testing.T) {
	t.Parallel()
	r := newRig(t, time.Minute)
	clock := clockAt(r.deadline.Add(10 * time.Second))
	at := func(d time.Duration) time.Time { return clock.RealAt(r.deadline.Add(d)) }
	r.deliver(addr("Alice"), r.thread("Alice"), "before-1", "VOTE Dave", at(-time.Second))
	r.deliver(addr("Bob"), r.thread("Bob"), "after", "VOTE Dave", at(time.Second))
	r.deliver(addr("Carol"), r.thread("Carol"), "before-2", "VOTE Dave", at(-2*time.Second))
	r.start(clock)
	tally := r.closing()
	if got := votesFor(tally, "Dave"); strings.Join(got, ",") != "Alice,Carol" {
		t.Fatalf("the closing tally has %v voting for Dave, want Alice and Carol (Bob's vote came after the deadline)", got)
	}
	r.waitFor("every message to be read", func() bool { return r.w.Stats().Handled >= 3 && r.w.Stats().CaughtUp })
	if s, _ := r.h.Game("g1"); s.Player(2).Vote != 0 {
		t.Errorf("Bob's vote, which came after the deadline, counts at night: %+v", s.Player(2))
	}
}
