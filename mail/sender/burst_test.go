package sender_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/internal/testkit/testseed"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// A provider's sending limit is a wait, never a loss (docs/mail.md,
// "Sending limits"). The burst tests drive the refusal at each stage of
// the transaction (at MAIL, at some of the RCPTs of a message, after
// DATA), at each point of a burst of mail (its first message, one in the
// middle, its last), over one connection and over several at once, with
// the host not told the limit: every copy of every message, and of the
// referee's notices of the holds, must reach its reader exactly once.

// burstCase is one way a burst of mail meets the provider's limit.
type burstCase struct {
	stage mailserver.LimitStage
	// point is the message of the burst the limit is reached at: the
	// first, one in the middle, or the last.
	point string
	conns int
}

func (c burstCase) String() string {
	return fmt.Sprintf("%s/%s/%d conns", [...]string{"at MAIL", "at RCPT", "after DATA"}[c.stage], c.point, c.conns)
}

// burstCases are every stage at every point, over one connection and over
// four at once.
func burstCases() []burstCase {
	var cs []burstCase
	for _, stage := range []mailserver.LimitStage{mailserver.LimitAtMail, mailserver.LimitAtRcpt, mailserver.LimitAtData} {
		for _, point := range []string{"first", "middle", "last"} {
			for _, conns := range []int{1, 4} {
				cs = append(cs, burstCase{stage: stage, point: point, conns: conns})
			}
		}
	}
	return cs
}

// burstReaders are the readers of the burst's mail; the referee gets the
// notices of the holds.
var burstReaders = []string{"p0", "p1", "p2", "p3", "p4", "p5"}

const burstReferee = "referee"

// provider is a mailbox provider with a sending limit that the sender
// logs in to as "host" (password "pw"): the embedded server, delivering
// into its own mailboxes or relaying to a real Postfix.
type provider struct {
	addr string
	// address is the address of a reader (burstReaders, burstReferee).
	address func(reader string) string
	limit   *mailserver.SendLimit
	// delivered returns, for each Message-ID and reader ("<id> reader"),
	// how many copies reached the reader's mailbox. It is called once
	// the outbox is empty, and may report mail of other runs and the
	// account's other mail as well, which the check leaves out.
	delivered func(t *testing.T) map[string]int
}

// embeddedProvider is the embedded server with lim, delivering locally.
func embeddedProvider(t *testing.T, lim *mailserver.SendLimit) provider {
	var mu sync.Mutex
	got := map[string]int{}
	srv := startServer(t, mailserver.Config{AutoCreateUsers: true, Users: map[string]string{"host": "pw"},
		SendLimit: lim, OnMessage: func(d mailserver.Delivery) {
			if !d.Delivered {
				return
			}
			id := headerID(d.Data)
			mu.Lock()
			defer mu.Unlock()
			for _, to := range d.To {
				local, _, _ := strings.Cut(strings.ToLower(to), "@")
				got[id+" "+local]++
			}
		}})
	return provider{addr: srv.SMTPAddr(), limit: lim,
		address: func(reader string) string { return reader + "@" + srv.Domain() },
		delivered: func(*testing.T) map[string]int {
			mu.Lock()
			defer mu.Unlock()
			return maps.Clone(got)
		}}
}

// runBurst plays one case with the choices of rng: mail the host sent
// before fills the provider's window so that the burst reaches the limit
// at the case's point (and, at RCPT, part way through the recipients of
// that message), with now and then a little mail of the account's other
// clients that the host cannot know of; then the burst is queued at once.
// The window is window long; the host's day is the same. The host's
// messages are numbered from base on (outMsg), so that runs whose mail
// ends in the same mailboxes keep apart.
func runBurst(t *testing.T, c burstCase, rng *rand.Rand, base int, window time.Duration, mk func(*testing.T, *mailserver.SendLimit) provider) {
	ctx := context.Background()
	// The burst: messages of one to three readers each, so that a
	// refusal at RCPT may come after some of a message's recipients
	// were accepted.
	n := 6 + rng.IntN(9)
	burst := make([][]string, n)
	total := 0
	for i := range burst {
		k := 1 + rng.IntN(3)
		perm := rng.Perm(len(burstReaders))
		for _, j := range perm[:k] {
			burst[i] = append(burst[i], burstReaders[j])
		}
		total += k
	}
	// The limit takes the whole burst in a fresh window.
	limit := total
	// The recipients of the burst that fit before the limit is reached.
	at := 0
	switch c.point {
	case "middle":
		at = n/3 + rng.IntN(n/3)
	case "last":
		at = n - 1
	}
	room := 0
	for _, to := range burst[:at] {
		room += len(to)
	}
	switch {
	case c.point == "first":
	case c.stage != mailserver.LimitAtMail:
		// Part of the message the limit is reached at fits too: its
		// first recipients are accepted, or its data is refused for
		// the rest.
		room += rng.IntN(len(burst[at]))
	default:
		// At MAIL the provider refuses a message only once the window
		// is full, and takes all the recipients of one it admits; at
		// that moment it has counted one recipient of each message
		// whose MAIL it took on another connection and whose RCPTs
		// have not come yet. The connections may also hand the burst
		// over in another order than it was queued (one reader's mail
		// waits for their last). So the window must be full before the
		// largest message, whenever it comes, with the recipients of a
		// message on each other connection not yet counted.
		largest := 0
		for _, to := range burst {
			largest = max(largest, len(to))
		}
		room = max(min(room, total-largest-(c.conns-1)*(largest-1)), 0)
	}
	// The window holds limit-room before the burst: most of it sent by
	// the host, some now and then by the account's other mail clients.
	other := 0
	if rng.IntN(3) == 0 {
		other = rng.IntN((limit-room)/4 + 1)
	}
	known := limit - room - other
	t.Logf("%d messages, %d recipients, the limit reached at message %d with room for %d; the window holds %d sent by the host and %d by others",
		n, total, at, room, known, other)

	// The provider's clock stands still until the sender holds the
	// outbox: the host's earlier mail stays in its window however slowly
	// the burst goes on a loaded machine, so that the limit is met where
	// the case says; then it runs on, the window freeing as the host's
	// earlier mail ages out.
	pc := &pausedClock{}
	lim := &mailserver.SendLimit{Recipients: limit, Window: window, Stage: c.stage, Clock: pc.now}
	prov := mk(t, lim)
	addr := prov.address

	st := openStore(t)
	var mu sync.Mutex
	var hs holds
	var fails failures
	notices := 0
	cfg := testConfig(t, prov.addr)
	cfg.Logger = testlog.New(t, slog.LevelInfo)
	cfg.Username, cfg.Password = "host", "pw"
	cfg.Ledger = sendstore.Ledger(st)
	cfg.Budget.Day = window
	cfg.ProbeEvery, cfg.MaxProbe = window/8, window/2
	cfg.Connections = c.conns
	cfg.BatchSize = 2 + rng.IntN(7)
	cfg.OnFailed = fails.record
	// As the host does: the hold is recorded and the referee told in one
	// transaction, the notice queued first in line; the resume ends it.
	cfg.OnHold = func(h sender.Hold) {
		pc.resume()
		hs.hold(h)
		err := st.Update(ctx, func(tx *store.Tx) error {
			started, err := tx.BeginHold(ctx, time.Now(), h.Reply)
			if err != nil || !started {
				return err
			}
			mu.Lock()
			notices++
			m := outMsg(base+noticeBase+notices, addr(burstReferee))
			mu.Unlock()
			_, err = tx.Enqueue(ctx, m, time.Now())
			return err
		})
		if err != nil {
			t.Errorf("record the hold: %v", err)
		}
	}
	cfg.OnResume = func(h sender.Hold) {
		hs.resume(h)
		if _, err := st.EndHold(ctx); err != nil {
			t.Errorf("end the hold: %v", err)
		}
	}
	s, err := sender.New(cfg, sendstore.Outbox(st), time.Now)
	if err != nil {
		t.Fatal(err)
	}

	// Mail is queued a group at a time, as the host commits it.
	seq := 0
	enqueue := func(group [][]string) {
		t.Helper()
		err := st.Update(ctx, func(tx *store.Tx) error {
			for _, to := range group {
				seq++
				var full []string
				for _, r := range to {
					full = append(full, addr(r))
				}
				m := outMsg(base+seq, full...)
				m.Priority = rng.IntN(store.PriorityReceipt + 1)
				if _, err := tx.Enqueue(ctx, m, time.Now()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The host's earlier mail, one reader a message.
	earlier := make([][]string, known)
	for i := range earlier {
		earlier[i] = []string{burstReaders[rng.IntN(len(burstReaders))]}
	}
	enqueue(earlier)
	if known > 0 {
		if err := s.SendDue(ctx); err != nil {
			t.Fatal(err)
		}
		if u := lim.Used("host"); u != known || lim.Refused() != 0 {
			t.Fatalf("the host's earlier mail: the provider counts %d recipients and refused %d times, want %d and none", u, lim.Refused(), known)
		}
	}
	if other > 0 {
		fill(t, prov.addr, addr(burstReferee), other)
	}
	enqueue(burst)
	runDrains(t, s)
	mailtest.WaitFor(t, "the outbox drained", max(30*window, waitLong), 5*time.Millisecond, func() bool {
		w, err := st.Waiting(ctx)
		return err == nil && len(w) == 0
	})

	if lim.Refused() == 0 {
		t.Fatalf("the provider never refused: the case did not meet the limit")
	}
	if b, _ := hs.counts(); b == 0 {
		t.Errorf("the sender never held the outbox, though the provider refused %d times", lim.Refused())
	}
	for _, f := range fails.list() {
		t.Errorf("OnFailed for message %d: %v", f.msg.ID, f.err)
	}
	all, err := st.OutMessages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	got := prov.delivered(t)
	want := map[string]bool{}
	for _, m := range all {
		if m.Status != store.OutSent {
			t.Errorf("message %d (%v) ended %s: %s", m.ID, m.To, m.Status, m.LastError)
		}
		for _, to := range m.To {
			local, _, _ := strings.Cut(strings.ToLower(to), "@")
			k := m.MessageID + " " + local
			want[k] = true
			if got[k] != 1 {
				t.Errorf("message %d reached %s %d times, want once", m.ID, local, got[k])
			}
		}
	}
	// Mail of this run: the host's messages, numbered from base on.
	ours := func(id string) bool {
		var n int
		_, err := fmt.Sscanf(id, "<m%d.g1@host.example.org>", &n)
		return err == nil && n >= base && n < base+runNumbers
	}
	var extra []string
	for k, v := range got {
		if !want[k] && ours(strings.Fields(k)[0]) {
			extra = append(extra, fmt.Sprintf("%s (%d)", k, v))
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		t.Errorf("delivered but never queued: %v", extra)
	}
	b, r := hs.counts()
	t.Logf("%d messages sent, %d refusals by the provider, %d holds (%d resumed), %d notices to the referee; stats %+v",
		len(all), lim.Refused(), b, r, notices, s.Stats())
}

// pausedClock is a provider's clock that stands still from its first
// reading until resume, and then runs on at the pace of real time.
type pausedClock struct {
	mu      sync.Mutex
	stopped time.Time // when it stopped; zero before the first reading
	lag     time.Duration
	running bool
}

func (c *pausedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped.IsZero() {
		c.stopped = time.Now()
	}
	if !c.running {
		return c.stopped
	}
	return time.Now().Add(-c.lag)
}

func (c *pausedClock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return
	}
	c.running = true
	if !c.stopped.IsZero() {
		c.lag = time.Since(c.stopped)
	}
}

// The numbers of a run's messages: the notices of its holds from
// noticeBase on, all below runNumbers.
const (
	noticeBase = 10000
	runNumbers = 100000
)

// runDrains runs the sender's passes until the test ends, as Run does.
func runDrains(t *testing.T, s *sender.Sender) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// fill sends n recipients' worth of mail as the host's account from
// another client, one recipient a message, so that the provider counts
// them and the host cannot know.
func fill(t *testing.T, smtpAddr, to string, n int) {
	t.Helper()
	c, err := smtp.Dial(smtpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", "host", "pw")); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("<filler.%d.%d@example.org>", i, time.Now().UnixNano())
		msg := "From: host@example.org\r\nTo: " + to + "\r\nSubject: elsewhere\r\nMessage-ID: " + id + "\r\n\r\nSent from a phone.\r\n"
		if err := c.SendMail("host@example.org", []string{to}, strings.NewReader(msg)); err != nil {
			t.Fatalf("the account's other mail: %v", err)
		}
	}
	if err := c.Quit(); err != nil {
		t.Logf("QUIT: %v", err)
	}
}

// The fast run: every case once, six at a time, on the embedded server, with
// a window of 150 milliseconds; MAFIAMAIL_SEED replays one run.
func TestLimitInABurstIsAWait(t *testing.T) {
	t.Parallel() // its cases wait for the provider's windows; other tests run meanwhile
	seed := testseed.Seed(t)
	cases := burstCases()
	concurrently(t, len(cases), 6, func(i int) string { return cases[i].String() }, func(t *testing.T, i int) {
		rng := rand.New(rand.NewPCG(seed, uint64(i)))
		runBurst(t, cases[i], rng, 0, 150*time.Millisecond, embeddedProvider)
	})
}
