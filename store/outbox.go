package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// OutStatus is where an outgoing message is in its life.
type OutStatus string

// Outgoing message statuses.
const (
	// OutPending: waiting for its next attempt.
	OutPending OutStatus = "pending"
	// OutSending: claimed by the sender. A store opened after a crash
	// makes such messages pending again.
	OutSending OutStatus = "sending"
	// OutSent: the SMTP server accepted it.
	OutSent OutStatus = "sent"
	// OutFailed: the SMTP server refused it for good.
	OutFailed OutStatus = "failed"
)

// OutMessage is a message to send.
type OutMessage struct {
	ID int64
	// MessageID is the message's Message-ID, "<...>", which Raw carries.
	// Every attempt sends the same bytes, so every copy a recipient might
	// get twice has the same Message-ID.
	MessageID string
	Game      string
	// Kind is what the message is (role, thread, tally, confirm, ...).
	Kind string
	// From and To are the SMTP envelope.
	From string
	To   []string
	Raw  []byte

	Status      OutStatus
	Attempts    int
	NextAttempt time.Time
	LastError   string
	CreatedAt   time.Time
	SentAt      time.Time
	// Cause tells what made the message: "inbox:<id>", "deadline", ...
	Cause string
	// Priority orders the mail when the sending budget is tight:
	// PriorityGame first, PriorityReceipt last. Enqueue takes 0 as
	// PriorityGame.
	Priority int
	// Town marks mail the town needs before a round's close (T4): the
	// thread's copies to players and observers, and reminders to vote. A
	// close waits for held mail of this kind alone (HeldFor).
	Town bool
	// Public, for a copy of thread or mafia-list mail, is what every
	// reader of the mail was sent (see compose.Outgoing.Public), and
	// PublicIn that conversation, "thread" or "mafia"; both empty for
	// other mail. Enqueue keeps them; SentTo reads them back.
	Public, PublicIn string
}

// headerField returns the first value of the named field in raw's
// header, unfolded, without parsing the rest of the message: Enqueue runs
// for every copy of every message.
func headerField(raw []byte, name string) (string, error) {
	var value []byte
	found := false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			break // the end of the header
		}
		if line[0] == ' ' || line[0] == '\t' {
			if found {
				value = append(value, line...)
			}
			continue
		}
		if found {
			break
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return "", fmt.Errorf("malformed header line: %q", line)
		}
		if strings.EqualFold(string(bytes.TrimRight(k, " \t")), name) {
			found = true
			value = append(value, v...)
		}
	}
	return strings.TrimSpace(string(value)), nil
}

// canonicalMessageID returns id in its header form, "<...>".
func canonicalMessageID(id string) string {
	id = strings.TrimSpace(id)
	id = strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">")
	if id == "" {
		return ""
	}
	return "<" + id + ">"
}

// Enqueue adds a message to the outbox, due at now. Its Message-ID must be
// set, unique, and equal to the Message-ID header of Raw. Enqueue it in the
// transaction whose change caused it: the message exists if and only if
// the change does.
func (tx *Tx) Enqueue(ctx context.Context, m OutMessage, now time.Time) (int64, error) {
	id := canonicalMessageID(m.MessageID)
	if id == "" {
		return 0, errors.New("store: enqueue: Message-ID is required")
	}
	if len(m.To) == 0 {
		return 0, fmt.Errorf("store: enqueue %s: no recipients", id)
	}
	if m.Kind == "" {
		return 0, fmt.Errorf("store: enqueue %s: kind is required", id)
	}
	field, err := headerField(m.Raw, "Message-Id")
	if err != nil {
		return 0, fmt.Errorf("store: enqueue %s: message header: %w", id, err)
	}
	if got := canonicalMessageID(field); got != id {
		return 0, fmt.Errorf("store: enqueue %s: the message's Message-ID header is %q", id, got)
	}
	rcpts, err := json.Marshal(m.To)
	if err != nil {
		return 0, fmt.Errorf("store: enqueue %s: %w", id, err)
	}
	if m.Priority < PriorityGame || m.Priority > PriorityReceipt {
		return 0, fmt.Errorf("store: enqueue %s: priority %d out of range", id, m.Priority)
	}
	res, err := tx.q.ExecContext(ctx, `INSERT INTO outbox
		(message_id, game, kind, mail_from, rcpts, status, attempts, next_attempt, created_at, cause, priority, town)
		VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)`,
		id, nullString(m.Game), m.Kind, m.From, string(rcpts), toNanos(now), toNanos(now), m.Cause, m.Priority, m.Town)
	if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE) {
		return 0, fmt.Errorf("store: enqueue %s: %w", id, ErrExists)
	}
	if err != nil {
		return 0, fmt.Errorf("store: enqueue %s: %w", id, err)
	}
	rowID, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("store: enqueue %s: %w", id, err)
	}
	// The bytes go in a table of their own, written once: see
	// migrations/0009_outbox_raw.sql.
	if _, err := tx.q.ExecContext(ctx, `INSERT INTO outbox_raw (id, raw) VALUES (?, ?)`, rowID, m.Raw); err != nil {
		return 0, fmt.Errorf("store: enqueue %s: bytes: %w", id, err)
	}
	if m.PublicIn != "" {
		if _, err := tx.q.ExecContext(ctx, `INSERT INTO outbox_public (id, channel, public) VALUES (?, ?, ?)`,
			rowID, m.PublicIn, m.Public); err != nil {
			return 0, fmt.Errorf("store: enqueue %s: public lines: %w", id, err)
		}
	}
	tx.enqueued = true
	return rowID, nil
}

// ClaimDue marks up to limit pending messages due at now as sending and
// returns them in the order they must be handed over: with no sending
// budget, the order they were queued in (see claimable). The caller then
// reports each one with MarkSent, MarkRetry or MarkFailed.
func (tx *Tx) ClaimDue(ctx context.Context, now time.Time, limit int) ([]OutMessage, error) {
	return tx.claimWithin(ctx, now, limit, Unlimited)
}

// Room is what a sending budget lets go now.
type Room struct {
	// Recipients and Messages are how many more the budget takes now;
	// -1 is no limit.
	Recipients, Messages int
	// Oversized takes the first message even when its recipients alone
	// are more than Recipients: a window that is empty must not wait for
	// ever for a message larger than the whole limit.
	Oversized bool
}

// Unlimited is the room when no budget applies.
var Unlimited = Room{Recipients: -1, Messages: -1}

// limited reports whether the room limits anything.
func (r Room) limited() bool { return r.Recipients >= 0 || r.Messages >= 0 }

// exceeded reports whether mail of msgs messages to rcpts recipients in
// all is more than the room takes.
func (r Room) exceeded(msgs, rcpts int) bool {
	return (r.Recipients >= 0 && rcpts > r.Recipients) || (r.Messages >= 0 && msgs > r.Messages)
}

// claimWithin claims, in the order of claimable, the first messages that
// fit in room, stopping at the first that does not, so that no
// message overtakes one queued before it.
func (tx *Tx) claimWithin(ctx context.Context, now time.Time, limit int, room Room) ([]OutMessage, error) {
	if limit <= 0 {
		limit = 100
	}
	cands, err := tx.claimable(ctx, now, limit, room)
	if err != nil {
		return nil, fmt.Errorf("store: claim outbox: %w", err)
	}
	var ids []any
	used := 0
	for _, c := range cands {
		if len(ids) == limit || len(ids) == room.Messages {
			break
		}
		if room.Recipients >= 0 && used+c.rcpts > room.Recipients && !(room.Oversized && len(ids) == 0) {
			break
		}
		used += c.rcpts
		ids = append(ids, c.id)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	res, err := tx.q.QueryContext(ctx, `UPDATE outbox SET status = 'sending' WHERE id IN (`+placeholders(len(ids))+`) RETURNING `+outCols, ids...)
	if err != nil {
		return nil, fmt.Errorf("store: claim outbox: %w", err)
	}
	ms, err := scanOutRows(res)
	if err != nil {
		return nil, fmt.Errorf("store: claim outbox: %w", err)
	}
	// RETURNING gives no order guarantee.
	order := make(map[int64]int, len(ids))
	for i, id := range ids {
		order[id.(int64)] = i
	}
	slices.SortFunc(ms, func(a, b OutMessage) int { return cmp.Compare(order[a.ID], order[b.ID]) })
	return ms, nil
}

// MaxOrderWait is how long a message waiting for a retry may hold back
// later mail to its recipients (see claimable): a few retries' worth, so
// that a passing fault keeps each reader's mail in order, and a lasting
// one does not stop it.
const MaxOrderWait = time.Minute

// anyBlocked reports whether one of to is held back already.
func anyBlocked(blocked map[string]bool, to []string) bool {
	for _, a := range to {
		if blocked[a] {
			return true
		}
	}
	return false
}

// candidate is a message that may be claimed now.
type candidate struct {
	id       int64
	rcpts    int
	priority int
}

// claimable lists the messages that may be handed over now, in the order
// they must be: mail caused by an event never reaches a recipient before
// the mail of an earlier event (docs/design.md "Guarantees"), and the
// outbox holds it in the order it was queued. So a message is claimable
// only when every earlier message to one of its recipients is claimable
// too: one that is being sent, or waits for a retry due within
// MaxOrderWait, holds back the rest of that recipient's mail. A message
// whose retry lies further out (a failure that has repeated for minutes)
// holds back nothing: the mail after it must not wait for ever behind it,
// and it comes late, alone, when its retry succeeds.
//
// While the room takes every message that is due, they go in the order
// they were queued: all of it leaves soon, and a receipt must not wait
// behind a busy thread's copies queued after it. Once the mail due is
// more than the room takes, the budget is tight and priority orders what
// goes first, but never within one recipient's mail: a message takes on
// the most urgent priority of the later mail to the same recipient, so an
// urgent close pulls the posts queued before it along with it, ahead of
// them.
//
// It reads the open messages in the order they were queued, a chunk at a
// time. In queue order it stops once it has want candidates. Under a
// room it reads on until the mail due is more than the room (a tight
// budget) or it reaches the end (it is not). Under a tight budget it
// stops once it has want candidates and no message further on is more
// urgent than the least urgent of the first want: none can then come
// before them, so a long queue is not read whole for every claim. What it
// does not read may still have made a message it read more urgent, but
// never more urgent than that least urgent one: at worst a message of the
// same priority as the last ones taken, to another recipient, waits for
// the next claim. Each recipient's mail keeps its order, and no message
// goes ahead of a more urgent one.
func (tx *Tx) claimable(ctx context.Context, now time.Time, want int, room Room) ([]candidate, error) {
	type open struct {
		candidate
		to []string
	}
	var due []open
	blocked := map[string]bool{}
	// queued is due in the order it was queued.
	queued := func() []candidate {
		out := make([]candidate, len(due))
		for i, o := range due {
			out[i] = o.candidate
		}
		return out
	}
	// ranked is due in the order of a tight budget's claim: each
	// message's priority the most urgent of its own and that of every
	// later claimable message to one of its recipients, stably sorted.
	ranked := func() []candidate {
		urgent := map[string]int{}
		out := make([]candidate, len(due))
		for i := len(due) - 1; i >= 0; i-- {
			c := due[i].candidate
			for _, a := range due[i].to {
				if p, ok := urgent[a]; ok && p < c.priority {
					c.priority = p
				}
			}
			for _, a := range due[i].to {
				urgent[a] = c.priority
			}
			out[i] = c
		}
		slices.SortStableFunc(out, func(a, b candidate) int { return cmp.Compare(a.priority, b.priority) })
		return out
	}
	// tight is whether the mail due is more than the room takes: every
	// pending message due now counts, held back or not.
	tight := false
	dueMsgs, dueRcpts := 0, 0
	chunk := max(4*want, 256)
	var last int64
	for {
		rows, err := tx.q.QueryContext(ctx, `SELECT id, rcpts, status, next_attempt, priority FROM outbox
			WHERE status IN ('pending', 'sending') AND id > ? ORDER BY id LIMIT ?`, last, chunk)
		if err != nil {
			return nil, err
		}
		n := 0
		for rows.Next() {
			n++
			var o open
			var rcpts, status string
			var next int64
			if err := rows.Scan(&o.id, &rcpts, &status, &next, &o.priority); err != nil {
				rows.Close()
				return nil, err
			}
			last = o.id
			if err := json.Unmarshal([]byte(rcpts), &o.to); err != nil {
				rows.Close()
				return nil, fmt.Errorf("recipients of outbox message %d: %w", o.id, err)
			}
			for i, a := range o.to {
				o.to[i] = strings.ToLower(strings.TrimSpace(a))
			}
			o.rcpts = len(o.to)
			ok := status == string(OutPending) && next <= toNanos(now)
			if ok {
				dueMsgs++
				dueRcpts += o.rcpts
			}
			for _, a := range o.to {
				if blocked[a] {
					ok = false
				}
			}
			if !ok {
				if status == string(OutSending) || next <= toNanos(now.Add(MaxOrderWait)) || anyBlocked(blocked, o.to) {
					for _, a := range o.to {
						blocked[a] = true
					}
				}
				continue
			}
			due = append(due, o)
			if !room.limited() && len(due) == want {
				// In queue order nothing further on changes the first
				// want: reading the rest of the chunk (and decoding its
				// recipients) would be wasted on a long queue.
				break
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if !room.limited() && len(due) == want {
			return queued(), nil
		}
		tight = tight || room.exceeded(dueMsgs, dueRcpts)
		if n < chunk { // read to the end
			if tight {
				return ranked(), nil
			}
			return queued(), nil
		}
		if !tight {
			continue
		}
		if len(due) < want {
			continue
		}
		// A message further on can come before one of the first want
		// only if it is more urgent than the least urgent of them.
		out := ranked()
		least := 0
		for _, c := range out[:want] {
			least = max(least, c.priority)
		}
		var more bool
		if err := tx.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM outbox
			WHERE status = 'pending' AND priority < ? AND id > ?)`, least, last).Scan(&more); err != nil {
			return nil, err
		}
		if !more {
			return out, nil
		}
	}
}

// MarkSent records that the SMTP server accepted a message.
func (tx *Tx) MarkSent(ctx context.Context, id int64, now time.Time) error {
	return tx.updateOut(ctx, id, sentSet, toNanos(now))
}

// sentSet is what recording a message as sent changes, sent_at its one
// argument.
const sentSet = `status = 'sent', attempts = attempts + 1, sent_at = ?, last_error = ''`

// markAllSent is MarkSent for each of ids, in one statement for up to
// markChunk of them: a sender's batch is recorded with a statement, not
// one per message. An id that is not in the outbox fails them all.
func (tx *Tx) markAllSent(ctx context.Context, ids []int64, now time.Time) error {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for len(ids) > 0 {
		part := ids[:min(len(ids), markChunk)]
		ids = ids[len(part):]
		args := make([]any, 0, len(part)+1)
		args = append(args, toNanos(now))
		for _, id := range part {
			args = append(args, id)
		}
		res, err := tx.q.ExecContext(ctx, `UPDATE outbox SET `+sentSet+` WHERE id IN (`+placeholders(len(part))+`)`, args...)
		if err != nil {
			return fmt.Errorf("store: mark %d messages sent: %w", len(part), err)
		}
		if n, _ := res.RowsAffected(); n != int64(len(part)) {
			return fmt.Errorf("store: mark %d messages sent: %d not in the outbox: %w", len(part), int64(len(part))-n, ErrNotFound)
		}
	}
	return nil
}

// placeholders is the list of n parameters of an IN clause: ?,?,?.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// markChunk bounds the ids of one statement of markAllSent: a sender's
// batch is a claim's worth (50), far below SQLite's limit on a
// statement's arguments.
const markChunk = 500

// Release puts a claimed message back in the queue, due at next: one
// that was not attempted, or that the provider refused for the account's
// sending limit, which is no fault of the message. It counts no attempt,
// so its backoff, when it does fail, starts where it stood.
func (tx *Tx) Release(ctx context.Context, id int64, next time.Time, why string) error {
	return tx.updateOut(ctx, id, `status = 'pending', next_attempt = ?, last_error = ?`, toNanos(next), why)
}

// MarkRetry records a failed attempt that may succeed later (4xx, network):
// the message is due again at next.
func (tx *Tx) MarkRetry(ctx context.Context, id int64, next time.Time, errText string) error {
	return tx.updateOut(ctx, id, `status = 'pending', attempts = attempts + 1, next_attempt = ?, last_error = ?`,
		toNanos(next), errText)
}

// MarkFailed records a permanent failure (5xx): the message is not retried.
func (tx *Tx) MarkFailed(ctx context.Context, id int64, errText string) error {
	return tx.updateOut(ctx, id, `status = 'failed', attempts = attempts + 1, last_error = ?`, errText)
}

func (tx *Tx) updateOut(ctx context.Context, id int64, set string, args ...any) error {
	res, err := tx.q.ExecContext(ctx, `UPDATE outbox SET `+set+` WHERE id = ?`, append(args, id)...)
	if err != nil {
		return fmt.Errorf("store: update outbox %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update outbox %d: %w", id, ErrNotFound)
	}
	return nil
}

// ClaimDue runs Tx.ClaimDue in a transaction of its own, which need not
// reach the disk before the messages are sent (updateUnsynced): a claim
// lost in a power failure leaves them pending, as releaseClaims would.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, limit int) (ms []OutMessage, err error) {
	err = s.updateUnsynced(ctx, func(tx *Tx) error {
		ms, err = tx.ClaimDue(ctx, now, limit)
		return err
	})
	return ms, err
}

// MarkSent runs Tx.MarkSent in a transaction of its own.
func (s *Store) MarkSent(ctx context.Context, id int64, now time.Time) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.MarkSent(ctx, id, now) })
}

// MarkAllSent records each of ids as sent in one transaction: a
// sender records the messages a batch handed over with one commit, not
// one each. The commit does not wait for the disk (updateUnsynced): a
// power failure that loses it sends those messages again, which a
// process that dies before it does as well. An id that is not in the
// outbox fails them all.
func (s *Store) MarkAllSent(ctx context.Context, ids []int64, now time.Time) error {
	return s.updateUnsynced(ctx, func(tx *Tx) error { return tx.markAllSent(ctx, ids, now) })
}

// MarkRetry runs Tx.MarkRetry in a transaction of its own.
func (s *Store) MarkRetry(ctx context.Context, id int64, next time.Time, errText string) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.MarkRetry(ctx, id, next, errText) })
}

// Release runs Tx.Release in a transaction of its own.
func (s *Store) Release(ctx context.Context, id int64, next time.Time, why string) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.Release(ctx, id, next, why) })
}

// MarkFailed runs Tx.MarkFailed in a transaction of its own.
func (s *Store) MarkFailed(ctx context.Context, id int64, errText string) error {
	return s.Update(ctx, func(tx *Tx) error { return tx.MarkFailed(ctx, id, errText) })
}

// releaseClaims makes messages a dead process had claimed due again.
func releaseClaims(ctx context.Context, db *sql.DB) (int64, error) {
	res, err := db.ExecContext(ctx, `UPDATE outbox SET status = 'pending' WHERE status = 'sending'`)
	if err != nil {
		return 0, fmt.Errorf("store: release claimed outbox messages: %w", classify(err))
	}
	return res.RowsAffected()
}

// NextAttempt returns when the earliest pending message is due; ok is false
// when none is pending.
func (r reader) NextAttempt(ctx context.Context) (t time.Time, ok bool, err error) {
	var next sql.NullInt64
	err = r.q.QueryRowContext(ctx, `SELECT min(next_attempt) FROM outbox WHERE status = 'pending'`).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next outbox attempt: %w", err)
	}
	return fromNullNanos(next), next.Valid, nil
}

// NextAttemptAfter returns when the earliest pending message that is not
// due at t falls due; ok is false when none is. A sender that finds mail
// due but none of it claimable (held back behind earlier mail to its
// readers that waits for a retry) looks again then, not at once.
func (r reader) NextAttemptAfter(ctx context.Context, t time.Time) (next time.Time, ok bool, err error) {
	var n sql.NullInt64
	err = r.q.QueryRowContext(ctx, `SELECT min(next_attempt) FROM outbox WHERE status = 'pending' AND next_attempt > ?`, toNanos(t)).Scan(&n)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store: next outbox attempt after %v: %w", t, err)
	}
	return fromNullNanos(n), n.Valid, nil
}

// OutMessageByID returns one outgoing message.
func (r reader) OutMessageByID(ctx context.Context, id int64) (OutMessage, error) {
	ms, err := r.outMessages(ctx, `WHERE id = ?`, id)
	if err != nil {
		return OutMessage{}, err
	}
	if len(ms) == 0 {
		return OutMessage{}, fmt.Errorf("store: outbox %d: %w", id, ErrNotFound)
	}
	return ms[0], nil
}

// OutMessages returns the outgoing messages with a status ("" for all), in
// the order they were enqueued.
func (r reader) OutMessages(ctx context.Context, status OutStatus) ([]OutMessage, error) {
	if status == "" {
		return r.outMessages(ctx, `ORDER BY id`)
	}
	return r.outMessages(ctx, `WHERE status = ? ORDER BY id`, string(status))
}

func (r reader) outMessages(ctx context.Context, tail string, args ...any) ([]OutMessage, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+outCols+` FROM outbox `+tail, args...)
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	ms, err := scanOutRows(rows)
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	return ms, nil
}

// outCols are an outgoing message's columns, its bytes fetched from
// outbox_raw by the message's id.
const outCols = `id, message_id, game, kind, mail_from, rcpts,
	(SELECT raw FROM outbox_raw WHERE outbox_raw.id = outbox.id), status, attempts, next_attempt,
	last_error, created_at, sent_at, cause, priority, town`

func scanOutRows(rows *sql.Rows) ([]OutMessage, error) {
	defer rows.Close()
	var ms []OutMessage
	for rows.Next() {
		var m OutMessage
		var game sql.NullString
		var rcpts, status string
		var next, created int64
		var sent sql.NullInt64
		if err := rows.Scan(&m.ID, &m.MessageID, &game, &m.Kind, &m.From, &rcpts, &m.Raw, &status,
			&m.Attempts, &next, &m.LastError, &created, &sent, &m.Cause, &m.Priority, &m.Town); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(rcpts), &m.To); err != nil {
			return nil, fmt.Errorf("recipients of %s: %w", m.MessageID, err)
		}
		m.Game, m.Status = game.String, OutStatus(status)
		m.NextAttempt, m.CreatedAt, m.SentAt = fromNanos(next), fromNanos(created), fromNullNanos(sent)
		ms = append(ms, m)
	}
	return ms, rows.Err()
}

// LastQueued is the raw text of the message queued last for game (by
// queue order, which is Date order for a game's mail); nil when there is
// none.
func (r reader) LastQueued(ctx context.Context, game string) ([]byte, error) {
	var raw []byte
	err := r.q.QueryRowContext(ctx, `SELECT raw FROM outbox_raw
		WHERE id = (SELECT max(id) FROM outbox WHERE game = ?)`, game).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: last message of %s: %w", game, err)
	}
	return raw, nil
}

// Answered is a message the host sent, as a reply to it finds it.
type Answered struct {
	MessageID, Game, Kind string
	Raw                   []byte
	// Public is what every reader of the message was sent, and PublicIn
	// the conversation it went out in (see OutMessage.Public); both empty
	// for mail other than the thread's and the mafia list's.
	Public, PublicIn string
}

// SentTo finds the message of the outbox that a reply from address
// answers: the first of ids (a reply's In-Reply-To, then its References)
// that names a message the host sent to that address, whatever became of
// it since. A Message-ID of a copy sent to someone else finds nothing:
// a reply quotes the mail its author got.
func (r reader) SentTo(ctx context.Context, ids []string, address string) (Answered, bool, error) {
	for _, id := range ids {
		id = canonicalMessageID(id)
		if id == "" {
			continue
		}
		var s Answered
		var game sql.NullString
		var rcpts string
		var public, channel sql.NullString
		err := r.q.QueryRowContext(ctx, `SELECT o.message_id, o.game, o.kind, o.rcpts,
			(SELECT raw FROM outbox_raw WHERE outbox_raw.id = o.id), p.public, p.channel
			FROM outbox o LEFT JOIN outbox_public p ON p.id = o.id WHERE o.message_id = ?`, id).Scan(
			&s.MessageID, &game, &s.Kind, &rcpts, &s.Raw, &public, &channel)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return Answered{}, false, fmt.Errorf("store: sent message %s: %w", id, err)
		}
		var to []string
		if err := json.Unmarshal([]byte(rcpts), &to); err != nil {
			return Answered{}, false, fmt.Errorf("store: recipients of %s: %w", id, err)
		}
		for _, a := range to {
			if strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(address)) {
				s.Game, s.Public, s.PublicIn = game.String, public.String, channel.String
				return s, true, nil
			}
		}
	}
	return Answered{}, false, nil
}
