package host

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/hostkey"
	"github.com/mafiamail/mafiamail/mail/inbound"
	"github.com/mafiamail/mafiamail/store"
)

// harness drives a Host through HandleMessage with mail as players write it,
// on a real store, with a clock the test moves.
type harness struct {
	t    testing.TB
	path string
	st   *store.Store
	h    *Host
	now  time.Time
	uid  uint32
	log  *slog.Logger
	// perHour is the per-sender rate limit, 0 for none.
	perHour int
	// draw is the role draw's random source; nil: crypto/rand.
	draw io.Reader
	// authserv is the authserv-id the host trusts, and send writes a
	// passing Authentication-Results field under it, as a provider that
	// checks its mail does. Empty: the host has none, and mail to its own
	// and the sign-up addresses is unproven.
	authserv string
	// recipientsPerDay is the configured sending budget, 0 for none.
	recipientsPerDay int
	// arrivalOrder opens the host with Config.ArrivalOrder, as serve does.
	arrivalOrder bool
	// key is the host key; nil: tokens and the draw from crypto/rand.
	key *hostkey.Key
}

// harnessAuthServ is the receiving server the harness's host trusts.
const harnessAuthServ = "mx.players.test"

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newLimitedHarness(t, 0)
}

// newLimitedHarness is newHarness with a rate limit of perHour messages an
// hour per sender.
func newLimitedHarness(t testing.TB, perHour int) *harness {
	t.Helper()
	return startHarness(t, perHour, harnessAuthServ)
}

// newUnprovenHarness is newLimitedHarness for a host without an
// authserv-id: it cannot tell who sent mail to its own and the sign-up
// addresses, and holds NEW GAME and JOIN until confirmed (hs.confirm).
func newUnprovenHarness(t testing.TB, perHour int) *harness {
	t.Helper()
	return startHarness(t, perHour, "")
}

// worldDir is where a test's databases live: in memory where the machine
// has a tmpfs. The host syncs every transaction, and the tests commit
// thousands of them; what a sync keeps through a crash is the store's to
// test (store's TestKillChildProcess), not the host's.
func worldDir(t testing.TB) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "mafiamail-host-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

func startHarness(t testing.TB, perHour int, authserv string) *harness {
	t.Helper()
	hs := &harness{t: t, path: filepath.Join(worldDir(t), "host.db"), now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
		perHour: perHour, authserv: authserv}
	hs.open()
	t.Cleanup(func() { hs.st.Close() })
	return hs
}

// confirm replies, as from, to the newest mail to from that asks for a
// confirmation, and returns the confirmation address.
func (hs *harness) confirm(from string) string {
	hs.t.Helper()
	sent := hs.mailTo(from, 0)
	for i := len(sent) - 1; i >= 0; i-- {
		if l := parseLetter(sent[i].Raw); strings.Contains(l.ReplyTo, "-c-") {
			hs.send(from, l.ReplyTo, "yes, that was me")
			return l.ReplyTo
		}
	}
	hs.t.Fatalf("no mail to %s asks for a confirmation", from)
	return ""
}

func (hs *harness) open() {
	hs.t.Helper()
	st, err := store.Open(context.Background(), hs.path, store.Config{Logger: hs.log})
	if err != nil {
		hs.t.Fatal(err)
	}
	if hs.key != nil {
		if _, err := st.UseKey(context.Background(), hs.key, hs.now); err != nil {
			hs.t.Fatal(err)
		}
	}
	h, err := New(context.Background(), Config{Address: "host@example.org", Referees: []string{"ref@example.org"}, Key: hs.key,
		PerSenderPerHour: hs.perHour, AuthServID: hs.authserv, Clock: Clock{Real: func() time.Time { return hs.now }}, Store: st, Log: hs.log,
		Rand: hs.draw, RecipientsPerDay: hs.recipientsPerDay, ArrivalOrder: hs.arrivalOrder})
	if err != nil {
		hs.t.Fatal(err)
	}
	hs.st, hs.h = st, h
}

// restart closes the store and opens a new host on the same database.
func (hs *harness) restart() {
	hs.t.Helper()
	if err := hs.st.Close(); err != nil {
		hs.t.Fatal(err)
	}
	hs.open()
}

// send delivers a message as the watcher would, under the next UID.
func (hs *harness) send(from, to, body string) []byte {
	hs.t.Helper()
	hs.uid++
	raw := []byte(fmt.Sprintf("%sFrom: %s\r\nTo: %s\r\nSubject: game\r\nMessage-ID: <m%d@players.test>\r\n"+
		"Date: Tue, 01 Dec 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		hs.authResults(from), from, to, hs.uid, body))
	hs.deliver(raw)
	return raw
}

// authResults is the Authentication-Results field the harness's
// receiving server writes on mail from from: a DMARC pass for its domain,
// nothing for a host without an authserv-id.
func (hs *harness) authResults(from string) string {
	if hs.authserv == "" {
		return ""
	}
	domain := from
	if a, err := mail.ParseAddress(from); err == nil {
		domain = a.Address
	}
	domain = domain[strings.LastIndexByte(domain, '@')+1:]
	return "Authentication-Results: " + hs.authserv + "; dmarc=pass header.from=" + domain + "\r\n"
}

func (hs *harness) deliver(raw []byte) {
	hs.t.Helper()
	hs.uid++
	if err := hs.h.HandleMessage(context.Background(), "INBOX", 1, hs.uid, raw); err != nil {
		hs.t.Fatalf("handle: %v", err)
	}
	hs.checkSchedule()
}

func (hs *harness) outbox() []store.OutMessage {
	hs.t.Helper()
	ms, err := hs.st.OutMessages(context.Background(), "")
	if err != nil {
		hs.t.Fatal(err)
	}
	return ms
}

// mailTo returns the messages queued for an address since index from.
func (hs *harness) mailTo(addr string, from int) []store.OutMessage {
	var out []store.OutMessage
	for _, m := range hs.outbox()[from:] {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				out = append(out, m)
			}
		}
	}
	return out
}

func (hs *harness) token(game, address string) string {
	hs.t.Helper()
	ps, err := hs.st.Participants(context.Background(), game)
	if err != nil {
		hs.t.Fatal(err)
	}
	for _, p := range ps {
		if strings.EqualFold(p.Address, address) && p.Status == store.StatusActive {
			return p.Token
		}
	}
	hs.t.Fatalf("no participant %s in %s", address, game)
	return ""
}

func (hs *harness) game(id string) *engine.State {
	hs.t.Helper()
	s, ok := hs.h.Game(id)
	if !ok {
		hs.t.Fatalf("no game %s", id)
	}
	return s
}

var players = []string{"Alice", "Bob", "Carol", "Dave", "Erin"}

func addr(name string) string { return strings.ToLower(name) + "@players.test" }

// setUp creates game g1 with five players and starts it.
func (hs *harness) setUp() {
	hs.t.Helper()
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	if len(hs.mailTo("ref@example.org", 0)) != 1 {
		hs.t.Fatalf("the referee got no answer to NEW GAME: %+v", hs.outbox())
	}
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false")
	for _, p := range players {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	if n := len(hs.game("g1").Players); n != 5 {
		hs.t.Fatalf("%d players joined", n)
	}
	hs.send("ref@example.org", ref, "START")
	if s := hs.game("g1"); s.Phase != engine.DayPhase {
		hs.t.Fatalf("phase %s after START", s.Phase)
	}
}

func (hs *harness) thread(name string) string {
	return "host+g1-t-" + hs.token("g1", addr(name)) + "@example.org"
}

func TestGameByMail(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	for _, p := range players {
		roles := 0
		for _, m := range hs.mailTo(addr(p), 0) {
			if m.Kind == "role" {
				roles++
			}
		}
		if roles != 1 {
			t.Errorf("%s got %d role messages", p, roles)
		}
	}
	before := len(hs.outbox())
	raw := hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob\n\nBob has been quiet all day.")
	s := hs.game("g1")
	if s.Player(1).Vote != 2 {
		t.Fatalf("Alice's vote: %d", s.Player(1).Vote)
	}
	// Every player and the referee hear of it in the thread, and Alice
	// gets her reply.
	for _, p := range players {
		if len(hs.mailTo(addr(p), before)) == 0 {
			t.Errorf("%s heard nothing of the vote", p)
		}
	}
	// The same message again (a second delivery, another UID) is not
	// applied twice.
	n := len(hs.outbox())
	hs.deliver(raw)
	if len(hs.outbox()) != n {
		t.Fatalf("a duplicate message caused mail")
	}
	// A forged sender is refused and told at the registered address only.
	before = len(hs.outbox())
	hs.send("mallory@evil.test", hs.thread("Carol"), "VOTE Alice")
	if s := hs.game("g1"); s.Player(3).Vote != 0 {
		t.Fatal("a forged vote counted")
	}
	if len(hs.mailTo("mallory@evil.test", before)) != 0 || len(hs.mailTo(addr("Carol"), before)) != 1 {
		t.Fatalf("refusal notices: %+v", hs.outbox()[before:])
	}
	// A restart rebuilds the same games from the log.
	want := hs.game("g1")
	hs.restart()
	if got := hs.game("g1"); !reflect.DeepEqual(got, want) {
		t.Fatalf("state after restart differs")
	}
}

func TestDeadlinesByClock(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	s := hs.game("g1")
	dl, _ := engine.NextDeadline(s)
	hs.now = dl.Add(time.Minute)
	if err := hs.h.TickDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs.now = hs.game("g1").Deadline.Add(time.Minute)
	for range 5 {
		if err := hs.h.TickDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d, ok := engine.NextDeadline(hs.game("g1")); ok && d.After(hs.now) {
			break
		}
	}
	if s := hs.game("g1"); s.Phase != engine.NightPhase {
		t.Fatalf("phase %s after the deadline", s.Phase)
	}
	// A host that was down past a deadline applies it on start, once.
	dl, _ = engine.NextDeadline(hs.game("g1"))
	hs.now = dl.Add(48 * time.Hour)
	hs.restart()
	if err := hs.h.TickDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	s = hs.game("g1")
	if s.Phase == engine.NightPhase && s.Day == 1 {
		t.Fatalf("the missed night end was not applied")
	}
	evs, err := hs.st.Events(context.Background(), "g1", 0)
	if err != nil {
		t.Fatal(err)
	}
	dawns := 0
	for _, e := range evs {
		if e.Type == string(engine.EvDawn) {
			dawns++
		}
	}
	if dawns != 1 {
		t.Fatalf("%d dawns for one night", dawns)
	}
}

// TestHeldPostNotice: a dead player's discussion-only post is held (C1),
// and both the author and the referee are told.
func TestHeldPostNotice(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	victim := ""
	for _, p := range hs.game("g1").Players {
		if p.Role != engine.Mafia {
			victim = p.Name
		}
	}
	hs.send("ref@example.org", ref, "MODKILL "+victim)
	before := len(hs.outbox())
	hs.send(addr(victim), hs.thread(victim), "I was town, avenge me!")
	if s := hs.game("g1"); len(s.Held) != 1 {
		t.Fatalf("post not held: %+v", s.Held)
	}
	if len(hs.mailTo(addr(victim), before)) != 1 || len(hs.mailTo("ref@example.org", before)) != 1 {
		t.Fatalf("held-post notices: %+v", hs.outbox()[before:])
	}
	for _, p := range players {
		if p != victim && len(hs.mailTo(addr(p), before)) != 0 {
			t.Fatalf("a held post reached %s", p)
		}
	}
	held, err := hs.st.HeldPosts(context.Background(), "g1", store.Held)
	if err != nil || len(held) != 1 || held[0].Number != 1 {
		t.Fatalf("store's held posts: %+v %v", held, err)
	}
	hs.send("ref@example.org", ref, "RELAY 1")
	if held, _ := hs.st.HeldPosts(context.Background(), "g1", store.Relayed); len(held) != 1 {
		t.Fatalf("relayed post not recorded")
	}
}

// TestDigests: a game with a digest interval sends the thread's posts and
// votes as one digest per reader at the interval (T1), also across a restart.
func TestDigests(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.send("ref@example.org", "host@example.org", "NEW GAME g1")
	ref := "host+g1-p-" + hs.token("g1", "ref@example.org") + "@example.org"
	hs.send("ref@example.org", ref, "SETUP players=5 mafia=1 inspectors=1 inspector_knows_mafioso=false digest_interval=2h reminder_before=0")
	for _, p := range players {
		hs.send(addr(p), "host+g1@example.org", "JOIN "+p)
	}
	hs.send("ref@example.org", ref, "START")
	before := len(hs.outbox())
	hs.send(addr("Alice"), hs.thread("Alice"), "Good morning, town.")
	hs.send(addr("Bob"), hs.thread("Bob"), "VOTE Carol")
	for _, m := range hs.outbox()[before:] {
		if m.Kind == "thread" {
			t.Fatalf("thread mail went out at once in a digest game: %s to %v", m.MessageID, m.To)
		}
	}
	hs.restart() // the gathered news survives a restart
	hs.now = hs.now.Add(2*time.Hour + time.Minute)
	if err := hs.h.TickDue(context.Background()); err != nil {
		t.Fatal(err)
	}
	digests := 0
	for _, m := range hs.outbox()[before:] {
		if m.Kind == "thread" { // nothing else went to the thread since, as checked above
			digests++
			if !strings.Contains(string(m.Raw), "Good morning, town.") {
				t.Fatalf("digest without the post:\n%s", m.Raw)
			}
		}
	}
	if digests != 6 { // five players and the referee
		t.Fatalf("%d digests, want one per reader (6)", digests)
	}
}

// TestNoSecretsInLogs: tokens are the players' keys; the host's log, at
// debug level, never shows one.
func TestNoSecretsInLogs(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	hs := &harness{t: t, path: t.TempDir() + "/host.db", now: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC),
		log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), authserv: harnessAuthServ}
	hs.open()
	t.Cleanup(func() { hs.st.Close() })
	hs.setUp()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	hs.send("mallory@evil.test", hs.thread("Carol"), "VOTE Alice")
	hs.restart()
	ps, err := hs.st.Participants(context.Background(), "g1")
	if err != nil || len(ps) < 6 {
		t.Fatalf("participants: %v", err)
	}
	if buf.Len() == 0 {
		t.Fatal("nothing was logged")
	}
	for _, p := range ps {
		if strings.Contains(buf.String(), p.Token) {
			t.Fatalf("the log shows %s's token", p.Name)
		}
	}
}

// TestBounceAndAutoReply: a bounce is counted against the address it names
// and answered by nothing; an out-of-office reply is answered by nothing.
func TestBounceAndAutoReply(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	for _, name := range []string{"38-dsn-bounce-postfix.msg", "33-gmail-vacation.msg"} {
		raw, err := os.ReadFile(filepath.Join("..", "mail", "inbound", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		before := len(hs.outbox())
		hs.deliver(raw)
		if n := len(hs.outbox()); n != before {
			t.Fatalf("%s was answered (%d messages)", name, n-before)
		}
	}
	rec, err := hs.st.PlayerRecord(context.Background(), "gina.rossi@icloud.com")
	if err != nil || rec.Bounces != 1 {
		t.Fatalf("bounce record: %+v %v", rec, err)
	}
	ins, err := hs.st.InboundByOutcome(context.Background(), store.OutcomeIgnored, 10)
	if err != nil || len(ins) != 2 {
		t.Fatalf("both must be recorded as ignored: %d %v", len(ins), err)
	}
}

// TestPoisonMessage: a message that cannot be processed (here a panic
// while handling it) is recorded with the outcome "error" and left alone,
// instead of failing forever; the game goes on.
func TestPoisonMessage(t *testing.T) {
	hs := newHarness(t)
	hs.setUp()
	breakForTest = func(r inbound.Report) {
		if r.Subject == "poison" {
			panic("a bug met on this message")
		}
	}
	t.Cleanup(func() { breakForTest = nil })
	raw := []byte("From: " + addr("Alice") + "\r\nTo: " + hs.thread("Alice") + "\r\nSubject: poison\r\n" +
		"Message-ID: <poison@players.test>\r\n\r\nVOTE Bob\r\n")
	hs.deliver(raw) // fails the test if HandleMessage returns an error
	hs.deliver(raw) // the same message again is a duplicate, not a second failure
	errs, err := hs.st.InboundByOutcome(context.Background(), store.OutcomeError, 10)
	if err != nil || len(errs) != 1 || !strings.Contains(errs[0].Reason, "a bug met on this message") {
		t.Fatalf("error outcomes: %+v %v", errs, err)
	}
	if hs.game("g1").Player(1).Vote != 0 {
		t.Fatal("the poisoned message was applied")
	}
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	if hs.game("g1").Player(1).Vote != 2 {
		t.Fatal("the game did not go on after the poisoned message")
	}
}

// TestFailedDeliveryTellsTheReferee: a message the server refuses for good
// is marked failed in the same transaction that queues the referee's notice.
func TestFailedDeliveryTellsTheReferee(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	ctx := context.Background()
	claimed, err := hs.st.ClaimDue(ctx, hs.now.Add(time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var toAlice store.OutMessage
	for _, m := range claimed {
		if len(m.To) == 1 && m.To[0] == addr("Alice") {
			toAlice = m
		}
	}
	if toAlice.ID == 0 {
		t.Fatal("no mail to Alice")
	}
	before := len(hs.outbox())
	if err := hs.h.Outbox().MarkFailed(ctx, toAlice.ID, "550 5.1.1 no such user"); err != nil {
		t.Fatal(err)
	}
	m, err := hs.st.OutMessageByID(ctx, toAlice.ID)
	if err != nil || m.Status != store.OutFailed {
		t.Fatalf("status %s %v", m.Status, err)
	}
	notices := hs.mailTo("ref@example.org", before)
	if len(notices) != 1 || notices[0].Kind != "referee" || !strings.Contains(string(notices[0].Raw), "no such user") {
		t.Fatalf("referee notices: %+v", notices)
	}
}

// TestNoSilentDrop: a message with no command at the sign-up or the host
// address (a vote sent to the wrong place) gets an answer saying what the
// address understands.
func TestNoSilentDrop(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	for _, to := range []string{"host+g1@example.org", "host@example.org"} {
		before := len(hs.outbox())
		hs.send(addr("Alice"), to, "VOTE Bob")
		got := hs.mailTo(addr("Alice"), before)
		if len(got) != 1 || got[0].Kind != "error" {
			t.Fatalf("%s: answers %+v", to, got)
		}
		if s := hs.game("g1"); s.Player(1).Vote != 0 {
			t.Fatalf("%s: a vote counted", to)
		}
	}
}

// TestRateLimitSurvivesRestart: a sender's allowance is saved with each
// message, so a host that restarts, or is killed, does not hand a flooder a
// fresh one; and a message seen twice costs it only once.
func TestRateLimitSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hs := newLimitedHarness(t, 40) // ten at once, then one every 90 s
	hs.setUp()
	refused := func() []store.Inbound {
		t.Helper()
		ms, err := hs.st.InboundByOutcome(ctx, store.OutcomeRefused, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	// Her seat's allowance is ten (her JOIN drew on her address's, not
	// on it); one of them delivered twice costs nothing.
	for i := range 10 {
		raw := hs.send(addr("Alice"), hs.thread("Alice"), fmt.Sprintf("VOTE Bob\r\n\r\npost %d", i))
		if i == 0 {
			hs.deliver(raw)
		}
	}
	if r := refused(); len(r) != 0 {
		t.Fatalf("refused within the allowance: %+v", r)
	}
	notices := len(hs.mailTo(addr("Alice"), 0))
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Carol")
	if r := refused(); len(r) != 1 || r[0].Reason != inbound.ReasonRateLimited {
		t.Fatalf("the eleventh message: refused %+v, want one rate-limited", r)
	}
	if n := len(hs.mailTo(addr("Alice"), 0)) - notices; n != 1 {
		t.Fatalf("%d notices for the first refusal, want 1", n)
	}

	hs.restart()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Carol")
	if r := refused(); len(r) != 2 || r[1].Reason != inbound.ReasonRateLimited {
		t.Fatalf("after a restart: %d refused, want a second rate-limited message", len(r))
	}
	if n := len(hs.mailTo(addr("Alice"), 0)) - notices; n != 1 {
		t.Fatalf("%d notices after the restart, want still 1: the host forgot it had told her", n)
	}
	if v := hs.game("g1").Player(1).Vote; v != 2 {
		t.Fatalf("Alice votes for seat %d, want Bob (2): a refused vote was applied", v)
	}

	// The allowance fills again as time passes, restart or not.
	hs.now = hs.now.Add(90 * time.Second)
	hs.restart()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Carol")
	if r := refused(); len(r) != 2 {
		t.Fatalf("90 s later: %d refused, want the message applied", len(r))
	}
	if v := hs.game("g1").Player(1).Vote; v != 3 {
		t.Fatalf("Alice votes for seat %d, want Carol (3)", v)
	}
}

// A message over the size limit is refused from its header alone, as the
// watcher hands it over without fetching the body, and its sender is told.
func TestOversizedFromHeader(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hs := newHarness(t)
	hs.setUp()
	header := []byte(hs.authResults(addr("Alice")) + "From: " + addr("Alice") + "\r\nTo: " + hs.thread("Alice") + "\r\nSubject: holiday photos\r\n" +
		"Message-ID: <big@players.test>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n")
	before := len(hs.outbox())
	hs.uid++
	if err := hs.h.HandleOversized(ctx, "INBOX", 1, hs.uid, header, 30<<20); err != nil {
		t.Fatal(err)
	}
	refused, err := hs.st.InboundByOutcome(ctx, store.OutcomeRefused, 0)
	if err != nil || len(refused) != 1 || refused[0].Reason != inbound.ReasonTooLarge || string(refused[0].Raw) != string(header) {
		t.Fatalf("%d refused (%v); want the header recorded as too large", len(refused), err)
	}
	notices := hs.mailTo(addr("Alice"), before)
	if len(notices) != 1 || notices[0].Kind != "error" || !strings.Contains(string(notices[0].Raw), "30.0 MiB") {
		t.Fatalf("%d messages to Alice; want one notice that names the size", len(notices))
	}
	// Cut short yet within the limit: it cannot be read, and says so.
	hs.uid++
	if err := hs.h.HandleOversized(ctx, "INBOX", 1, hs.uid, bytes.Replace(header, []byte("<big@"), []byte("<cut@"), 1), 2000); err != nil {
		t.Fatal(err)
	}
	refused, _ = hs.st.InboundByOutcome(ctx, store.OutcomeRefused, 0)
	if len(refused) != 2 || refused[1].Reason != inbound.ReasonMalformed {
		t.Fatalf("a message cut short within the limit: %d refused, want a second one, as malformed", len(refused))
	}
}

// Mail composed after a restart is never dated before the game's mail
// composed before it, even when the clock reads earlier (a machine whose
// clock was set back while the host was down).
func TestDatesDoNotGoBackAcrossARestart(t *testing.T) {
	t.Parallel()
	hs := newHarness(t)
	hs.setUp()
	hs.send(addr("Alice"), hs.thread("Alice"), "VOTE Bob")
	last := func(from int) (time.Time, int) {
		var latest time.Time
		msgs := hs.outbox()[from:]
		for _, m := range msgs {
			if d := headerDate(m.Raw); d.After(latest) {
				latest = d
			}
		}
		return latest, len(msgs)
	}
	before, _ := last(0)
	n := len(hs.outbox())
	hs.now = hs.now.Add(-10 * time.Second)
	hs.restart()
	hs.send(addr("Bob"), hs.thread("Bob"), "VOTE Carol")
	for _, m := range hs.outbox()[n:] {
		if d := headerDate(m.Raw); d.Before(before) {
			t.Fatalf("after the restart %s is dated %v, before the last mail before it (%v)", m.MessageID, d, before)
		}
	}
	if _, count := last(n); count == 0 {
		t.Fatal("the vote after the restart sent no mail")
	}
}
