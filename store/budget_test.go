package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Under a tight budget mail leaves by priority, and within a priority in
// the order it was queued: a secret (a role mail, a night result) is never sent after a
// post queued later than it, even when the budget lets only some go; a
// budget's claim stops at the first message that does not fit, so nothing
// overtakes what was queued before it. What was sent is counted from the
// store, so the count survives reopening it.
func TestOutboxPrioritiesAndBudget(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "budget.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	type q struct {
		kind     string
		priority int
		to       int
	}
	queued := []q{
		{"thread", PriorityThread, 1}, {"confirm", PriorityReceipt, 1}, {"thread", PriorityThread, 1},
		{"role", PriorityGame, 1}, {"tally", PriorityNotice, 1}, {"thread", PriorityThread, 1},
		{"dawn", PriorityGame, 1}, {"thread", PriorityThread, 2},
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i, m := range queued {
			id := fmt.Sprintf("<m%d@host>", i)
			// Each message to recipients of its own: priority orders
			// mail to different recipients, never one recipient's.
			to := []string{fmt.Sprintf("r%d@example.org", i), fmt.Sprintf("s%d@example.org", i)}[:m.to]
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: m.kind, From: "host@example.org",
				To: to, Raw: rawMail(id, "x"), Priority: m.priority}, t0); err != nil {
				return err
			}
		}
		return nil
	})
	var order []string
	claim := func(recipients int) []OutMessage {
		t.Helper()
		var ms []OutMessage
		update(t, s, func(ctx context.Context, tx *Tx) (err error) {
			ms, err = tx.ClaimDueWithin(ctx, t0, 10, Room{Recipients: recipients, Messages: -1})
			return err
		})
		for _, m := range ms {
			order = append(order, m.Kind)
			if err := s.MarkSent(ctx, m.ID, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
		return ms
	}
	if got := claim(3); len(got) != 3 {
		t.Fatalf("claimed %d within a room of 3, want 3", len(got))
	}
	claim(3)
	// The last post has two recipients and the room one: it waits, and
	// the receipt behind it does not go instead.
	if got := claim(1); len(got) != 0 {
		t.Fatalf("claimed %+v within a room of 1; the next message has two recipients", got)
	}
	// A room of five takes all that is left, so it leaves in the order
	// it was queued: the receipt, then the post.
	claim(5)
	want := []string{"role", "dawn", "tally", "thread", "thread", "thread", "confirm", "thread"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("sent in the order %v, want %v", order, want)
	}
	// A post queued after a secret never leaves before it.
	pos := map[string]int{}
	for i, k := range order {
		if _, ok := pos[k]; !ok {
			pos[k] = i
		}
	}
	if pos["role"] > pos["thread"] || pos["dawn"] > pos["thread"] {
		t.Errorf("a secret was sent after a post: %v", order)
	}

	s.Close()
	s = openAt(t, path)
	sent, err := s.SentSince(ctx, t0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range sent {
		n += x.Recipients
	}
	if len(sent) != len(queued) || n != len(queued)+1 {
		t.Errorf("after reopening, %d messages to %d recipients are counted as sent; want %d to %d", len(sent), n, len(queued), len(queued)+1)
	}
	if err := s.LearnLimit(ctx, 300, t0); err != nil {
		t.Fatal(err)
	}
	if started, err := s.BeginHold(ctx, t0, "550 5.4.5"); err != nil || !started {
		t.Fatalf("BeginHold: %v %v", started, err)
	}
	if started, _ := s.BeginHold(ctx, t0.Add(time.Hour), "550 5.4.5"); started {
		t.Errorf("a second BeginHold started a hold while one was under way")
	}
	s.Close()
	s = openAt(t, path)
	l, err := s.SendingLimit(ctx)
	if err != nil || l.Learned != 300 || !l.HeldSince.Equal(t0) {
		t.Errorf("after reopening: %+v, %v; want the learned 300 and the hold since %v", l, err, t0)
	}
	if since, err := s.EndHold(ctx); err != nil || !since.Equal(t0) {
		t.Errorf("EndHold: %v %v", since, err)
	}
}

// With no budget a claim reads the queue no further than the messages it
// takes: a long queue (a backlog's answers) is not read, its recipients
// decoded, a chunk at a time for every claim. A row further on whose
// recipients cannot be read shows it: a claim that read it would fail.
// The claims take the queue in order, with a message being sent holding
// back the later mail to its recipients.
func TestClaimWithoutABudgetReadsNoFurtherThanItTakes(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "early.db"))
	mustCreateGame(t, s, "g1")
	var queued []string
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i := range 120 {
			id := fmt.Sprintf("<m%03d@host>", i)
			queued = append(queued, id)
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
				To: []string{fmt.Sprintf("p%d@example.org", i%40)}, Raw: rawMail(id, "x")}, t0); err != nil {
				return err
			}
		}
		_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET rcpts = '[1]' WHERE id = (SELECT max(id) FROM outbox)`)
		return err
	})
	first, err := s.ClaimDue(ctx, t0, 30)
	if err != nil || !slices.Equal(messageIDs(first), queued[:30]) {
		t.Fatalf("first claim of 30: %v (%v), want %v", messageIDs(first), err, queued[:30])
	}
	// The first 30 are being sent: they hold back the mail to p0..p29
	// queued after them, and the next claim takes the mail to p30..p39
	// alone, as far as the queue goes before the unreadable row.
	var want []string
	for i := 30; i < 119; i++ {
		if i%40 >= 30 {
			want = append(want, queued[i])
		}
	}
	second, err := s.ClaimDue(ctx, t0, len(want))
	if err != nil || !slices.Equal(messageIDs(second), want) {
		t.Fatalf("second claim of %d: %v (%v), want %v", len(want), messageIDs(second), err, want)
	}
	// Reaching the unreadable row fails the claim: the row is read only
	// when the claim needs it.
	if err := s.MarkAllSent(ctx, append(idsOf(first), idsOf(second)...), t0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ClaimDue(ctx, t0, 200); err == nil {
		t.Errorf("a claim of the whole queue read past the unreadable row: %d claimed", len(got))
	}
}

// A batch's record of mail sent marks each message sent once, an id
// named twice included, with its attempt counted and its last error
// cleared; an id that is not in the outbox fails the whole record, and
// no message of it is marked.
func TestMarkAllSentRecordsTheBatchOrNothing(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "sent.db"))
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i := range 4 {
			id := fmt.Sprintf("<s%d@host>", i)
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
				To: []string{fmt.Sprintf("p%d@example.org", i)}, Raw: rawMail(id, "x")}, t0); err != nil {
				return err
			}
		}
		return nil
	})
	claimed, err := s.ClaimDue(ctx, t0, 10)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	if err := s.MarkRetry(ctx, claimed[0].ID, t0, "421 busy"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimDue(ctx, t0, 1); err != nil {
		t.Fatal(err)
	}
	ids := idsOf(claimed)
	if err := s.MarkAllSent(ctx, append(ids[:2:2], 9999), t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("a record naming an unknown message: %v, want ErrNotFound", err)
	}
	if sent, err := s.OutMessages(ctx, OutSent); err != nil || len(sent) != 0 {
		t.Errorf("a failed record marked %d messages sent (%v)", len(sent), err)
	}
	at := t0.Add(time.Minute)
	if err := s.MarkAllSent(ctx, append(ids, ids[1]), at); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		m, err := s.OutMessageByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		attempts := 1
		if i == 0 {
			attempts = 2 // the retry counted one
		}
		if m.Status != OutSent || m.Attempts != attempts || !m.SentAt.Equal(at) || m.LastError != "" {
			t.Errorf("%s: %s, %d attempts, sent at %v, last error %q; want sent, %d attempts, at %v, no error",
				m.MessageID, m.Status, m.Attempts, m.SentAt, m.LastError, attempts, at)
		}
	}
}

// messageIDs lists the Message-IDs of ms.
func messageIDs(ms []OutMessage) []string {
	var got []string
	for _, m := range ms {
		got = append(got, m.MessageID)
	}
	return got
}

// idsOf lists the outbox ids of ms.
func idsOf(ms []OutMessage) []int64 {
	var out []int64
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// TestOutboxKeepsEachRecipientsOrder: mail is handed over to each
// recipient in the order it was queued, whatever its priority; while the
// budget has room for all that is due, everyone's mail goes in the order
// it was queued; under a tight budget an urgent message takes the mail queued before it to the same recipient along,
// ahead of less urgent mail to others; and a message waiting for a retry
// holds back the later mail to its recipient, and only to them, unless
// its retry lies more than MaxOrderWait away.
func TestOutboxKeepsEachRecipientsOrder(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "order.db"))
	mustCreateGame(t, s, "g1")
	queue := func(id, kind, to string, priority int) int64 {
		t.Helper()
		var n int64
		update(t, s, func(ctx context.Context, tx *Tx) (err error) {
			n, err = tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: kind, From: "host@example.org",
				To: []string{to}, Raw: rawMail(id, "x"), Priority: priority}, t0)
			return err
		})
		return n
	}
	queue("<digest@host>", "thread", "a@example.org", PriorityThread)
	queue("<tally@host>", "tally", "b@example.org", PriorityNotice)
	queue("<receipt@host>", "confirm", "A@example.org", PriorityReceipt)
	queue("<close@host>", "thread", "a@example.org", PriorityGame)
	release := func(ms []OutMessage) {
		t.Helper()
		for _, m := range ms {
			if err := s.MarkRetry(ctx, m.ID, t0, "released"); err != nil {
				t.Fatal(err)
			}
		}
	}
	// With no budget, or one with room for all of it, mail leaves in the
	// order it was queued: the receipt does not wait behind the close.
	inQueue := []string{"<digest@host>", "<tally@host>", "<receipt@host>", "<close@host>"}
	claimed, err := s.ClaimDue(ctx, t0, 10)
	if err != nil || fmt.Sprint(messageIDs(claimed)) != fmt.Sprint(inQueue) {
		t.Errorf("claimed %v (%v) with no budget, want %v", messageIDs(claimed), err, inQueue)
	}
	release(claimed)
	roomy, err := s.ClaimDueWithin(ctx, t0, 10, Room{Recipients: 4, Messages: 4})
	if err != nil || fmt.Sprint(messageIDs(roomy)) != fmt.Sprint(inQueue) {
		t.Errorf("claimed %v (%v) within a room for all of it, want %v", messageIDs(roomy), err, inQueue)
	}
	release(roomy)
	// A tight budget goes by priority, and the close takes the digest
	// and the receipt to the same reader along, ahead of the tally. The
	// room cuts that order, never reorders it.
	if part, err := s.ClaimDueWithin(ctx, t0, 10, Room{Recipients: 3, Messages: -1}); err != nil ||
		fmt.Sprint(messageIDs(part)) != fmt.Sprint([]string{"<digest@host>", "<receipt@host>", "<close@host>"}) {
		t.Errorf("claimed %v (%v) within a room of 3 recipients, want the digest, the receipt and the close", messageIDs(part), err)
	} else {
		release(part)
	}
	if part, err := s.ClaimDueWithin(ctx, t0, 10, Room{Recipients: -1, Messages: 2}); err != nil ||
		fmt.Sprint(messageIDs(part)) != fmt.Sprint([]string{"<digest@host>", "<receipt@host>"}) {
		t.Errorf("claimed %v (%v) within a room of 2 messages, want the digest and the receipt", messageIDs(part), err)
	} else {
		release(part)
	}
	// The digest's server asks to try later: the close waits for it, the
	// other recipient's mail does not.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET status = 'sent' WHERE message_id = '<receipt@host>'`)
		return err
	})
	retryAt := func(at time.Time) {
		t.Helper()
		update(t, s, func(ctx context.Context, tx *Tx) error {
			_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET status = 'pending', next_attempt = ? WHERE message_id = '<digest@host>'`,
				toNanos(at))
			return err
		})
	}
	retryAt(t0.Add(40 * time.Second))
	later, err := s.ClaimDue(ctx, t0.Add(10*time.Second), 10)
	if err != nil || len(later) != 1 || later[0].MessageID != "<tally@host>" {
		t.Errorf("with the digest waiting for a retry, claimed %+v (%v), want only the other recipient's tally", later, err)
	}
	again, err := s.ClaimDue(ctx, t0.Add(40*time.Second), 10)
	if err != nil || len(again) != 2 || again[0].MessageID != "<digest@host>" || again[1].MessageID != "<close@host>" {
		t.Errorf("once the digest is due again, claimed %+v (%v), want the digest, then the close", again, err)
	}
	// A failure that lasts: a retry more than MaxOrderWait away holds
	// back nothing, so the close is not stuck behind it.
	for _, m := range again {
		if err := s.MarkRetry(ctx, m.ID, t0.Add(40*time.Second), "released"); err != nil {
			t.Fatal(err)
		}
	}
	retryAt(t0.Add(40*time.Second + MaxOrderWait + time.Hour))
	stuck, err := s.ClaimDue(ctx, t0.Add(40*time.Second), 10)
	if err != nil || len(stuck) != 1 || stuck[0].MessageID != "<close@host>" {
		t.Errorf("with the digest's retry an hour out, claimed %+v (%v), want the close", stuck, err)
	}
}

// A claimed message put back without an attempt counts none: mail
// released again and again behind a failing message to the same reader
// builds up no backoff of its own.
func TestReleaseCountsNoAttempt(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "release.db"))
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, err := tx.Enqueue(ctx, OutMessage{MessageID: "<m@host>", Game: "g1", Kind: "thread", From: "host@example.org",
			To: []string{"a@example.org"}, Raw: rawMail("<m@host>", "x"), Priority: PriorityThread}, t0)
		return err
	})
	attempts := func() int {
		t.Helper()
		ms, err := s.OutMessages(ctx, "")
		if err != nil || len(ms) != 1 {
			t.Fatalf("outbox: %v %v", ms, err)
		}
		return ms[0].Attempts
	}
	for range 3 {
		claimed, err := s.ClaimDue(ctx, t0, 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		if err := s.Release(ctx, claimed[0].ID, t0, "not attempted"); err != nil {
			t.Fatal(err)
		}
	}
	if n := attempts(); n != 0 {
		t.Fatalf("%d attempts after three releases, want 0", n)
	}
	claimed, _ := s.ClaimDue(ctx, t0, 10)
	if err := s.MarkRetry(ctx, claimed[0].ID, t0, "451"); err != nil {
		t.Fatal(err)
	}
	if n := attempts(); n != 1 {
		t.Fatalf("%d attempts after a failed one, want 1", n)
	}
}

// A claim reads a long queue only as far as it must (claimable's early
// stop), and what it takes keeps the outbox's promises as a claim that
// reads the whole queue does: no message goes ahead of a more urgent one,
// each recipient's mail goes in the order it was queued, whole, and a
// queue of one priority is claimed exactly as a whole read would. The
// queues are of every shape (priorities, messages waiting for a retry
// near or far, messages being sent, shared recipients). Where the queue
// ends in a row whose recipients cannot be read, a claim that reads it
// whole fails, so one that succeeds has stopped early.
func TestClaimThatStopsEarlyKeepsTheOutboxsPromises(t *testing.T) {
	t.Parallel() // runs with TestKillChildProcess, which mostly waits
	for seed := range uint64(9) {
		// kind 0: one priority; 1: mixed priorities early on, one
		// further on; 2: urgent messages far down the queue.
		kind := seed % 3
		rng := rand.New(rand.NewPCG(seed, 3))
		s := openAt(t, filepath.Join(t.TempDir(), fmt.Sprintf("claim%d.db", seed)))
		mustCreateGame(t, s, "g1")
		const queued = 1500
		rcpts := map[int64][]string{}
		update(t, s, func(ctx context.Context, tx *Tx) error {
			for i := range queued {
				id := fmt.Sprintf("<m%d@host>", i)
				p := PriorityThread
				switch {
				case kind == 1 && i < 200 && rng.IntN(5) == 0:
					p = rng.IntN(PriorityReceipt + 1)
				case kind == 2 && i > 1200 && rng.IntN(20) == 0:
					p = rng.IntN(PriorityReceipt + 1)
				}
				to := []string{fmt.Sprintf("p%d@example.org", rng.IntN(60))}
				if rng.IntN(10) == 0 {
					to = append(to, fmt.Sprintf("p%d@example.org", rng.IntN(60)))
				}
				n, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
					To: to, Raw: rawMail(id, "x"), Priority: p}, t0)
				if err != nil {
					return err
				}
				rcpts[n] = to
				switch rng.IntN(30) {
				case 0:
					_, err = tx.q.ExecContext(ctx, `UPDATE outbox SET status = 'sending' WHERE id = ?`, n)
				case 1:
					_, err = tx.q.ExecContext(ctx, `UPDATE outbox SET next_attempt = ? WHERE id = ?`, toNanos(t0.Add(30*time.Second)), n)
				case 2:
					_, err = tx.q.ExecContext(ctx, `UPDATE outbox SET next_attempt = ? WHERE id = ?`, toNanos(t0.Add(time.Hour)), n)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		// A budget with no room left is tight whatever is due, so the
		// claim goes by priority.
		tight := Room{Recipients: 0, Messages: -1}
		var whole, wholeInQueue []candidate
		update(t, s, func(ctx context.Context, tx *Tx) (err error) {
			if whole, err = tx.claimable(ctx, t0, 1<<30, tight); err != nil {
				return err
			}
			wholeInQueue, err = tx.claimable(ctx, t0, 1<<30, Unlimited)
			return err
		})
		check := func(wants ...int) {
			for _, want := range wants {
				update(t, s, func(ctx context.Context, tx *Tx) error {
					part, err := tx.claimable(ctx, t0, want, tight)
					if err != nil {
						t.Errorf("seed %d (kind %d), claim of %d: %v", seed, kind, want, err)
						return nil
					}
					// With no budget the claim is the queue's first want
					// claimable messages, exactly.
					inQueue, err := tx.claimable(ctx, t0, want, Unlimited)
					if n := min(want, len(wholeInQueue)); err != nil || len(inQueue) < n || !slices.Equal(inQueue[:n], wholeInQueue[:n]) {
						t.Errorf("seed %d (kind %d), claim of %d with no budget: %v, not the queue's first", seed, kind, want, err)
					}
					if err := keepsPromises(part, whole, want, rcpts); err != nil {
						t.Errorf("seed %d (kind %d), claim of %d: %v", seed, kind, want, err)
					}
					n := min(want, len(whole))
					if kind == 0 && !slices.Equal(part[:min(n, len(part))], whole[:n]) {
						t.Errorf("seed %d (one priority), claim of %d: not what a whole read takes\n%v\n%v", seed, want, part[:min(n, len(part))], whole[:n])
					}
					return nil
				})
			}
		}
		check(1, 10, 50, 300)
		if kind != 2 {
			// A claim of a few must stop long before the end.
			update(t, s, func(ctx context.Context, tx *Tx) error {
				_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET rcpts = '[1]' WHERE id = (SELECT max(id) FROM outbox)`)
				return err
			})
			check(1, 10, 50)
		}
	}
}

// keepsPromises checks the first want of a claim against the ranking of
// the whole queue: as many messages; none less urgent (by the whole
// ranking) than one left out; and, for each message taken, every
// claimable message queued before it to one of its recipients taken
// before it.
func keepsPromises(part, whole []candidate, want int, rcpts map[int64][]string) error {
	n := min(want, len(whole))
	if len(part) < n {
		return fmt.Errorf("%d messages, want %d", len(part), n)
	}
	taken := part[:n]
	urgency := map[int64]int{}
	for _, c := range whole {
		urgency[c.id] = c.priority
	}
	at := map[int64]int{}
	worst := 0
	for i, c := range taken {
		if _, ok := urgency[c.id]; !ok {
			return fmt.Errorf("message %d taken is not claimable", c.id)
		}
		at[c.id] = i
		worst = max(worst, urgency[c.id])
	}
	for _, c := range whole {
		if _, ok := at[c.id]; !ok && c.priority < worst {
			return fmt.Errorf("message %d (priority %d) left out for one of priority %d", c.id, c.priority, worst)
		}
	}
	for _, c := range taken {
		for _, e := range whole {
			if e.id >= c.id || !sharesRecipient(rcpts[e.id], rcpts[c.id]) {
				continue
			}
			if i, ok := at[e.id]; !ok || i > at[c.id] {
				return fmt.Errorf("message %d taken without, or before, message %d queued before it to the same recipient", c.id, e.id)
			}
		}
	}
	return nil
}

func sharesRecipient(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// HeldFor counts a game's unsent mail for the town queued by a time, and
// nothing else of it: the mafia list, answers and the referee's mail may
// wait as long as they must without holding a close (T4).
func TestHeldForCountsTheTownsMailAlone(t *testing.T) {
	ctx := context.Background()
	s := openAt(t, filepath.Join(t.TempDir(), "held.db"))
	mustCreateGame(t, s, "g1")
	queued := []struct {
		kind     string
		priority int
		town     bool
		to       int
		at       time.Time
	}{
		{"mafia", PriorityGame, false, 1, t0},
		{"referee", PriorityGame, false, 1, t0},
		{"tally", PriorityNotice, false, 1, t0},
		{"private", PriorityNotice, false, 1, t0}, // a night role's reminder
		{"confirm", PriorityReceipt, false, 1, t0},
		{"thread", PriorityThread, true, 2, t0},
		{"private", PriorityNotice, true, 1, t0}, // a reminder to vote
		{"thread", PriorityThread, true, 3, t0.Add(time.Hour)},
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i, m := range queued {
			id := fmt.Sprintf("<h%d@host>", i)
			var to []string
			for j := range m.to {
				to = append(to, fmt.Sprintf("r%d.%d@example.org", i, j))
			}
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: m.kind, From: "host@example.org",
				To: to, Raw: rawMail(id, "x"), Priority: m.priority, Town: m.town}, m.at); err != nil {
				return err
			}
		}
		return nil
	})
	if n, most, err := s.HeldFor(ctx, "g1", t0); err != nil || n != 2 || most != 2 {
		t.Fatalf("held for the town by t0: %d messages, at most %d recipients (%v), want the 2 of the town, at most 2", n, most, err)
	}
	if n, most, err := s.HeldFor(ctx, "g1", t0.Add(time.Hour)); err != nil || n != 3 || most != 3 {
		t.Fatalf("held for the town an hour later: %d messages, at most %d recipients (%v), want 3, at most 3", n, most, err)
	}
	ms, err := s.OutMessages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Town != queued[i].town {
			t.Errorf("%s %s read back with Town %v", m.MessageID, m.Kind, m.Town)
		}
		if !m.Town {
			continue
		}
		if err := s.MarkSent(ctx, m.ID, t0); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, err := s.HeldFor(ctx, "g1", t0.Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("with the town's mail sent, %d messages are held for it (%v)", n, err)
	}
}

// TestTownMarkOfMailQueuedBeforeIt: a database from before the outbox
// marked the town's mail opens with its waiting thread mail marked, so a
// close after the upgrade still waits for it, and nothing else marked.
func TestTownMarkOfMailQueuedBeforeIt(t *testing.T) {
	ctx := context.Background()
	s := migratedFrom(t, 10, func(db *sql.DB) {
		if _, err := db.ExecContext(ctx, `INSERT INTO games (id, status, created_at, updated_at) VALUES ('g1', 'running', 0, 0)`); err != nil {
			t.Fatal(err)
		}
		for i, m := range []struct{ kind, status string }{
			{"thread", "pending"}, {"dawn", "sending"}, {"mafia", "pending"}, {"private", "pending"}, {"thread", "sent"},
		} {
			id := fmt.Sprintf("<m%d@host>", i)
			res, err := db.ExecContext(ctx, `INSERT INTO outbox
				(message_id, game, kind, mail_from, rcpts, status, attempts, next_attempt, created_at)
				VALUES (?, 'g1', ?, 'host@example.org', '["a@example.org"]', ?, 0, ?, ?)`,
				id, m.kind, m.status, toNanos(t0), toNanos(t0))
			if err != nil {
				t.Fatal(err)
			}
			row, _ := res.LastInsertId()
			if _, err := db.ExecContext(ctx, `INSERT INTO outbox_raw (id, raw) VALUES (?, ?)`, row, rawMail(id, "x")); err != nil {
				t.Fatal(err)
			}
		}
	})
	ms, err := s.OutMessages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false, false, false} {
		if ms[i].Town != want {
			t.Errorf("%s (%s, %s): Town %v after the migration, want %v", ms[i].MessageID, ms[i].Kind, ms[i].Status, ms[i].Town, want)
		}
	}
	if n, _, err := s.HeldFor(ctx, "g1", t0); err != nil || n != 2 {
		t.Errorf("held for the town after the migration: %d (%v), want the 2 waiting thread copies", n, err)
	}
}
