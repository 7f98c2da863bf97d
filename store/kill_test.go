package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net/mail"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/store"
)

// The kill test runs a small but real mail pipeline in a child process (this
// test binary, re-executed) and SIGKILLs it at random instants while
// commands stream in over SMTP. The pipeline is the one the host uses:
//
//	IMAP: fetch unseen mail with BODY.PEEK[]
//	  -> one store transaction per message: inbox row + "applied" event
//	     (+ a snapshot now and then) + a confirmation in the outbox
//	  -> STORE \Seen, only after the commit
//	  -> send the outbox over SMTP -> mark sent
//
// At the end every command must have been applied exactly once (the event
// log), every confirmation handed to the SMTP server and delivered at least
// once, and every copy of a confirmation must carry the same Message-ID and
// bytes as its outbox row.

const (
	childEnv  = "MAFIAMAIL_KILLTEST_CHILD"
	killGame  = "kt"
	hostUser  = "host"
	hostPass  = "hostpw"
	player    = "player@example.org"
	hostAddr  = "host@example.org"
	snapEvery = 10
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runKillChild())
	}
	os.Exit(m.Run())
}

// killState is the child's game state: how many commands were applied and a
// hash chain over them, so that any difference in order or content shows.
type killState struct {
	N     int    `json:"n"`
	Chain string `json:"chain"`
}

type appliedPayload struct {
	Cmd int `json:"cmd"`
}

func killFold(_ string, state []byte, evs []store.Event) ([]byte, error) {
	var st killState
	if state != nil {
		if err := json.Unmarshal(state, &st); err != nil {
			return nil, err
		}
	}
	for _, e := range evs {
		if e.Type != "applied" {
			return nil, fmt.Errorf("event %d: unexpected type %q", e.Seq, e.Type)
		}
		var p appliedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			return nil, fmt.Errorf("event %d: %w", e.Seq, err)
		}
		h := sha256.Sum256([]byte(fmt.Sprintf("%s/%d", st.Chain, p.Cmd)))
		st.N, st.Chain = st.N+1, hex.EncodeToString(h[:])
	}
	return json.Marshal(st)
}

var cmdRe = regexp.MustCompile(`(?m)^CMD (\d+)\r?$`)

// ---------------------------------------------------------------- child

func runKillChild() int {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := killChild(ctx, log); err != nil && ctx.Err() == nil {
		log.Error("child failed", "err", err)
		return 3
	}
	return 0
}

type child struct {
	s     *store.Store
	log   *slog.Logger
	imap  string
	smtp  string
	state []byte
	seq   int64
}

func killChild(ctx context.Context, log *slog.Logger) error {
	s, err := store.Open(ctx, os.Getenv("KT_DB"), store.Config{Logger: log})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer s.Close()
	c := &child{s: s, log: log, imap: os.Getenv("KT_IMAP"), smtp: os.Getenv("KT_SMTP")}

	err = s.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.Game(ctx, killGame)
		if errors.Is(err, store.ErrNotFound) {
			return tx.CreateGame(ctx, killGame, "running", time.Now())
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create game: %w", err)
	}
	// The state after a restart must be what it was before the kill: the
	// snapshot is verified against a fold of the whole log.
	rb, err := s.Rebuild(ctx, killGame, killFold, true)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if rb.Stale {
		return fmt.Errorf("rebuild: the snapshot at %d does not match the log", rb.FromSnapshot)
	}
	c.state, c.seq = rb.State, rb.Seq

	for ctx.Err() == nil {
		if err := c.session(ctx); err != nil && ctx.Err() == nil {
			log.Warn("IMAP session ended", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// session is one IMAP connection: process unseen mail and send the outbox,
// until the connection breaks.
func (c *child) session(ctx context.Context) error {
	cl, err := imapclient.DialInsecure(c.imap, nil)
	if err != nil {
		return err
	}
	defer cl.Close()
	if err := cl.Login(hostUser, hostPass).Wait(); err != nil {
		return err
	}
	sel, err := cl.Select("INBOX", nil).Wait()
	if err != nil {
		return err
	}
	c.log.Info(sessionReady)
	for ctx.Err() == nil {
		n, err := c.processUnseen(ctx, cl, sel.UIDValidity)
		if err != nil {
			return err
		}
		sent, err := c.sendOutbox(ctx)
		if err != nil {
			c.log.Warn("sending", "err", err)
		}
		if n == 0 && sent == 0 {
			select {
			case <-ctx.Done():
			case <-c.s.OutboxSignal():
			case <-time.After(15 * time.Millisecond):
			}
		}
	}
	return nil
}

func (c *child) processUnseen(ctx context.Context, cl *imapclient.Client, uidValidity uint32) (int, error) {
	found, err := cl.UIDSearch(&imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagSeen}}, nil).Wait()
	if err != nil {
		return 0, fmt.Errorf("search: %w", err)
	}
	uids := found.AllUIDs()
	if len(uids) == 0 {
		return 0, nil
	}
	if len(uids) > 50 {
		uids = uids[:50]
	}
	msgs, err := cl.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{
		UID:         true,
		BodySection: []*imap.FetchItemBodySection{{Peek: true}},
	}).Collect()
	if err != nil {
		return 0, fmt.Errorf("fetch: %w", err)
	}
	for _, m := range msgs {
		raw := m.FindBodySection(&imap.FetchItemBodySection{Peek: true})
		if err := c.apply(ctx, uidValidity, uint32(m.UID), raw); err != nil {
			return 0, err
		}
		// \Seen only after the commit: a kill before this line makes the
		// message come back, and the store then knows it.
		if err := cl.Store(imap.UIDSetNum(m.UID), &imap.StoreFlags{
			Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagSeen},
		}, nil).Close(); err != nil {
			return 0, fmt.Errorf("store \\Seen: %w", err)
		}
	}
	return len(msgs), nil
}

// apply is the transaction of one inbound message.
func (c *child) apply(ctx context.Context, uidValidity, uid uint32, raw []byte) error {
	parsed, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("parse UID %d: %w", uid, err)
	}
	msgID := parsed.Header.Get("Message-Id")
	var newState []byte
	var newSeq int64
	err = c.s.Update(ctx, func(tx *store.Tx) error {
		rec, dup, err := tx.RecordInbound(ctx, store.Inbound{
			Mailbox: "INBOX", UIDValidity: uidValidity, UID: uid, MessageID: msgID, Raw: raw, ReceivedAt: time.Now(),
		})
		if err != nil {
			return err
		}
		if dup != store.NotDuplicate {
			by := map[store.Duplicate]string{store.DuplicateUID: "uid", store.DuplicateMessageID: "message-id"}[dup]
			c.log.Info("inbound already recorded", "by", by, "uid", uid, "message_id", msgID)
			return nil
		}
		m := cmdRe.FindSubmatch(raw)
		if m == nil {
			return tx.SetInboundOutcome(ctx, rec.ID, store.OutcomeRefused, "no command", "")
		}
		cmd, _ := strconv.Atoi(string(m[1]))
		cause := fmt.Sprintf("inbox:%d", rec.ID)
		evs, err := tx.AppendEvents(ctx, killGame, c.seq, cause, store.NewEvent{
			Type: "applied", Version: 1, Payload: mustJSON(appliedPayload{Cmd: cmd}), At: time.Now(),
		})
		if err != nil {
			return err
		}
		if newState, err = killFold(killGame, c.state, evs); err != nil {
			return err
		}
		newSeq = evs[len(evs)-1].Seq
		if newSeq%snapEvery == 0 {
			if err := tx.SaveSnapshot(ctx, killGame, newSeq, newState, time.Now()); err != nil {
				return err
			}
		}
		confirm := confirmation(cmd)
		if _, err := tx.Enqueue(ctx, store.OutMessage{
			MessageID: confirm.id, Game: killGame, Kind: "confirm", From: hostAddr, To: []string{player},
			Raw: confirm.raw, Cause: cause,
		}, time.Now()); err != nil {
			return err
		}
		return tx.SetInboundOutcome(ctx, rec.ID, store.OutcomeApplied, "", killGame)
	})
	if err != nil {
		return fmt.Errorf("apply UID %d: %w", uid, err)
	}
	if newState != nil {
		c.state, c.seq = newState, newSeq
	}
	return nil
}

type outgoing struct {
	id  string
	raw []byte
}

// confirmation builds the reply to a command, with a Message-ID made once,
// inside the transaction: if that transaction is lost, so is the ID.
func confirmation(cmd int) outgoing {
	b := make([]byte, 8)
	rand.Read(b)
	id := fmt.Sprintf("<confirm-%d-%s@example.org>", cmd, hex.EncodeToString(b))
	raw := fmt.Sprintf("From: %s\r\nTo: %s\r\nMessage-ID: %s\r\nSubject: applied %d\r\nX-Command: %d\r\n\r\nAPPLIED %d\r\n",
		hostAddr, player, id, cmd, cmd, cmd)
	return outgoing{id: id, raw: []byte(raw)}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sendOutbox sends what is due; a failed attempt is retried shortly.
func (c *child) sendOutbox(ctx context.Context) (int, error) {
	due, err := c.s.ClaimDue(ctx, time.Now(), 50)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	var sc *smtp.Client
	defer func() {
		if sc != nil {
			sc.Close()
		}
	}()
	sent := 0
	for _, m := range due {
		if sc == nil {
			if sc, err = dialSMTP(c.smtp); err != nil {
				sc = nil
			}
		}
		if err == nil {
			err = sc.SendMail(m.From, m.To, bytes.NewReader(m.Raw))
		}
		if err == nil {
			if err := c.s.MarkSent(ctx, m.ID, time.Now()); err != nil {
				return sent, err
			}
			sent++
			continue
		}
		// 4xx and network errors alike: try again soon, on a new
		// connection. (This test injects no permanent failures.)
		if err := c.s.MarkRetry(ctx, m.ID, time.Now().Add(30*time.Millisecond), err.Error()); err != nil {
			return sent, err
		}
		if sc != nil {
			sc.Close()
			sc = nil
		}
		err = nil
	}
	return sent, nil
}

func dialSMTP(addr string) (*smtp.Client, error) {
	sc, err := smtp.Dial(addr)
	if err != nil {
		return nil, err
	}
	sc.CommandTimeout = 30 * time.Second
	sc.SubmissionTimeout = 30 * time.Second
	if err := sc.Auth(sasl.NewPlainClient("", hostUser, hostPass)); err != nil {
		sc.Close()
		return nil, err
	}
	return sc, nil
}

// ---------------------------------------------------------------- parent

// sessionReady is what a child logs once it has opened the database and
// the mailbox: from then on a kill can land in the middle of its work.
const sessionReady = "session ready"

// lockedBuffer is a child's stderr, read by the test while the child runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// childProc is one run of the child.
type childProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	err    error
}

func startChild(t *testing.T, env []string) *childProc {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), env...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	p := &childProc{cmd: cmd, stderr: &stderr, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

// waitReady waits until the child has opened the database and the mailbox.
func (p *childProc) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(p.stderr.String(), sessionReady) {
		if p.exitedOnItsOwn() {
			t.Fatalf("the child exited by itself (%v):\n%s", p.err, p.stderr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child did not get ready:\n%s", p.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// exitedOnItsOwn reports a child that stopped before it was told to.
func (p *childProc) exitedOnItsOwn() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *childProc) kill(t *testing.T) {
	t.Helper()
	if p.exitedOnItsOwn() {
		t.Fatalf("the child exited by itself (%v):\n%s", p.err, p.stderr)
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the child did not die after SIGKILL")
	}
	var ee *exec.ExitError
	if !errors.As(p.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, not by SIGKILL:\n%s", p.err, p.stderr)
	}
}

// killCounts is how many commands TestKillChildProcess streams and how
// many times at least it kills the child meanwhile. The run is bound by
// the pacing of the stream and by each child's start, not by work: with
// the tag integration, which CI runs, it makes the full 300 commands and
// 50 kills (some 14 seconds); the everyday run makes 100 and 20, every
// kind of fault and both mailbox rebuilds included, in a third of that;
// -short fewer still.
func killCounts() (commands, minKills int) {
	switch {
	case testing.Short():
		return 80, 10
	case integration:
		return 300, 50
	}
	return 100, 20
}

func TestKillChildProcess(t *testing.T) {
	t.Parallel() // the package's longest test, bound by waits: the other parallel tests run meanwhile
	commands, minKills := killCounts()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "kill.db")

	seed := testseed.Seed(t)
	rng := mrand.New(mrand.NewPCG(seed, seed>>1))
	var rngMu sync.Mutex
	random := func(n int) int {
		rngMu.Lock()
		defer rngMu.Unlock()
		return rng.IntN(n)
	}

	srv, err := mailserver.Start(mailserver.Config{
		Users:  map[string]string{hostUser: hostPass, "player": "playerpw"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		// The SMTP server misbehaves for the host's mail: refusals,
		// shutdowns and connections dropped before or after delivery.
		Fault: func(m mailserver.Delivery) mailserver.Fault {
			if m.From != hostAddr {
				return mailserver.FaultNone
			}
			switch r := random(100); {
			case r < 8:
				return mailserver.FaultTempFail
			case r < 11:
				return mailserver.FaultShutdown
			case r < 15:
				return mailserver.FaultDropBeforeDelivery
			case r < 21:
				return mailserver.FaultDropAfterDelivery
			}
			return mailserver.FaultNone
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	env := []string{childEnv + "=1", "KT_DB=" + dbPath, "KT_IMAP=" + srv.IMAPAddr(), "KT_SMTP=" + srv.SMTPAddr()}

	// The stream of commands, with two mailbox rebuilds (new UIDVALIDITY,
	// all mail unseen again) along the way.
	streamDone := make(chan error, 1)
	go func() {
		streamDone <- streamCommands(srv, commands, random)
	}()

	kills := 0
	var stderrs []string
	proc := startChild(t, env)
	streaming := true
	for streaming || kills < minKills {
		// Each child gets to work before it is killed: on a loaded machine
		// (the race detector, other tests) its start alone can outlast the
		// random delay, and then no child would ever get anything done.
		proc.waitReady(t)
		time.Sleep(time.Duration(5+random(400)) * time.Millisecond)
		proc.kill(t)
		stderrs = append(stderrs, proc.stderr.String())
		kills++
		proc = startChild(t, env)
		select {
		case err := <-streamDone:
			if err != nil {
				t.Fatalf("streaming commands: %v", err)
			}
			streaming = false
		default:
		}
	}
	t.Logf("%d kills; all %d commands sent", kills, commands)

	// Let the last child finish the work, then stop it gracefully.
	deadline := time.Now().Add(90 * time.Second)
	for !finished(t, srv, dbPath, commands) {
		if proc.exitedOnItsOwn() {
			t.Fatalf("the child exited by itself (%v):\n%s", proc.err, proc.stderr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipeline did not finish:\n%s", proc.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	proc.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-proc.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the child ignored SIGTERM")
	}
	// Exit status 0, or death by SIGTERM if it came before the child had
	// installed its handler; anything else is a failure of the child.
	var ee *exec.ExitError
	if proc.err != nil && !(errors.As(proc.err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM) {
		t.Fatalf("the last child failed: %v\n%s", proc.err, proc.stderr)
	}
	stderrs = append(stderrs, proc.stderr.String())

	verifyKillRun(t, srv, dbPath, commands, strings.Join(stderrs, ""))
}

// streamCommands sends the commands to the host, paced, and rebuilds the
// host's mailbox twice on the way.
func streamCommands(srv *mailserver.Server, n int, random func(int) int) error {
	for i := range n {
		if i == n/3 || i == 2*n/3 {
			// Rebuild only once some command is known to be committed
			// (its confirmation went out): then at least one old
			// message must be recognized by its Message-ID.
			if err := waitForConfirmation(srv); err != nil {
				return err
			}
			if _, err := srv.ResetMailbox(hostUser); err != nil {
				return err
			}
		}
		raw := fmt.Sprintf("From: %s\r\nTo: host+%s@example.org\r\nMessage-ID: <cmd-%d@example.org>\r\nSubject: command %d\r\n\r\nCMD %d\r\n",
			player, killGame, i, i, i)
		// The parent's own mail is never faulted, but retry anyway.
		var err error
		for try := 0; try < 50; try++ {
			if err = sendOnce(srv.SMTPAddr(), raw); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("command %d: %w", i, err)
		}
		time.Sleep(time.Duration(random(60)) * time.Millisecond)
	}
	return nil
}

func waitForConfirmation(srv *mailserver.Server) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range srv.Messages() {
			if m.Delivered && m.From == hostAddr {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("no command was confirmed within a minute")
}

func sendOnce(addr, raw string) error {
	sc, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer sc.Close()
	return sc.SendMail(player, []string{"host+" + killGame + "@example.org"}, strings.NewReader(raw))
}

// finished reports whether every command was applied and confirmed and the
// host's mailbox holds no unseen mail.
func finished(t *testing.T, srv *mailserver.Server, dbPath string, commands int) bool {
	t.Helper()
	confirmed := map[int]bool{}
	for _, m := range srv.Messages() {
		if m.Delivered && m.From == hostAddr {
			if c, ok := commandOf(m.Data); ok {
				confirmed[c] = true
			}
		}
	}
	if len(confirmed) < commands {
		return false
	}
	ctx := context.Background()
	s, err := store.OpenReadOnly(ctx, dbPath, store.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return false // e.g. caught mid-migration; look again later
	}
	defer s.Close()
	// Pending and being sent in one snapshot (see Waiting): a restart
	// puts the killed child's claims back to pending.
	waiting, err := s.Waiting(ctx)
	if err != nil || len(waiting) > 0 {
		return false
	}
	cl, err := imapclient.DialInsecure(srv.IMAPAddr(), nil)
	if err != nil {
		return false
	}
	defer cl.Close()
	if err := cl.Login(hostUser, hostPass).Wait(); err != nil {
		return false
	}
	st, err := cl.Status("INBOX", &imap.StatusOptions{NumUnseen: true}).Wait()
	return err == nil && st.NumUnseen != nil && *st.NumUnseen == 0
}

var xCommandRe = regexp.MustCompile(`(?m)^X-Command: (\d+)\r$`)

func commandOf(raw []byte) (int, bool) {
	m := xCommandRe.FindSubmatch(raw)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(string(m[1]))
	return n, err == nil
}

func messageIDOf(t *testing.T, raw []byte) string {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("recorded message does not parse: %v", err)
	}
	return m.Header.Get("Message-Id")
}

func verifyKillRun(t *testing.T, srv *mailserver.Server, dbPath string, commands int, childLogs string) {
	ctx := context.Background()
	s, err := store.Open(ctx, dbPath, store.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatalf("open the store after the run: %v", err)
	}
	defer s.Close()

	// Exactly once: one "applied" event per command, none for anything else.
	evs, err := s.Events(ctx, killGame, 0)
	if err != nil {
		t.Fatal(err)
	}
	applied := map[int]int{}
	for _, e := range evs {
		var p appliedPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		applied[p.Cmd]++
	}
	for i := range commands {
		if applied[i] != 1 {
			t.Errorf("command %d applied %d times", i, applied[i])
		}
	}
	if len(evs) != commands {
		t.Errorf("%d events for %d commands", len(evs), commands)
	}
	inbound, err := s.InboundByOutcome(ctx, store.OutcomeApplied, 0)
	if err != nil || len(inbound) != commands {
		t.Errorf("%d inbound rows applied (err %v), want %d", len(inbound), err, commands)
	}
	if pending, _ := s.InboundByOutcome(ctx, store.OutcomePending, 0); len(pending) != 0 {
		t.Errorf("%d inbound rows left pending", len(pending))
	}

	// The state rebuilt from snapshot + tail equals the fold of the log.
	rb, err := s.Rebuild(ctx, killGame, killFold, true)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if rb.Stale {
		t.Errorf("the snapshot at %d does not match the log", rb.FromSnapshot)
	}
	var st killState
	json.Unmarshal(rb.State, &st)
	if st.N != commands || rb.Seq != int64(commands) {
		t.Errorf("rebuilt state %+v at seq %d, want %d commands", st, rb.Seq, commands)
	}

	// At least once, same Message-ID: the outbox has one confirmation per
	// command; every copy the SMTP server saw matches it byte for byte.
	out, err := s.OutMessages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	outByCmd := map[int]store.OutMessage{}
	for _, m := range out {
		c, ok := commandOf(m.Raw)
		if !ok {
			t.Fatalf("outbox row %d has no X-Command", m.ID)
		}
		if _, dup := outByCmd[c]; dup {
			t.Errorf("command %d has two outbox rows", c)
		}
		outByCmd[c] = m
		if m.Status != store.OutSent {
			t.Errorf("outbox row for command %d is %s", c, m.Status)
		}
	}
	if len(outByCmd) != commands {
		t.Errorf("%d outbox rows, want %d", len(outByCmd), commands)
	}
	handed := map[int]int{}
	delivered := map[int]int{}
	droppedAfter := map[int]bool{}
	faults := map[mailserver.Fault]int{}
	for _, m := range srv.Messages() {
		if m.From != hostAddr {
			continue
		}
		faults[m.Fault]++
		c, ok := commandOf(m.Data)
		if !ok {
			t.Fatalf("the SMTP server got a message without X-Command:\n%s", m.Data)
		}
		row, known := outByCmd[c]
		if !known {
			t.Errorf("the SMTP server got a confirmation of command %d that the outbox does not have", c)
			continue
		}
		if id := messageIDOf(t, m.Data); id != row.MessageID || !bytes.Equal(m.Data, row.Raw) {
			t.Errorf("a copy for command %d has Message-ID %s, the outbox row %s (bytes equal: %v)",
				c, id, row.MessageID, bytes.Equal(m.Data, row.Raw))
		}
		handed[c]++
		if m.Delivered {
			delivered[c]++
		}
		if m.Fault == mailserver.FaultDropAfterDelivery {
			droppedAfter[c] = true
		}
	}
	dupDelivered, dupByKill := 0, 0
	for i := range commands {
		if handed[i] == 0 || delivered[i] == 0 {
			t.Errorf("command %d: handed to SMTP %d times, delivered %d times", i, handed[i], delivered[i])
		}
		if delivered[i] > 1 {
			dupDelivered++
			if !droppedAfter[i] {
				dupByKill++
			}
		}
	}
	t.Logf("SMTP transactions by fault: %v", faults)
	t.Logf("confirmations delivered more than once (same Message-ID): %d of %d, %d of them after a kill between hand-off and MarkSent",
		dupDelivered, commands, dupByKill)
	t.Logf("inbound duplicates recognized: by UID %d, by Message-ID %d",
		strings.Count(childLogs, "by=uid"), strings.Count(childLogs, "by=message-id"))
	t.Logf("restarts that found mail claimed but not marked by the killed run: %d",
		strings.Count(childLogs, "claimed by a previous run"))
	if strings.Count(childLogs, "by=message-id") == 0 {
		t.Errorf("the mailbox rebuilds re-presented old mail, yet no duplicate was recognized by Message-ID")
	}
}
