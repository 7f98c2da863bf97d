package sender_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mafiamail/mafiamail/internal/testkit/mailtest"
	"github.com/mafiamail/mafiamail/internal/testkit/testlog"
	"github.com/mafiamail/mafiamail/mail/mailserver"
	"github.com/mafiamail/mafiamail/mail/sender"
	"github.com/mafiamail/mafiamail/service/sendstore"
	"github.com/mafiamail/mafiamail/store"
)

// waitLong bounds every wait: generous, for a loaded two-core machine; a
// passing test never waits this long.
const waitLong = 30 * time.Second

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// memOutbox is an Outbox in memory that enforces the life of a message as
// the store does: only claimed messages may be marked, and only once.
type memOutbox struct {
	mu     sync.Mutex
	msgs   []*store.OutMessage
	errors []string // misuse seen
}

func (o *memOutbox) add(ms ...store.OutMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range ms {
		m.ID = int64(len(o.msgs) + 1)
		m.Status = store.OutPending
		m.CreatedAt = time.Now()
		m.NextAttempt = m.CreatedAt
		o.msgs = append(o.msgs, &m)
	}
}

func (o *memOutbox) ClaimDue(_ context.Context, now time.Time, limit int) ([]sender.Message, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var due []*store.OutMessage
	for _, m := range o.msgs {
		if m.Status == store.OutPending && !m.NextAttempt.After(now) {
			due = append(due, m)
		}
	}
	slices.SortStableFunc(due, func(a, b *store.OutMessage) int { return a.NextAttempt.Compare(b.NextAttempt) })
	var out []store.OutMessage
	for _, m := range due[:min(len(due), limit)] {
		m.Status = store.OutSending
		out = append(out, *m)
	}
	return sendstore.Messages(out), nil
}

func (o *memOutbox) mark(id int64, f func(m *store.OutMessage)) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if id < 1 || int(id) > len(o.msgs) {
		o.errors = append(o.errors, fmt.Sprintf("mark of unknown message %d", id))
		return store.ErrNotFound
	}
	m := o.msgs[id-1]
	if m.Status != store.OutSending {
		o.errors = append(o.errors, fmt.Sprintf("mark of message %d in status %s", id, m.Status))
		return fmt.Errorf("message %d is %s, not claimed", id, m.Status)
	}
	m.Attempts++
	f(m)
	return nil
}

func (o *memOutbox) MarkAllSent(_ context.Context, ids []int64, now time.Time) error {
	for _, id := range ids {
		if err := o.mark(id, func(m *store.OutMessage) { m.Status, m.SentAt, m.LastError = store.OutSent, now, "" }); err != nil {
			return err
		}
	}
	return nil
}

func (o *memOutbox) MarkRetry(_ context.Context, id int64, next time.Time, errText string) error {
	return o.mark(id, func(m *store.OutMessage) { m.Status, m.NextAttempt, m.LastError = store.OutPending, next, errText })
}

func (o *memOutbox) Release(_ context.Context, id int64, next time.Time, why string) error {
	return o.mark(id, func(m *store.OutMessage) { m.Status, m.NextAttempt, m.LastError = store.OutPending, next, why })
}

func (o *memOutbox) MarkFailed(_ context.Context, id int64, errText string) error {
	return o.mark(id, func(m *store.OutMessage) { m.Status, m.LastError = store.OutFailed, errText })
}

func (o *memOutbox) NextAttempt(context.Context) (time.Time, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var next time.Time
	ok := false
	for _, m := range o.msgs {
		if m.Status == store.OutPending && (!ok || m.NextAttempt.Before(next)) {
			next, ok = m.NextAttempt, true
		}
	}
	return next, ok, nil
}

func (o *memOutbox) NextAttemptAfter(_ context.Context, t time.Time) (time.Time, bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var next time.Time
	ok := false
	for _, m := range o.msgs {
		if m.Status == store.OutPending && m.NextAttempt.After(t) && (!ok || m.NextAttempt.Before(next)) {
			next, ok = m.NextAttempt, true
		}
	}
	return next, ok, nil
}

func (o *memOutbox) snapshot() []store.OutMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []store.OutMessage
	for _, m := range o.msgs {
		out = append(out, *m)
	}
	return out
}

func (o *memOutbox) count(status store.OutStatus) int {
	n := 0
	for _, m := range o.snapshot() {
		if m.Status == status {
			n++
		}
	}
	return n
}

func (o *memOutbox) misuse() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.errors...)
}

// outMsg is the host's message number n to the given recipients.
func outMsg(n int, to ...string) store.OutMessage {
	id := fmt.Sprintf("<m%d.g1@host.example.org>", n)
	raw := strings.ReplaceAll(fmt.Sprintf(`From: Mafia Host <host@example.org>
To: %s
Subject: Day 1 tally %d
Message-ID: %s
Auto-Submitted: auto-generated
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Tally %d.
.a line that starts with a dot
`, strings.Join(to, ", "), n, id, n), "\n", "\r\n")
	return store.OutMessage{MessageID: id, Game: "g1", Kind: "tally", From: "host@example.org", To: to, Raw: []byte(raw)}
}

// deliveries records what SMTP servers received, across restarts.
type deliveries struct {
	mu   sync.Mutex
	msgs []mailserver.Delivery
}

func (d *deliveries) add(m mailserver.Delivery) {
	d.mu.Lock()
	d.msgs = append(d.msgs, m)
	d.mu.Unlock()
}

// delivered returns, per Message-ID, the recipients of the transactions
// that delivered it (one entry per transaction).
func (d *deliveries) delivered() map[string][][]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string][][]string{}
	for _, m := range d.msgs {
		if !m.Delivered {
			continue
		}
		id := headerID(m.Data)
		out[id] = append(out[id], m.To)
	}
	return out
}

func (d *deliveries) all() []mailserver.Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]mailserver.Delivery(nil), d.msgs...)
}

func headerID(raw []byte) string {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "unparsable: " + err.Error()
	}
	return m.Header.Get("Message-Id")
}

func startServer(t *testing.T, opts mailserver.Config) *mailserver.Server {
	t.Helper()
	return mailtest.StartServer(t, opts)
}

func testConfig(t *testing.T, smtpAddr string) sender.Config {
	return sender.Config{
		URL:            "smtp://" + smtpAddr,
		Helo:           "host.example.org",
		Logger:         testlog.New(t, slog.LevelDebug),
		MinBackoff:     5 * time.Millisecond,
		MaxBackoff:     100 * time.Millisecond,
		CommandTimeout: 10 * time.Second,
		BatchSize:      4,
	}
}

// failures collects OnFailed calls.
type failures struct {
	mu    sync.Mutex
	calls []failed
}

type failed struct {
	msg sender.Message
	err error
}

func (f *failures) record(m sender.Message, err error) {
	f.mu.Lock()
	f.calls = append(f.calls, failed{m, err})
	f.mu.Unlock()
}

func (f *failures) list() []failed {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]failed(nil), f.calls...)
	slices.SortFunc(out, func(a, b failed) int { return cmp.Compare(a.msg.ID, b.msg.ID) })
	return out
}

func runSender(t *testing.T, cfg sender.Config, ob sender.Outbox) *sender.Sender {
	t.Helper()
	s, err := sender.New(cfg, ob, time.Now)
	if err != nil {
		t.Fatalf("sender.New: %v", err)
	}
	mailtest.RunDuringTest(t, waitLong, s.Run)
	return s
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mailtest.WaitFor(t, what, waitLong, 5*time.Millisecond, cond)
}

// concurrently runs n subtests, named by name, at most atOnce of them at a
// time, each in a goroutine of its own. The cases it is for wait on a
// provider's clock, not on the processor: as t.Parallel subtests they
// would queue behind -parallel, which is the number of cores, and the
// waits would add up instead of overlapping.
func concurrently(t *testing.T, n, atOnce int, name func(i int) string, run func(t *testing.T, i int)) {
	t.Helper()
	slots := make(chan struct{}, atOnce)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(name(i), func(t *testing.T) { run(t, i) })
		})
	}
	wg.Wait()
}
