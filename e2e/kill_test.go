//go:build integration

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/binary"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/service"
	"github.com/mafiamail/mafiamail/store"
)

// TestKillServe runs `mafiamail serve` as a child process against the
// embedded mail server of the test, plays games by mail, and kills the
// child with SIGKILL at random instants, some of them just before a
// deadline so that it passes while the host is down. At the end it reads
// the database and the mail server's record and checks the guarantees of
// docs/design.md: every command applied once, every outgoing message sent with
// the same bytes each time, every deadline applied once.
// killAuthserv is the receiving server the host trusts: the players'
// mail carries its passing Authentication-Results field.
const killAuthserv = "mx.players.test"

func TestKillServe(t *testing.T) {
	// The game clock runs killSpeed times faster than real time: a
	// 36-hour day passes in six seconds, a night's 6-hour mark in one.
	h := startKillHarness(t, killSpeed)
	view, srv := h.view, h.srv

	d := &killDriver{h: h, view: view, smtpAddr: srv.SMTPAddr(), authserv: killAuthserv, rng: rand.New(rand.NewPCG(h.rng.Uint64(), h.rng.Uint64()))}
	driverErr := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { driverErr <- d.run(ctx, time.Now().Add(killPlayFor)) }()

	// Kill and restart the host until the games are over and enough kills
	// were made.
	driving := true
	for driving || len(h.kills) < killMin {
		select {
		case err := <-driverErr:
			if err != nil {
				t.Fatalf("driving the games: %v\n%s", err, h.logTail())
			}
			driving = false
			continue
		default:
		}
		h.killCycle()
	}
	// The last host runs until every message is applied and every
	// outgoing message sent.
	h.waitDrained(d, 2*time.Minute)
	h.terminate()
	view.close()

	st, err := store.OpenReadOnly(context.Background(), h.db, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum := checkKillRun(t, st, srv, h, d)
	t.Logf("kill run: %d kills (%d within %v of a start, %d planned before a deadline), %d deadlines passed while the host was down; "+
		"%d messages sent to the host (%d votes, %d applied); %d events in %d transactions (%d deadline transactions); "+
		"%d outgoing messages, %d SMTP transactions, %d duplicates delivered; games %s",
		len(h.kills), h.earlyKills, killEarly, h.deadlineKills, sum.passedWhileDown,
		len(d.sent), sum.votes, sum.votesApplied, sum.events, sum.transactions, sum.deadlineTx,
		sum.outbox, sum.smtp, sum.duplicates, strings.Join(sum.games, "; "))
}

const (
	killPassword = "pw"
	// killSpeed makes a game hour pass in a sixth of a real second.
	killSpeed = 21600
	// killPlayFor is how long the games are played; killMin is the least
	// number of kills of a run.
	killPlayFor = 50 * time.Second
	killMin     = 30
	// killEarly: kills this soon after a start hit the host while it opens
	// the database, rebuilds the games or logs in.
	killEarly = 400 * time.Millisecond
)

// startKillHarness starts `mafiamail serve` against an embedded mail
// server of its own, with a game clock speed times faster than real time
// from a Monday morning, and returns once the host has made its database.
func startKillHarness(t *testing.T, speed float64) *killHarness {
	bin := mafiamail.Path(t)
	srv, err := mailserver.Start(mailserver.Config{
		Domain: "example.org", AutoCreateUsers: true, AutoCreatePassword: killPassword,
		Users:  map[string]string{"host": killPassword, "referee": killPassword},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	dir := t.TempDir()
	h := &killHarness{t: t, bin: bin, srv: srv, db: filepath.Join(dir, "kill.db"),
		cfg: filepath.Join(dir, "mafiamail.toml"), logPath: filepath.Join(dir, "serve.log"),
		rng: rand.New(rand.NewPCG(testSeed(t), 0x6b11))}
	// Game time starts on a Monday morning, so that a game's first days
	// lie outside the weekend rule (D7).
	now := time.Now()
	h.clock = host.Clock{Anchor: now.UTC(), Start: service.WeekendEndAfter(now), Speed: speed}
	if err := service.SetGameClock(h.db, h.clock); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`address = "host@example.org"
referees = ["referee@example.org"]
database = %q
speed = %g
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
[limits]
per_sender_per_hour = 1000000
[auth]
authserv_id = %q
`, h.db, speed, srv.IMAPAddr(), killPassword, srv.SMTPAddr(), killPassword, killAuthserv)
	if err := os.WriteFile(h.cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.stop)

	// The first host runs until it has made the database, so that the
	// test's reader never races the creation of the file.
	h.start()
	h.waitLog("games loaded", time.Minute)
	view, err := openView(h.db)
	if err != nil {
		t.Fatal(err)
	}
	h.view = view
	return h
}

// killHarness runs the host as a child process and kills it.
type killHarness struct {
	t                     *testing.T
	bin, db, cfg, logPath string
	srv                   *mailserver.Server
	clock                 host.Clock
	rng                   *rand.Rand
	view                  *killView

	child   *exec.Cmd
	started time.Time
	exited  chan struct{}
	exitErr error
	starts  int

	kills         []killRecord
	earlyKills    int
	deadlineKills int
}

// killRecord is one kill: what the log held when the host died, and when
// the next host started.
type killRecord struct {
	at, restart time.Time
	seqs        map[string]int64
}

func (h *killHarness) start() {
	h.t.Helper()
	logf, err := os.OpenFile(h.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		h.t.Fatal(err)
	}
	defer logf.Close()
	h.starts++
	fmt.Fprintf(logf, "=== start %d at %s\n", h.starts, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(h.bin, "serve", "--config", h.cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	binary.DieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("start serve: %v", err)
	}
	h.child, h.started, h.exited = cmd, time.Now(), make(chan struct{})
	if n := len(h.kills); n > 0 && h.kills[n-1].restart.IsZero() {
		h.kills[n-1].restart = h.started
	}
	exited := h.exited
	go func() {
		h.exitErr = cmd.Wait()
		close(exited)
	}()
}

// alive fails the test if the host stopped by itself.
func (h *killHarness) alive() {
	h.t.Helper()
	select {
	case <-h.exited:
		h.t.Fatalf("serve stopped by itself: %v\n%s", h.exitErr, h.logTail())
	default:
	}
}

// sleep waits d while watching that the host keeps running.
func (h *killHarness) sleep(d time.Duration) {
	h.t.Helper()
	select {
	case <-h.exited:
		h.alive()
	case <-time.After(d):
	}
}

// kill sends SIGKILL and records what the log held when the host died.
func (h *killHarness) kill() {
	h.t.Helper()
	h.alive()
	at := time.Now()
	if err := h.child.Process.Kill(); err != nil {
		h.t.Fatalf("kill serve: %v", err)
	}
	<-h.exited
	if ws, ok := h.child.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		h.t.Fatalf("serve ended with %v before it was killed\n%s", h.child.ProcessState, h.logTail())
	}
	h.child = nil
	if at.Sub(h.started) < killEarly {
		h.earlyKills++
	}
	seqs, err := h.view.lastSeqs()
	if err != nil {
		h.t.Fatalf("read the log after a kill: %v", err)
	}
	h.kills = append(h.kills, killRecord{at: at, seqs: seqs})
}

// killCycle lets the host run for a while, kills it and starts it again.
// Every other kill (every third after the first eight of them) comes just
// before a deadline, and the host stays down until the deadline has passed.
func (h *killHarness) killCycle() {
	h.t.Helper()
	if h.deadlineKills < 8 && len(h.kills)%2 == 1 || len(h.kills)%3 == 2 {
		if due, ok := h.nextDeadline(); ok {
			h.deadlineKills++
			h.sleep(time.Until(due) - time.Duration(h.rng.IntN(250))*time.Millisecond)
			h.kill()
			time.Sleep(time.Until(due) + time.Duration(50+h.rng.IntN(600))*time.Millisecond)
			h.start()
			return
		}
	}
	var up time.Duration
	if h.rng.IntN(5) == 0 {
		up = time.Duration(20+h.rng.IntN(380)) * time.Millisecond
	} else {
		up = time.Duration(400+h.rng.IntN(1600)) * time.Millisecond
	}
	h.sleep(up)
	h.kill()
	time.Sleep(time.Duration(h.rng.IntN(300)) * time.Millisecond)
	h.start()
}

// nextDeadline is the real instant of the earliest deadline of any game,
// if one comes in the next few seconds.
func (h *killHarness) nextDeadline() (time.Time, bool) {
	var best time.Time
	for _, s := range h.view.states() {
		d, ok := engine.NextDeadline(s)
		if !ok {
			continue
		}
		real := h.clock.Anchor.Add(time.Duration(float64(d.Sub(h.clock.Start)) / h.clock.Speed))
		if wait := time.Until(real); wait > 300*time.Millisecond && wait < 5*time.Second && (best.IsZero() || real.Before(best)) {
			best = real
		}
	}
	return best, !best.IsZero()
}

// gameTime is the game time at a real instant.
func (h *killHarness) gameTime(r time.Time) time.Time {
	c := h.clock
	c.Real = func() time.Time { return r }
	return c.Now()
}

// waitDrained waits, with a host running, until every message sent was
// decided, every game is over and the outbox is empty.
func (h *killHarness) waitDrained(d *killDriver, timeout time.Duration) {
	h.t.Helper()
	if h.child == nil {
		h.start()
	}
	end := time.Now().Add(timeout)
	var why string
	for time.Now().Before(end) {
		h.alive()
		why = h.view.undrained(len(d.sent))
		if why == "" {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	h.t.Fatalf("the host did not finish its work in %v: %s\n%s", timeout, why, h.logTail())
}

// terminate stops the last host as an operator would, with SIGTERM.
func (h *killHarness) terminate() {
	h.t.Helper()
	h.alive()
	// A process that has not yet reached main has no handler for SIGTERM
	// and would die of it: the clean stop is checked on a started host.
	end := time.Now().Add(time.Minute)
	for !h.startedLatest() {
		if time.Now().After(end) {
			h.t.Fatalf("serve did not load its games within a minute of its start\n%s", h.logTail())
		}
		h.alive()
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.child.Process.Signal(syscall.SIGTERM); err != nil {
		h.t.Fatal(err)
	}
	select {
	case <-h.exited:
	case <-time.After(time.Minute):
		h.t.Fatalf("serve did not stop within a minute of SIGTERM\n%s", h.logTail())
	}
	if h.exitErr != nil {
		h.t.Fatalf("serve stopped with %v after SIGTERM\n%s", h.exitErr, h.logTail())
	}
	h.child = nil
}

// stop kills a host left running by a failed test. A failed test also
// shows how serve's log ends: what its checks found (a message left
// unsent, a command applied twice) says what broke, the log's last lines
// what the hosts were doing then.
func (h *killHarness) stop() {
	if h.t.Failed() {
		h.t.Log(h.logTail())
	}
	if h.child != nil {
		h.child.Process.Kill()
		<-h.exited
	}
	if h.view != nil {
		h.view.close()
	}
}

func (h *killHarness) waitLog(s string, timeout time.Duration) {
	h.t.Helper()
	end := time.Now().Add(timeout)
	for time.Now().Before(end) {
		h.alive()
		if b, _ := os.ReadFile(h.logPath); bytes.Contains(b, []byte(s)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.t.Fatalf("serve did not log %q in %v\n%s", s, timeout, h.logTail())
}

// startedLatest reports whether the latest host started has loaded its
// games.
func (h *killHarness) startedLatest() bool {
	b, _ := os.ReadFile(h.logPath)
	i := bytes.LastIndex(b, []byte("=== start "))
	return i >= 0 && bytes.Contains(b[i:], []byte(`msg="games loaded"`))
}

func (h *killHarness) logTail() string {
	b, _ := os.ReadFile(h.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 60 {
		lines = lines[len(lines)-60:]
	}
	return "serve's log ends:\n" + strings.Join(lines, "\n")
}

// killView reads the games from the database while hosts come and go: the
// log is append-only, so folding what is new keeps each game current.
type killView struct {
	st     *store.Store
	mu     sync.Mutex
	games  map[string]*engine.State
	seqs   map[string]int64
	tokens map[string]string // game -> the referee's token
	// maxAge lets state and states answer from a fold this recent, so
	// that many players reading the table at once do not each read the
	// whole log; zero reads afresh every time.
	maxAge    time.Duration
	refreshed time.Time
}

func openView(db string) (*killView, error) {
	st, err := store.OpenReadOnly(context.Background(), db, store.Config{})
	if err != nil {
		return nil, err
	}
	return &killView{st: st, games: map[string]*engine.State{}, seqs: map[string]int64{}, tokens: map[string]string{}}, nil
}

func (v *killView) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.st != nil {
		v.st.Close()
		v.st = nil
	}
}

// refresh folds the events committed since the last call.
func (v *killView) refresh() error {
	if v.st == nil {
		return errors.New("the view is closed")
	}
	ctx := context.Background()
	games, err := v.st.Games(ctx)
	if err != nil {
		return err
	}
	v.refreshed = time.Now()
	for _, g := range games {
		evs, err := v.st.Events(ctx, g.ID, v.seqs[g.ID])
		if err != nil {
			return err
		}
		s := v.games[g.ID]
		if s == nil {
			s = &engine.State{}
			v.games[g.ID] = s
		}
		for _, se := range evs {
			e, err := engine.UnmarshalEvent(se.Payload)
			if err != nil {
				return fmt.Errorf("event %d of %s: %w", se.Seq, g.ID, err)
			}
			if err := s.Fold(e); err != nil {
				return fmt.Errorf("fold event %d of %s: %w", se.Seq, g.ID, err)
			}
			v.seqs[g.ID] = se.Seq
		}
		if v.tokens[g.ID] == "" {
			ps, err := v.st.Participants(ctx, g.ID)
			if err != nil {
				return err
			}
			for _, p := range ps {
				if p.Kind == store.KindReferee {
					v.tokens[g.ID] = p.Token
				}
			}
		}
	}
	return nil
}

// refreshOld refreshes unless the fold is younger than maxAge.
func (v *killView) refreshOld() error {
	if v.maxAge > 0 && v.st != nil && time.Since(v.refreshed) < v.maxAge {
		return nil
	}
	return v.refresh()
}

func (v *killView) lastSeqs() (map[string]int64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refresh(); err != nil {
		return nil, err
	}
	return maps.Clone(v.seqs), nil
}

// state returns a copy of a game's state and the referee's token.
func (v *killView) state(game string) (*engine.State, string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refreshOld(); err != nil {
		return nil, "", err
	}
	s, ok := v.games[game]
	if !ok || s.Game == "" {
		return nil, "", nil
	}
	return s.Clone(), v.tokens[game], nil
}

func (v *killView) states() []*engine.State {
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.refreshOld(); err != nil {
		return nil
	}
	var out []*engine.State
	for _, s := range v.games {
		out = append(out, s.Clone())
	}
	return out
}

// undrained says what is left to do before the run can be checked: ""
// when every message sent was decided, every game is over and every
// outgoing message was sent.
func (v *killView) undrained(sent int) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	ctx := context.Background()
	if err := v.refresh(); err != nil {
		return err.Error()
	}
	for id, s := range v.games {
		if s.Phase != engine.EndedPhase {
			return fmt.Sprintf("game %s is in phase %s", id, s.Phase)
		}
	}
	decided := 0
	for _, o := range []store.Outcome{store.OutcomeApplied, store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError} {
		ms, err := v.st.InboundByOutcome(ctx, o, 0)
		if err != nil {
			return err.Error()
		}
		decided += len(ms)
	}
	if decided < sent {
		return fmt.Sprintf("%d of %d messages decided", decided, sent)
	}
	// Pending and being sent in one snapshot (see Waiting): a new host
	// puts the claims of the one killed back to pending.
	waiting, err := v.st.Waiting(ctx)
	if err != nil {
		return err.Error()
	}
	if len(waiting) > 0 {
		return fmt.Sprintf("outgoing messages pending or being sent, by kind: %v", waiting)
	}
	return ""
}

// killDriver plays the games by mail: the referee and every player are
// the test, sending what people would, each message with a Message-ID of
// its own.
type killDriver struct {
	h    *killHarness
	view *killView
	rng  *rand.Rand

	// smtpAddr is where the players hand their mail in.
	smtpAddr string
	// authserv, when set, is the authserv-id of the host's receiving MTA:
	// each message carries the passing Authentication-Results field that
	// MTA would add for a genuine sender.
	authserv string
	// channel, when set, gives the address a player writes to for kind
	// ("t", "p" or "m") as the player learned it from the host's mail;
	// false while the player has not yet been told it. Without it the
	// token comes from the database.
	channel func(g *killGame, p engine.Player, kind string) (string, bool)
	// refChannelOf, when set, is the referee's channel as the referee
	// learned it from the host's mail ("" while not yet told).
	refChannelOf func(g *killGame) string

	mu    sync.Mutex
	sent  []*killMsg
	games []*killGame
}

// killMsg is one message sent to the host, and what it should do.
type killMsg struct {
	id, from, to string
	// vote is the target of the message's first line when that is a vote
	// ("null" for VOTE NULL), and voter the name voting.
	vote, voter string
	// command tells that the message holds at least one command, which
	// must be answered.
	command bool
	// game is the game the message is about, at when it was handed to
	// the mail server.
	game string
	at   time.Time
}

type killGame struct {
	id string
	// referee is the referee's address; "" means referee@example.org.
	referee string
	names   []string
	addrs   map[string]string
	// announced is the round whose weekend close the referee announced.
	announced string
}

var killNames = siegeNames[:11]

// siegeNames are the players of the siege's 25-seat games.
var siegeNames = []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy",
	"Mallory", "Niaj", "Olivia", "Peggy", "Quentin", "Rupert", "Sybil", "Trent", "Ursula", "Victor",
	"Walter", "Xena", "Yuri", "Zoe", "Zack"}

func (d *killDriver) send(from, to string, lines ...string) (*killMsg, error) {
	d.mu.Lock()
	m := &killMsg{id: fmt.Sprintf("k%d.%d@players.example.org", len(d.sent)+1, time.Now().UnixNano()), from: from, to: to, at: time.Now()}
	d.sent = append(d.sent, m)
	d.mu.Unlock()
	msg := fmt.Sprintf("From: <%s>\r\nTo: <%s>\r\nSubject: Re: the game\r\nMessage-ID: <%s>\r\n"+
		"Date: %s\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		from, to, m.id, time.Now().Format(time.RFC1123Z), strings.Join(lines, "\r\n"))
	if d.authserv != "" {
		msg = "Authentication-Results: " + attackPassFrom(d.authserv, from) + "\r\n" + msg
	}
	c, err := smtp.Dial(d.smtpAddr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.SendMail(from, []string{to}, strings.NewReader(msg)); err != nil {
		return nil, fmt.Errorf("send %s: %w", m.id, err)
	}
	return m, c.Quit()
}

// refChannel is the referee's private channel in a game.
func (d *killDriver) refChannel(g *killGame, token string) string {
	if d.refChannelOf != nil {
		return d.refChannelOf(g)
	}
	return killAddress(g.id, "p", token)
}

// refereeOf is the address of a game's referee.
func (g *killGame) refereeOf() string {
	if g.referee != "" {
		return g.referee
	}
	return "referee@example.org"
}

// sendAs sends a message from player p to their address of kind in g. It
// sends nothing, and returns nil, while p does not know that address yet.
func (d *killDriver) sendAs(g *killGame, p engine.Player, kind string, lines ...string) (*killMsg, error) {
	to := killAddress(g.id, kind, p.Token)
	if d.channel != nil {
		var ok bool
		if to, ok = d.channel(g, p, kind); !ok {
			return nil, nil
		}
	}
	m, err := d.send(p.Address, to, lines...)
	if m != nil {
		m.game = g.id
	}
	return m, err
}

// killAddress is a participant's address: kind "t" the thread, "p" the
// private channel, "m" the mafia list.
func killAddress(game, kind, token string) string {
	return fmt.Sprintf("host+%s-%s-%s@example.org", game, kind, token)
}

// run plays two games side by side, opening another when one ends while
// there is time for it; when the time is up the referee ends the games
// still running.
func (d *killDriver) run(ctx context.Context, until time.Time) error {
	var running []*killGame
	for n := 0; time.Now().Before(until); {
		for len(running) < 2 && (n < 2 || time.Until(until) > 15*time.Second) {
			n++
			g := &killGame{id: fmt.Sprintf("kill%d", n), addrs: map[string]string{}}
			for _, name := range killNames {
				g.names = append(g.names, name)
				g.addrs[name] = fmt.Sprintf("%s.%s@example.org", strings.ToLower(name), g.id)
			}
			d.mu.Lock()
			d.games = append(d.games, g)
			d.mu.Unlock()
			if err := d.open(ctx, g); err != nil {
				return err
			}
			running = append(running, g)
		}
		if len(running) == 0 {
			break
		}
		g := running[d.rng.IntN(len(running))]
		s, token, err := d.view.state(g.id)
		if err != nil {
			return err
		}
		if s.Phase == engine.EndedPhase {
			running = slices.DeleteFunc(running, func(r *killGame) bool { return r == g })
			continue
		}
		if err := d.act(g, s, token); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(50+d.rng.IntN(120)) * time.Millisecond):
		}
	}
	for _, g := range running {
		_, token, err := d.view.state(g.id)
		if err != nil {
			return err
		}
		if _, err := d.send("referee@example.org", d.refChannel(g, token), "END"); err != nil {
			return err
		}
	}
	return nil
}

// wait polls the game until cond holds; the host may be down meanwhile.
func (d *killDriver) wait(ctx context.Context, g *killGame, what string, cond func(s *engine.State) bool) (*engine.State, string, error) {
	end := time.Now().Add(90 * time.Second)
	for time.Now().Before(end) {
		s, token, err := d.view.state(g.id)
		if err != nil {
			return nil, "", err
		}
		if s != nil && cond(s) {
			return s, token, nil
		}
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil, "", fmt.Errorf("game %s: %s did not happen in time", g.id, what)
}

// open creates the game, signs the players up and starts it.
func (d *killDriver) open(ctx context.Context, g *killGame) error {
	m, err := d.send("referee@example.org", "host@example.org", "NEW GAME "+g.id)
	if err != nil {
		return err
	}
	m.command = true
	_, token, err := d.wait(ctx, g, "creation", func(*engine.State) bool { return true })
	if err != nil {
		return err
	}
	for _, name := range g.names {
		m, err := d.send(g.addrs[name], "host+"+g.id+"@example.org", "JOIN "+name)
		if err != nil {
			return err
		}
		m.command = true
	}
	if _, _, err := d.wait(ctx, g, "sign-up", func(s *engine.State) bool { return len(s.Players) == len(g.names) }); err != nil {
		return err
	}
	if m, err = d.send("referee@example.org", d.refChannel(g, token), "START"); err != nil {
		return err
	}
	m.command = true
	_, _, err = d.wait(ctx, g, "the start", func(s *engine.State) bool { return s.Phase != engine.SignupPhase })
	return err
}

var killChatter = []string{"I don't trust %s at all.", "%s has been far too quiet.", "Why would %s say that?",
	"Let's hear from %s before the deadline.", "Something about %s's last post doesn't add up."}

// act sends one message.
func (d *killDriver) act(g *killGame, s *engine.State, refToken string) error {
	var living, dead []engine.Player
	for _, p := range s.Players {
		if p.Alive {
			living = append(living, p)
		} else {
			dead = append(dead, p)
		}
	}
	if len(living) < 2 {
		return nil
	}
	pick := func(ps []engine.Player) engine.Player { return ps[d.rng.IntN(len(ps))] }
	other := func(p engine.Player) engine.Player {
		for {
			if o := pick(living); o.Slot != p.Slot {
				return o
			}
		}
	}
	chatter := func(about string) string { return fmt.Sprintf(killChatter[d.rng.IntN(len(killChatter))], about) }
	send := func(p engine.Player, kind string, lines ...string) (*killMsg, error) {
		return d.sendAs(g, p, kind, lines...)
	}
	r := d.rng.IntN(100)
	switch s.Phase {
	case engine.DayPhase:
		round := fmt.Sprintf("%d/%s/%v", s.Day, s.Round, s.Extra)
		if g.announced != round && !s.InWeekend(s.Clock) && d.rng.IntN(4) == 0 {
			// The referee lets each round close on a weekend once everyone
			// has voted (D7), so that weekends hold no game for long.
			g.announced = round
			ch := d.refChannel(g, refToken)
			if ch == "" {
				return nil
			}
			m, err := d.send(g.refereeOf(), ch, "WEEKEND CLOSE")
			if m != nil {
				m.command, m.game = true, g.id
			}
			return err
		}
		if len(dead) > 0 && r < 3 {
			// A dead player's post is held for the referee (C1).
			_, err := send(pick(dead), "t", chatter(pick(living).Name))
			return err
		}
		var owing []engine.Player
		for _, p := range living {
			if p.Vote <= 0 {
				owing = append(owing, p)
			}
		}
		p := pick(living)
		if len(owing) > 0 && d.rng.IntN(5) < 3 {
			p = pick(owing)
		}
		target := other(p).Name
		if s.Round == engine.Runoff && len(s.Candidates) > 0 {
			c := s.Player(s.Candidates[d.rng.IntN(len(s.Candidates))])
			if c.Slot != p.Slot {
				target = c.Name
			}
		}
		var lines []string
		vote := ""
		switch {
		case r < 50:
			vote, lines = target, []string{"VOTE " + target}
			if d.rng.IntN(3) == 0 {
				lines = append(lines, "LOCK")
			}
			if d.rng.IntN(3) == 0 {
				lines = append(lines, "", chatter(target))
			}
		case r < 60:
			vote, lines = target, []string{p.Name + " >> " + target}
		case r < 64:
			vote, lines = "null", []string{"VOTE NULL"}
		case r < 68:
			lines = []string{"UNVOTE"}
		case r < 72:
			lines = []string{"LOCK"}
		case r < 80:
			lines = []string{"TALLY"}
		case r < 83:
			lines = []string{"EXTEND"}
		case r < 90:
			m, err := send(p, "p", "STATUS")
			if m != nil {
				m.command = true
			}
			return err
		default:
			_, err := send(p, "t", chatter(target))
			return err
		}
		m, err := send(p, "t", lines...)
		if m != nil {
			m.command, m.vote, m.voter = true, vote, p.Name
		}
		return err
	case engine.NightPhase:
		var mafia, town []engine.Player
		for _, p := range living {
			if p.Role == engine.Mafia {
				mafia = append(mafia, p)
			} else {
				town = append(town, p)
			}
		}
		switch {
		case r < 40 && len(mafia) > 0 && len(town) > 0:
			p, kind := pick(mafia), "p"
			if d.rng.IntN(3) == 0 {
				kind = "m" // KILL works on the mafia list too
			}
			m, err := send(p, kind, "KILL "+pick(town).Name)
			if m != nil {
				m.command = true
			}
			return err
		case r < 70:
			for _, p := range living {
				if p.Role == engine.Inspector {
					m, err := send(p, "p", "INSPECT "+other(p).Name)
					if m != nil {
						m.command = true
					}
					return err
				}
			}
		case r < 85 && len(mafia) > 0:
			_, err := send(pick(mafia), "m", chatter(pick(town).Name))
			return err
		}
		p := pick(living)
		_, err := send(p, "p", "Just so you know: "+chatter(other(p).Name))
		return err
	}
	return nil
}

// killSummary counts what a run did, for its summary line.
type killSummary struct {
	passedWhileDown, votes, votesApplied, events, transactions, deadlineTx, outbox, smtp, duplicates int
	// appliedTwice counts inbox rows whose events came in more than one
	// transaction.
	appliedTwice int
	// games tells how each game ended.
	games []string
	// finals is each game's state at the end; closings the game times of
	// the deadlines that closed a round or brought the dawn, per game.
	finals   map[string]*engine.State
	closings map[string][]time.Time
}

// checkKillRun checks the database and the mail server's record after the
// run.
func checkKillRun(t *testing.T, st *store.Store, srv *mailserver.Server, h *killHarness, d *killDriver) killSummary {
	t.Helper()
	ctx := context.Background()
	var sum killSummary
	// A broken guarantee tends to show in many places: the first reports
	// say what broke, the rest only how often.
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

	// Every message sent is in the inbox exactly once, decided.
	sent := map[string]*killMsg{}
	for _, m := range d.sent {
		sent[m.id] = m
	}
	recorded := map[string]store.Inbound{}
	byRow := map[int64]*killMsg{}
	for _, o := range []store.Outcome{store.OutcomePending, store.OutcomeApplied, store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError} {
		rows, err := st.InboundByOutcome(ctx, o, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range rows {
			id := bareID(in.MessageID)
			if prev, dup := recorded[id]; dup {
				errorf("message %s is in the inbox twice: rows %d and %d", id, prev.ID, in.ID)
			}
			recorded[id] = in
			m, ok := sent[id]
			if !ok {
				errorf("inbox row %d is message %q, which the test did not send", in.ID, id)
				continue
			}
			// Every message the test sends comes from a participant or the
			// referee at the right address: each must be applied.
			if in.Outcome != store.OutcomeApplied {
				errorf("message %s from %s to %s is %s: %s", id, m.from, m.to, in.Outcome, in.Reason)
			}
			byRow[in.ID] = m
		}
	}
	for _, m := range d.sent {
		if _, ok := recorded[m.id]; !ok {
			errorf("message %s from %s to %s was never recorded", m.id, m.from, m.to)
		}
	}

	games := checkEventLog(t, st, h, byRow, errorf, &sum)
	if len(games) != len(d.games) {
		errorf("%d games in the store, %d played", len(games), len(d.games))
	}

	// The outbox: everything sent, each copy the SMTP server got the same
	// bytes under the same Message-ID.
	outbox, _ := readOutbox(t, st, errorf)
	sum.outbox = len(outbox)
	copies := map[string][]mailserver.Delivery{}
	for _, rm := range srv.Messages() {
		hdr, err := mail.ReadMessage(bytes.NewReader(rm.Data))
		if err != nil {
			errorf("SMTP transaction %d does not parse: %v", rm.Seq, err)
			continue
		}
		id := bareID(hdr.Header.Get("Message-Id"))
		if _, ours := sent[id]; ours {
			continue
		}
		sum.smtp++
		if _, ok := outbox[id]; !ok {
			errorf("the host sent %s (transaction %d), which is not in its outbox", id, rm.Seq)
			continue
		}
		copies[id] = append(copies[id], rm)
	}
	replies := map[string]int{} // cause -> replies to the sender
	for id, m := range outbox {
		delivered := 0
		for _, c := range copies[id] {
			if !bytes.Equal(c.Data, m.Raw) || c.From != m.From || !slices.Equal(c.To, m.To) {
				errorf("a copy of %s (transaction %d) differs from the outbox's", id, c.Seq)
			}
			if c.Delivered {
				delivered++
			}
		}
		if delivered == 0 {
			errorf("outgoing %s (%s to %v) is marked sent but was never delivered", id, m.Kind, m.To)
		}
		sum.duplicates += max(0, delivered-1)
		switch {
		case strings.HasPrefix(m.Cause, "inbox:"):
			row, _ := strconv.ParseInt(strings.TrimPrefix(m.Cause, "inbox:"), 10, 64)
			sm := byRow[row]
			if sm == nil {
				errorf("outgoing %s was caused by inbox row %d, which holds no message of the test", id, row)
			} else if slices.Contains(m.To, sm.from) {
				// The answer, or the sender's own thread copy, which
				// carries it when all it says is public news there.
				replies[sm.id]++
			}
		case m.Cause == "deadline":
		default:
			errorf("outgoing %s has an unexpected cause %q", id, m.Cause)
		}
	}
	for _, m := range d.sent {
		if m.command && replies[m.id] == 0 {
			errorf("message %s from %s to %s held a command and got no reply", m.id, m.from, m.to)
		}
	}

	// The host's mailbox: every message flagged \Seen, none left behind.
	if total, unseen := hostInbox(t, srv.IMAPAddr()); unseen > 0 || total != len(d.sent) {
		errorf("the host's INBOX holds %d messages, %d unseen; %d were sent", total, unseen, len(d.sent))
	}

	logData, err := os.ReadFile(h.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"panic:", "level=ERROR", "fatal error:"} {
		if bytes.Contains(logData, []byte(bad)) {
			errorf("serve's log holds %q:\n%s", bad, grepLines(logData, bad))
		}
	}
	if sum.passedWhileDown < 3 {
		errorf("only %d deadlines passed while the host was down; the run did not test deadlines across restarts", sum.passedWhileDown)
	}
	if sum.votesApplied == 0 || sum.deadlineTx == 0 {
		errorf("the games did not get going: %d votes applied, %d deadline transactions", sum.votesApplied, sum.deadlineTx)
	}
	return sum
}

// checkEventLog walks every game's event log one transaction at a time:
// each transaction applies first what the clock made due, a deadline's
// nothing else; deadlines that passed while the host was down (h.kills)
// are applied by the next transaction; a message's votes make the voted
// events its vote demands (byRow: the test's message of each inbox row);
// rounds close and nights dawn once; the fold equals a fresh replay and
// what a restarted host rebuilds. It returns the games of the store.
func checkEventLog(t *testing.T, st *store.Store, h *killHarness, byRow map[int64]*killMsg,
	errorf func(format string, args ...any), sum *killSummary) []store.Game {
	t.Helper()
	ctx := context.Background()
	sum.finals, sum.closings = map[string]*engine.State{}, map[string][]time.Time{}
	// The event log, one transaction at a time.
	games, err := st.Games(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]int{} // cause -> transactions
	replayed := map[string][]byte{}
	for _, g := range games {
		evs, err := st.Events(ctx, g.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		killsAt := map[int64][]int{}
		for i, k := range h.kills {
			if seq, ok := k.seqs[g.ID]; ok {
				killsAt[seq] = append(killsAt[seq], i)
			}
		}
		var all []engine.Event
		s := &engine.State{}
		walk := &phaseWalk{}
		var overdue []time.Time // deadlines passed while the host was down, not yet applied
		for i := 0; i < len(evs); {
			j := i + 1
			for j < len(evs) && evs[j].Cause == evs[i].Cause && evs[j].At.Equal(evs[i].At) {
				j++
			}
			block := evs[i:j]
			i = j
			cause, now := block[0].Cause, block[0].At
			sum.transactions++
			sum.events += len(block)
			blocks[cause]++
			// What the clock had made due: every transaction applies it
			// first, a deadline's transaction nothing else.
			after := s.Clone()
			var due []engine.Event
			if s.Game != "" {
				due = engine.Tick(after, now)
				// Deadlines applied one after another at the same game
				// time (arrival order stamps a late deadline with the
				// game's last time) read here as one block: every tick
				// due at that instant.
				for cause == "deadline" && len(due) > 0 {
					more := engine.Tick(after, now)
					if len(more) == 0 {
						break
					}
					due = append(due, more...)
				}
			}
			if len(due) > 0 {
				sum.closings[g.ID] = append(sum.closings[g.ID], closingsDue(s, now)...)
			}
			// Commands count at their mail's arrival (D8): a transaction
			// stamped before an overdue deadline rightly comes before it;
			// the first one stamped at or after it must apply it.
			if len(overdue) > 0 && !now.Before(slices.MinFunc(overdue, time.Time.Compare)) {
				if len(due) == 0 {
					errorf("%s: the deadlines %v passed while the host was down, and the next transaction (%s at %v) did not apply them",
						g.ID, overdue, cause, now)
				}
				overdue = nil
			}
			switch {
			case cause == "deadline":
				sum.deadlineTx++
				if err := sameEvents(block, due); err != nil {
					errorf("%s: deadline transaction at event %d is not one tick at %v: %v", g.ID, block[0].Seq, now, err)
				}
			case strings.HasPrefix(cause, "inbox:"):
				if len(block) < len(due) {
					errorf("%s: transaction %s at event %d lacks what the clock made due", g.ID, cause, block[0].Seq)
				} else if err := sameEvents(block[:len(due)], due); err != nil {
					errorf("%s: transaction %s at event %d does not start with what the clock made due: %v", g.ID, cause, block[0].Seq, err)
				}
				row, _ := strconv.ParseInt(strings.TrimPrefix(cause, "inbox:"), 10, 64)
				m := byRow[row]
				if m == nil {
					errorf("%s: events caused by inbox row %d, which holds no message of the test", g.ID, row)
					break
				}
				voted := 0
				for _, se := range block[min(len(due), len(block)):] {
					if se.Type == string(engine.EvVoted) {
						voted++
					}
				}
				want := 0
				if m.vote != "" {
					sum.votes++
					want = expectVote(after, m)
				}
				sum.votesApplied += voted
				if voted != want {
					errorf("%s: message %s (%s voting %q) made %d voted events, want %d", g.ID, m.id, m.voter, m.vote, voted, want)
				}
			default:
				errorf("%s: events with an unknown cause %q", g.ID, cause)
			}
			for _, se := range block {
				e, err := engine.UnmarshalEvent(se.Payload)
				if err != nil {
					t.Fatalf("%s: event %d: %v", g.ID, se.Seq, err)
				}
				if err := walk.step(e); err != nil {
					errorf("%s: event %d (%s, %s): %v", g.ID, se.Seq, se.Type, se.Cause, err)
				}
				if err := s.Fold(e); err != nil {
					t.Fatalf("%s: fold event %d: %v", g.ID, se.Seq, err)
				}
				all = append(all, e)
			}
			// A transaction stamped before an overdue deadline (its mail
			// reached the mailbox before it) may have moved that deadline
			// or done away with it: a round closed early, an extension, the
			// end of the game. Such a deadline is no longer owed.
			overdue = slices.DeleteFunc(overdue, func(dl time.Time) bool {
				next, ok := engine.NextDeadline(s)
				return !ok || next.After(dl)
			})
			// The kills that found the log here: was a deadline due by
			// the time the next host started?
			for _, k := range killsAt[block[len(block)-1].Seq] {
				kr := h.kills[k]
				dl, ok := engine.NextDeadline(s)
				if !ok || kr.restart.IsZero() || dl.After(h.gameTime(kr.restart)) {
					continue
				}
				if dl.After(h.gameTime(kr.at)) {
					sum.passedWhileDown++
				}
				overdue = append(overdue, dl)
			}
		}
		if len(overdue) > 0 {
			errorf("%s: the deadlines %v passed while the host was down and were never applied", g.ID, overdue)
		}
		// The log folded afresh gives the state folded transaction by
		// transaction.
		fresh, err := engine.Replay(all)
		if err != nil {
			t.Fatalf("%s: replay: %v", g.ID, err)
		}
		a, _ := json.Marshal(fresh)
		b, _ := json.Marshal(s)
		if !bytes.Equal(a, b) {
			errorf("%s: replay differs from the fold:\n%s\n%s", g.ID, a, b)
		}
		replayed[g.ID] = a
		sum.finals[g.ID] = fresh
		if fresh.Winner != "" && fresh.Winner != engine.NoWinner {
			if err := checkWinner(fresh); err != nil {
				errorf("%s: %v", g.ID, err)
			}
		}
		sum.games = append(sum.games, fmt.Sprintf("%s: %d events, day %d, %s", g.ID, len(evs), fresh.Day, cmp.Or(string(fresh.Winner), "no winner")))
		if fresh.Phase != engine.EndedPhase {
			errorf("%s: the game is in phase %s at the end", g.ID, fresh.Phase)
		}
	}
	for cause, n := range blocks {
		if strings.HasPrefix(cause, "inbox:") && n != 1 {
			sum.appliedTwice++
			errorf("events caused by %s come in %d transactions", cause, n)
		}
	}
	// What a restarted host rebuilds, snapshots checked against the log,
	// is the fresh replay.
	rebuilt, err := st.RebuildAll(ctx, killFold, true)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	for _, rb := range rebuilt {
		if rb.Stale {
			errorf("%s: the snapshot at %d does not match the fold of the log up to it", rb.Game, rb.FromSnapshot)
		}
		if !bytes.Equal(rb.State, replayed[rb.Game]) {
			errorf("%s: the state rebuilt from the store (snapshot at %d) differs from the replay", rb.Game, rb.FromSnapshot)
		}
	}
	if len(rebuilt) != len(games) {
		errorf("%d games rebuilt, %d in the store", len(rebuilt), len(games))
	}
	return games
}

// closingsDue are the deadlines up to now that close a round or bring the
// dawn in s, each when it fell due.
func closingsDue(s *engine.State, now time.Time) []time.Time {
	var out []time.Time
	c := s.Clone()
	for range 1000 {
		dl, ok := engine.NextDeadline(c)
		if !ok || dl.After(now) {
			break
		}
		for _, e := range engine.Tick(c, dl) {
			if e.Type == engine.EvRoundClosed || e.Type == engine.EvDawn {
				out = append(out, dl)
				break
			}
		}
	}
	return out
}

// expectVote is how many voted events a message whose first line is a
// vote must make, in the state it was applied to (D1–D3, D11).
func expectVote(s *engine.State, m *killMsg) int {
	if s.Phase != engine.DayPhase || s.Paused {
		return 0
	}
	var voter *engine.Player
	for i := range s.Players {
		if s.Players[i].Name == m.voter {
			voter = &s.Players[i]
		}
	}
	if voter == nil || !voter.Alive {
		return 0
	}
	if m.vote == "null" {
		if voter.Vote == engine.NullVote {
			return 0
		}
		return 1
	}
	want := engine.NormalizeName(m.vote)
	target := 0
	var prefixed []int
	for _, slot := range s.Living() {
		n := engine.NormalizeName(s.Player(slot).Name)
		if n == want {
			target = slot
			break
		}
		if strings.HasPrefix(n, want) {
			prefixed = append(prefixed, slot)
		}
	}
	if target == 0 && len(prefixed) == 1 {
		target = prefixed[0]
	}
	if target == 0 || (s.Round == engine.Runoff && !slices.Contains(s.Candidates, target)) || voter.Vote == target {
		return 0
	}
	return 1
}

// sameEvents compares stored events with the engine's, byte for byte.
func sameEvents(stored []store.Event, evs []engine.Event) error {
	if len(stored) != len(evs) {
		var types []string
		for _, e := range evs {
			types = append(types, string(e.Type))
		}
		var got []string
		for _, e := range stored {
			got = append(got, e.Type)
		}
		return fmt.Errorf("stored %v, the engine makes %v", got, types)
	}
	for i, e := range evs {
		b, err := engine.MarshalEvent(e)
		if err != nil {
			return err
		}
		if !bytes.Equal(b, stored[i].Payload) {
			return fmt.Errorf("event %d: stored %s, the engine makes %s", stored[i].Seq, stored[i].Payload, b)
		}
	}
	return nil
}

// phaseWalk follows a game's rounds and nights through its log: a round
// closes once, a night dawns once, a game ends once. A deadline applied
// twice would break one of these.
type phaseWalk struct {
	round, closed bool
	night, dawned bool
	ended         bool
}

func (w *phaseWalk) step(e engine.Event) error {
	if w.ended {
		// After the end only the post-game talk goes on.
		if e.Type == engine.EvPostGameTalk {
			return nil
		}
		return fmt.Errorf("an event after the game ended")
	}
	switch e.Type {
	case engine.EvDayStarted, engine.EvExtraStarted, engine.EvRunoffStarted:
		if w.round && !w.closed || w.night && !w.dawned {
			return fmt.Errorf("a round starts while a round or night is running")
		}
		w.round, w.closed, w.night = true, false, false
	case engine.EvTieExtended:
		if !w.round || w.closed {
			return fmt.Errorf("a tie extended with no round running")
		}
	case engine.EvRoundClosed:
		if !w.round || w.closed {
			return fmt.Errorf("a round closed that was not running (day %d, %s)", e.Day, e.Round)
		}
		w.closed = true
	case engine.EvNightStarted:
		if !w.round || !w.closed {
			return fmt.Errorf("night %d starts before the round closed", e.Day)
		}
		w.round, w.night, w.dawned = false, true, false
	case engine.EvDawn:
		if !w.night || w.dawned {
			return fmt.Errorf("dawn of day %d with no night running", e.Day)
		}
		w.dawned = true
	case engine.EvGameEnded:
		w.ended = true
	}
	return nil
}

// killFold is the host's fold: state JSON in, events folded, state JSON out.
func killFold(id string, state []byte, evs []store.Event) ([]byte, error) {
	s := &engine.State{}
	if state != nil {
		if err := json.Unmarshal(state, s); err != nil {
			return nil, err
		}
	}
	for _, se := range evs {
		e, err := engine.UnmarshalEvent(se.Payload)
		if err != nil {
			return nil, err
		}
		if err := s.Fold(e); err != nil {
			return nil, err
		}
	}
	return json.Marshal(s)
}

func bareID(id string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(id), "<"), ">")
}

func grepLines(data []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, s) && len(out) < 20 {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hostInbox counts the messages in the host's INBOX and those not yet
// flagged \Seen.
func hostInbox(t *testing.T, imapAddr string) (total, unseen int) {
	t.Helper()
	total, unseen, err := hostInboxAt(imapAddr, killPassword)
	if err != nil {
		t.Fatal(err)
	}
	return total, unseen
}

// hostInboxAt counts the messages in the INBOX of user host, whose
// password is pass, and those not yet flagged \Seen.
func hostInboxAt(imapAddr, pass string) (total, unseen int, err error) {
	c, err := imapclient.DialInsecure(imapAddr, nil)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	if err := c.Login("host", pass).Wait(); err != nil {
		return 0, 0, err
	}
	sel, err := c.Select("INBOX", &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		return 0, 0, err
	}
	found, err := c.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return 0, 0, err
	}
	return int(sel.NumMessages), len(found.AllUIDs()), nil
}

// readInbox returns every recorded inbound message by its Message-ID
// (without angle brackets) and reports one recorded twice. Each message is
// shown to see, if set, before its raw bytes are dropped: a flood and a
// 25 MiB message need not stay in memory.
func readInbox(t *testing.T, st *store.Store, errorf func(string, ...any), see func(id string, in store.Inbound)) (rows map[string]store.Inbound, twice int) {
	t.Helper()
	rows = map[string]store.Inbound{}
	for _, o := range []store.Outcome{store.OutcomePending, store.OutcomeApplied, store.OutcomeRefused, store.OutcomeIgnored, store.OutcomeError} {
		ins, err := st.InboundByOutcome(context.Background(), o, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range ins {
			id := bareID(in.MessageID)
			if _, dup := rows[id]; dup {
				twice++
				errorf("message %s is in the inbox twice", id)
			}
			if see != nil {
				see(id, in)
			}
			in.Raw = nil
			rows[id] = in
		}
	}
	return rows, twice
}

// readOutbox returns every outgoing message by its Message-ID (without
// angle brackets) and by its cause, and reports any that was not sent.
func readOutbox(t *testing.T, st *store.Store, errorf func(string, ...any)) (outbox map[string]store.OutMessage, byCause map[string][]store.OutMessage) {
	t.Helper()
	outbox, byCause = map[string]store.OutMessage{}, map[string][]store.OutMessage{}
	for _, status := range []store.OutStatus{store.OutPending, store.OutSending, store.OutSent, store.OutFailed} {
		ms, err := st.OutMessages(context.Background(), status)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if status != store.OutSent {
				errorf("outgoing %s (%s to %v) ends %s: %s", m.MessageID, m.Kind, m.To, status, m.LastError)
			}
			outbox[bareID(m.MessageID)] = m
			byCause[m.Cause] = append(byCause[m.Cause], m)
		}
	}
	return outbox, byCause
}

// checkServeLog reports a panic, a race or an error in serve's log, and
// returns the log for further checks.
func checkServeLog(t *testing.T, path string, errorf func(string, ...any)) []byte {
	t.Helper()
	logData, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"panic:", "fatal error:", "DATA RACE", "level=ERROR"} {
		if bytes.Contains(logData, []byte(bad)) {
			errorf("serve's log holds %q:\n%s", bad, grepLines(logData, bad))
		}
	}
	return logData
}

// checkWinner checks a finished game's winner against who is alive (W1), as
// the demo does, written out again here so that the suites do not take the
// product's word for it.
func checkWinner(s *engine.State) error {
	mafia, others := 0, 0
	for _, p := range s.Players {
		if p.Alive {
			if p.Role == engine.Mafia {
				mafia++
			} else {
				others++
			}
		}
	}
	switch {
	case s.Winner == engine.Town && mafia == 0:
	case s.Winner == engine.MafiaWin && (mafia > others || mafia == 1 && others == 1):
	default:
		return fmt.Errorf("the game ended with %s winning, but %d Mafia and %d others are alive", s.Winner, mafia, others)
	}
	return nil
}
