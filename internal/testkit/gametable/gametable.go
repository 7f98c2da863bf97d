// Package gametable plays a game of mafiamail, on a clock the test moves,
// with a host that serve would run: the driver of the tests that lose the
// host's database and restore it, on the embedded mail servers (service)
// and on Postfix and Dovecot (e2e). The game is the same on both, so that
// a seed plays the same game wherever it runs; what differs is how a
// player's message reaches the host's mailbox, which Config.Deliver says.
package gametable

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/watcher"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// Players sign up for the game, in this order.
var Players = []string{"Alice", "Bob", "Carol", "Dave", "Erin"}

// Config is what a table is played on.
type Config struct {
	// Host is the host's configuration: its addresses (the first referee
	// is the game's), database, key file (the key written) and mailbox.
	Host config.Config
	// Deliver puts a player's message in the host's INBOX, arrived at
	// at, as a delivery at that moment would: the arrival time is what
	// the host and a restore order the game by.
	Deliver func(from, to string, raw []byte, at time.Time) error
	// PlayerDomain is the domain of the players' addresses, which their
	// mail's DMARC result names.
	PlayerDomain string
	// Subject is the subject of the players' mail.
	Subject string
	// Game is the name of the game the referee creates.
	Game string
	// Wait is how long the table waits for the host to take in mail or
	// send its own.
	Wait time.Duration
	// CheckCurrent starts the host only once serve's check of its
	// database against the mailbox passes, as serve would.
	CheckCurrent bool
}

// Table is one game and the host that runs it. Its fields are the tests'
// to read; Sent counts the players' messages, which are numbered by it.
type Table struct {
	T   *testing.T
	Cfg config.Config
	Log *slog.Logger
	Rng *rand.Rand
	Svc *service.Service

	Sent int

	c Config
	// now is the clock's time in Unix nanoseconds: the host reads it from
	// its own goroutines while the test moves it.
	now     atomic.Int64
	running bool
	cancel  context.CancelFunc
	done    chan error
}

// New sets a table for the game of seed, at 15:00 UTC on 2026-12-01; the
// host is not started.
func New(t *testing.T, seed uint64, c Config) *Table {
	tb := &Table{T: t, Cfg: c.Host, Log: testlog.New(t, slog.LevelWarn), Rng: rand.New(rand.NewPCG(seed, 0)), c: c}
	tb.now.Store(time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC).UnixNano())
	return tb
}

// Clock is the table's time, the host's clock.
func (tb *Table) Clock() time.Time { return time.Unix(0, tb.now.Load()).UTC() }

// Advance moves the clock on by d and, while the host runs, applies what
// it made due, as the host's clock would.
func (tb *Table) Advance(d time.Duration) {
	tb.T.Helper()
	tb.now.Add(int64(d))
	if tb.running {
		if err := tb.Svc.Host().TickDue(tb.T.Context()); err != nil {
			tb.T.Fatal(err)
		}
	}
}

// Start runs the host as serve does and waits until its watcher has
// looked at the mailbox.
func (tb *Table) Start() {
	tb.T.Helper()
	if tb.c.CheckCurrent {
		if err := service.CheckCurrent(tb.T.Context(), &tb.Cfg, tb.Log); err != nil {
			tb.T.Fatal(err)
		}
	}
	key, err := service.LoadKey(&tb.Cfg, tb.Log)
	if err != nil {
		tb.T.Fatal(err)
	}
	// The host applies a deadline once the watcher has read the mail
	// that came before it; the test moves the clock only once the watcher
	// has looked at the mailbox, as the host's own clock would wait.
	looked := make(chan struct{})
	var once sync.Once
	tune := func(c *watcher.Config) {
		raise := c.OnWatermark
		c.OnWatermark = func(t time.Time) {
			raise(t)
			once.Do(func() { close(looked) })
		}
	}
	svc, err := service.Start(tb.T.Context(), &tb.Cfg, service.Config{Clock: host.Clock{Real: tb.Clock}, Log: tb.Log, Key: key,
		TuneWatcher: tune})
	if err != nil {
		tb.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Svc, tb.cancel, tb.done, tb.running = svc, cancel, make(chan error, 1), true
	go func() { tb.done <- svc.Run(ctx) }()
	select {
	case <-looked:
	case <-time.After(tb.c.Wait):
		tb.T.Fatal("the watcher never looked at the mailbox")
	}
}

// Stop stops the host. Svc stays, closed, for what it still holds in
// memory (the game's state).
func (tb *Table) Stop() {
	tb.T.Helper()
	tb.cancel()
	if err := <-tb.done; err != nil && err != context.Canceled {
		tb.T.Errorf("run: %v", err)
	}
	if err := tb.Svc.Close(); err != nil {
		tb.T.Fatal(err)
	}
	tb.running = false
}

// Send delivers a message from a player's address to the host's mailbox
// at the clock's time and, while the host runs, waits until it has taken
// it in (flagged it \Seen).
func (tb *Table) Send(from, to, body string) {
	tb.T.Helper()
	tb.Sent++
	at := tb.Clock()
	raw := fmt.Sprintf("Authentication-Results: %s; dmarc=pass header.from=%s\r\nFrom: %s\r\nTo: %s\r\n"+
		"Subject: %s\r\nMessage-ID: <m%d@players.test>\r\nDate: %s\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		tb.Cfg.Auth.AuthservID, tb.c.PlayerDomain, from, to, tb.c.Subject, tb.Sent, at.Format(time.RFC1123Z), body)
	if err := tb.c.Deliver(from, to, []byte(raw), at); err != nil {
		tb.T.Fatal(err)
	}
	if !tb.running {
		return
	}
	mailtest.WaitFor(tb.T, "the host to take in its mail", tb.c.Wait, 10*time.Millisecond, func() bool {
		h, err := watcher.OpenHistory(tb.T.Context(), watcher.Config{URL: tb.Cfg.IMAP.URL, Username: tb.Cfg.IMAP.Username,
			Password: tb.Cfg.IMAP.Password, Mailbox: "INBOX"})
		if err != nil {
			tb.T.Fatal(err)
		}
		defer h.Close()
		for _, m := range h.Messages {
			if !m.Seen {
				return false
			}
		}
		return true
	})
}

// Game is the game's state as the host holds it.
func (tb *Table) Game() *engine.State {
	s, _ := tb.Svc.Host().Game(tb.c.Game)
	return s
}

// Address is the participant's address on a channel ("t", "p" or "m").
func (tb *Table) Address(addr, channel string) string {
	tb.T.Helper()
	ps, err := tb.Svc.Store().Participants(tb.T.Context(), tb.c.Game)
	if err != nil {
		tb.T.Fatal(err)
	}
	for _, p := range ps {
		if strings.EqualFold(p.Address, addr) && p.Status == store.StatusActive {
			return strings.Replace(tb.Cfg.Address, "@", "+"+tb.c.Game+"-"+channel+"-"+p.Token+"@", 1)
		}
	}
	tb.T.Fatalf("no participant %s", addr)
	return ""
}

// Player is the address of the player of a name in Players.
func (tb *Table) Player(name string) string { return strings.ToLower(name) + "@" + tb.c.PlayerDomain }

// Referee is the game's referee's address.
func (tb *Table) Referee() string { return tb.Cfg.Referees[0] }

// SignUp creates the game, sets it up for five players, and fills it:
// three steps and one a player. Each step but the minute between the
// first two is run by step, where the test wants its turn before it (nil:
// as it comes).
func (tb *Table) SignUp(step func(do func())) {
	if step == nil {
		step = func(do func()) { do() }
	}
	ref := tb.Referee()
	step(func() { tb.Send(ref, tb.Cfg.Address, "NEW GAME "+tb.c.Game) })
	tb.Advance(time.Minute)
	step(func() {
		tb.Send(ref, tb.Address(ref, "p"), "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false weekend=off day_length=3h night_length=6h night_step=6h reminder_before=1h")
	})
	signup := strings.Replace(tb.Cfg.Address, "@", "+"+tb.c.Game+"@", 1)
	for _, p := range Players {
		d := time.Duration(1+tb.Rng.IntN(20)) * time.Minute
		step(func() {
			tb.Advance(d)
			tb.Send(tb.Player(p), signup, "JOIN "+p)
		})
	}
}

// Begin has the referee START the game a minute on.
func (tb *Table) Begin() {
	tb.Advance(time.Minute)
	tb.Send(tb.Referee(), tb.Address(tb.Referee(), "p"), "START")
}

// Step draws how long the clock moves before a turn: some minutes and,
// one time in odds, past the game's next deadline, which deadline then
// says.
func (tb *Table) Step(odds int) (d time.Duration, deadline bool) {
	d = time.Duration(5+tb.Rng.IntN(40)) * time.Minute
	if tb.Rng.IntN(odds) == 0 {
		if next, ok := engine.NextDeadline(tb.Game()); ok {
			d, deadline = max(d, next.Sub(tb.Clock())+time.Duration(tb.Rng.IntN(30))*time.Minute), true
		}
	}
	return d, deadline
}

// Play begins the game and plays it until it ends or turns turns have
// passed, each a Step(odds) of the clock and a Turn; before(i) runs ahead
// of each, i = 0 ahead of START, and sees the game as it stands. Then an
// hour passes and the host sends what it has queued.
func (tb *Table) Play(turns, odds int, before func(i int)) {
	for i := 0; i <= turns; i++ {
		before(i)
		if i == 0 {
			tb.Begin()
			continue
		}
		if tb.Game().Phase == engine.EndedPhase {
			break
		}
		d, _ := tb.Step(odds)
		tb.Advance(d)
		tb.Turn()
	}
	tb.Advance(time.Hour)
	tb.Drain()
}

// Turn has one living player act: a vote by day, a night action by
// night, else a STATUS, chosen by the table's random source.
func (tb *Table) Turn() {
	s := tb.Game()
	living := s.Living()
	if len(living) == 0 {
		return
	}
	me := s.Player(living[tb.Rng.IntN(len(living))])
	other := s.Player(living[tb.Rng.IntN(len(living))])
	switch {
	case s.Phase == engine.DayPhase:
		tb.Send(me.Address, tb.Address(me.Address, "t"), "VOTE "+other.Name+"\n\nI do not trust them.")
	case s.Phase == engine.NightPhase && me.Role == engine.Mafia:
		tb.Send(me.Address, tb.Address(me.Address, "p"), "KILL "+other.Name)
	case s.Phase == engine.NightPhase && me.Role == engine.Inspector:
		tb.Send(me.Address, tb.Address(me.Address, "p"), "INSPECT "+other.Name)
	default:
		tb.Send(me.Address, tb.Address(me.Address, "p"), "STATUS")
	}
}

// Drain waits until the host has sent everything it queued.
func (tb *Table) Drain() {
	tb.T.Helper()
	mailtest.WaitFor(tb.T, "the outbox to drain", tb.c.Wait, 10*time.Millisecond, func() bool {
		waiting, err := tb.Svc.Store().Waiting(tb.T.Context())
		if err != nil {
			tb.T.Fatal(err)
		}
		return len(waiting) == 0
	})
}

// EventLogs reads every game's event log: type, time and payload, in
// order, as the lines a restore must give back.
func EventLogs(t testing.TB, st *store.Store) map[string][]string {
	t.Helper()
	games, err := st.Games(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, g := range games {
		evs, err := st.Events(t.Context(), g.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			out[g.ID] = append(out[g.ID], fmt.Sprintf("%d %s %s %s", e.Seq, e.Type, e.At.UTC().Format(time.RFC3339Nano), e.Payload))
		}
	}
	return out
}

// RemoveDatabase deletes a database with its write-ahead log, as a lost
// disk would.
func RemoveDatabase(t testing.TB, db string) {
	t.Helper()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}
