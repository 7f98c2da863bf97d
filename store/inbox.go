package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Outcome is what became of an inbound message.
type Outcome string

// Outcomes of inbound messages.
const (
	// OutcomePending: recorded, not yet decided. A committed message
	// should never stay pending.
	OutcomePending Outcome = "pending"
	// OutcomeApplied: its commands were applied.
	OutcomeApplied Outcome = "applied"
	// OutcomeRefused: refused (unknown token, wrong sender, ...), with a
	// reason; the sender was told.
	OutcomeRefused Outcome = "refused"
	// OutcomeIgnored: an auto-reply or bounce, recorded and not answered.
	OutcomeIgnored Outcome = "ignored"
	// OutcomeError: processing failed; the reason says why.
	OutcomeError Outcome = "error"
)

// Inbound is a message read from IMAP.
type Inbound struct {
	ID          int64
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	// MessageID is the Message-ID header as found, "" if there was none.
	MessageID string
	// Scope, when set, is the channel and sender the message came on
	// (the address it was routed by and its From): a Message-ID then
	// marks a duplicate only within that scope and with the same body,
	// so that no one can send a message under the Message-ID another's
	// will have and have hers dropped as a copy of it.
	Scope      string
	Raw        []byte
	ReceivedAt time.Time
	Outcome    Outcome
	Reason     string
	// Game is the game the message was for, if any.
	Game string
}

// Duplicate tells why RecordInbound found a message already recorded.
type Duplicate int

const (
	// NotDuplicate: the message is new and now recorded.
	NotDuplicate Duplicate = iota
	// DuplicateUID: the same mailbox, UIDVALIDITY and UID were recorded.
	DuplicateUID
	// DuplicateMessageID: a message with the same Message-ID (or, without
	// one, the same bytes) was recorded under another UID: the mailbox was
	// rebuilt, or the message was delivered twice.
	DuplicateMessageID
)

// MessageIDHash is the key RecordInbound deduplicates on besides the UID:
// the SHA-256 of the Message-ID without its angle brackets and surrounding
// space, or of the raw bytes for a message without one.
//
// With a scope (Inbound.Scope) the key of a message with a Message-ID is
// also the scope and its body: the same message delivered twice (to two
// of the host's addresses, or again after the mailbox was rebuilt) has the
// same body whatever its delivery header fields say.
func MessageIDHash(messageID, scope string, raw []byte) []byte {
	id := strings.TrimSpace(messageID)
	id = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(id, "<"), ">"))
	var sum [32]byte
	switch {
	case id != "" && scope != "":
		body := sha256.Sum256(messageBody(raw))
		sum = sha256.Sum256([]byte("scoped\x00" + id + "\x00" + strings.ToLower(scope) + "\x00" + string(body[:])))
	case id != "":
		sum = sha256.Sum256([]byte("message-id\x00" + id))
	default:
		sum = sha256.Sum256(append([]byte("raw\x00"), raw...))
	}
	return sum[:]
}

// messageBody is what follows a message's header.
func messageBody(raw []byte) []byte {
	for _, sep := range []string{"\r\n\r\n", "\n\n"} {
		if i := bytes.Index(raw, []byte(sep)); i >= 0 {
			return raw[i+len(sep):]
		}
	}
	return nil
}

// RecordInbound records a message read from IMAP, with its outcome
// OutcomePending, unless it was recorded before: under the same mailbox,
// UIDVALIDITY and UID, or under the same Message-ID, so that a change of
// UIDVALIDITY never makes old mail new. For a duplicate it returns the
// earlier record and why it matched, and records nothing.
//
// Call it first in the transaction that applies the message; set the
// outcome with SetInboundOutcome in the same transaction.
func (tx *Tx) RecordInbound(ctx context.Context, m Inbound) (Inbound, Duplicate, error) {
	if m.Mailbox == "" {
		return Inbound{}, NotDuplicate, errors.New("store: record inbound: mailbox is required")
	}
	hash := MessageIDHash(m.MessageID, m.Scope, m.Raw)
	res, err := tx.q.ExecContext(ctx, `INSERT INTO inbox
		(mailbox, uidvalidity, uid, message_id, msgid_hash, raw, received_at, outcome, game)
		VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', NULL)
		ON CONFLICT DO NOTHING`,
		m.Mailbox, int64(m.UIDValidity), int64(m.UID), m.MessageID, hash, m.Raw, toNanos(m.ReceivedAt))
	if err != nil {
		return Inbound{}, NotDuplicate, fmt.Errorf("store: record inbound UID %d: %w", m.UID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		id, err := res.LastInsertId()
		if err != nil {
			return Inbound{}, NotDuplicate, fmt.Errorf("store: record inbound UID %d: %w", m.UID, err)
		}
		m.ID, m.Outcome, m.Reason, m.Game = id, OutcomePending, "", ""
		m.ReceivedAt = fromNanos(toNanos(m.ReceivedAt))
		return m, NotDuplicate, nil
	}

	prev, err := tx.inbound(ctx, `mailbox = ? AND uidvalidity = ? AND uid = ?`, m.Mailbox, int64(m.UIDValidity), int64(m.UID))
	if err == nil {
		return prev, DuplicateUID, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return Inbound{}, NotDuplicate, err
	}
	prev, err = tx.inbound(ctx, `msgid_hash = ?`, hash)
	if err != nil {
		return Inbound{}, NotDuplicate, fmt.Errorf("store: record inbound UID %d: conflict without a match: %w", m.UID, err)
	}
	return prev, DuplicateMessageID, nil
}

// SetInboundOutcome records what became of an inbound message, and for
// which game (empty for none).
func (tx *Tx) SetInboundOutcome(ctx context.Context, id int64, outcome Outcome, reason, game string) error {
	res, err := tx.q.ExecContext(ctx, `UPDATE inbox SET outcome = ?, reason = ?, game = ? WHERE id = ?`,
		string(outcome), reason, nullString(game), id)
	if err != nil {
		return fmt.Errorf("store: outcome of inbound %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: outcome of inbound %d: %w", id, ErrNotFound)
	}
	return nil
}

// InboundByID returns a recorded message.
func (r reader) InboundByID(ctx context.Context, id int64) (Inbound, error) {
	return r.inbound(ctx, `id = ?`, id)
}

// InboundByUID returns the message recorded under a mailbox, UIDVALIDITY and
// UID; ErrNotFound if none was. A watcher can use it to skip fetching the
// body of mail it has already processed.
func (r reader) InboundByUID(ctx context.Context, mailbox string, uidValidity, uid uint32) (Inbound, error) {
	return r.inbound(ctx, `mailbox = ? AND uidvalidity = ? AND uid = ?`, mailbox, int64(uidValidity), int64(uid))
}

// InboundByOutcome returns the messages with an outcome, oldest first, at
// most limit of them (limit <= 0: all).
func (r reader) InboundByOutcome(ctx context.Context, outcome Outcome, limit int) ([]Inbound, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := r.q.QueryContext(ctx, `SELECT `+inboundCols+` FROM inbox WHERE outcome = ? ORDER BY id LIMIT ?`,
		string(outcome), limit)
	if err != nil {
		return nil, fmt.Errorf("store: inbound %s: %w", outcome, err)
	}
	defer rows.Close()
	var out []Inbound
	for rows.Next() {
		m, err := scanInbound(rows)
		if err != nil {
			return nil, fmt.Errorf("store: inbound %s: %w", outcome, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inbound %s: %w", outcome, err)
	}
	return out, nil
}

const inboundCols = `id, mailbox, uidvalidity, uid, message_id, raw, received_at, outcome, reason, game`

func scanInbound(sc interface{ Scan(...any) error }) (Inbound, error) {
	var m Inbound
	var uv, uid, at int64
	var outcome string
	var game sql.NullString
	if err := sc.Scan(&m.ID, &m.Mailbox, &uv, &uid, &m.MessageID, &m.Raw, &at, &outcome, &m.Reason, &game); err != nil {
		return Inbound{}, err
	}
	m.UIDValidity, m.UID, m.ReceivedAt = uint32(uv), uint32(uid), fromNanos(at)
	m.Outcome, m.Game = Outcome(outcome), game.String
	return m, nil
}

func (r reader) inbound(ctx context.Context, where string, args ...any) (Inbound, error) {
	m, err := scanInbound(r.q.QueryRowContext(ctx, `SELECT `+inboundCols+` FROM inbox WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return Inbound{}, fmt.Errorf("store: inbound message: %w", ErrNotFound)
	}
	if err != nil {
		return Inbound{}, fmt.Errorf("store: inbound message: %w", err)
	}
	return m, nil
}

// DropRawInbound keeps only the header of the inbound messages of games
// that ended before a time, and of messages for no game received before
// it (a game that does not exist is none): their outcome, reason and
// header stay for the record, the body goes
// (it may hold anything a sender wrote, refused mail too). It says how many
// messages lost their body.
func (tx *Tx) DropRawInbound(ctx context.Context, before time.Time) (int64, error) {
	res, err := tx.q.ExecContext(ctx, `UPDATE inbox SET raw = CASE
			WHEN instr(raw, x'0d0a0d0a') > 0 THEN substr(raw, 1, instr(raw, x'0d0a0d0a') + 3)
			WHEN instr(raw, x'0a0a') > 0 THEN substr(raw, 1, instr(raw, x'0a0a') + 1)
			ELSE raw END
		WHERE outcome != 'pending'
		  AND (game IN (SELECT id FROM games WHERE status = 'ended' AND updated_at < ?)
		       OR ((game IS NULL OR game NOT IN (SELECT id FROM games)) AND received_at < ?))
		  AND length(raw) > CASE
			WHEN instr(raw, x'0d0a0d0a') > 0 THEN instr(raw, x'0d0a0d0a') + 3
			WHEN instr(raw, x'0a0a') > 0 THEN instr(raw, x'0a0a') + 1
			ELSE length(raw) END`,
		toNanos(before), toNanos(before))
	if err != nil {
		return 0, fmt.Errorf("store: drop raw inbound mail: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// InboxValidities is, for each mailbox the inbox has mail of, the
// UIDVALIDITY values it was recorded under.
func (r reader) InboxValidities(ctx context.Context) (map[string][]uint32, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT DISTINCT mailbox, uidvalidity FROM inbox ORDER BY mailbox, uidvalidity`)
	if err != nil {
		return nil, fmt.Errorf("store: inbox validities: %w", err)
	}
	defer rows.Close()
	out := map[string][]uint32{}
	for rows.Next() {
		var box string
		var v int64
		if err := rows.Scan(&box, &v); err != nil {
			return nil, fmt.Errorf("store: inbox validities: %w", err)
		}
		out[box] = append(out[box], uint32(v))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inbox validities: %w", err)
	}
	return out, nil
}

// Read is what the inbox recorded of one message read: where the server
// kept it when it was read, its Message-ID, when it arrived, for which
// game, and its header (cut short), without the body.
type Read struct {
	Mailbox     string
	UIDValidity uint32
	UID         uint32
	MessageID   string
	ReceivedAt  time.Time
	Game        string
	Outcome     Outcome
	Header      []byte
}

// Reads lists every message the inbox recorded, in the order they were
// read. A restore checks the mailbox still holds them.
func (r reader) Reads(ctx context.Context) ([]Read, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT mailbox, uidvalidity, uid, message_id, received_at, game, outcome,
		substr(raw, 1, CASE WHEN instr(raw, x'0d0a0d0a') > 0 THEN instr(raw, x'0d0a0d0a') + 3
			WHEN instr(raw, x'0a0a') > 0 THEN instr(raw, x'0a0a') + 1 ELSE 4096 END)
		FROM inbox ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: inbox reads: %w", err)
	}
	defer rows.Close()
	var out []Read
	for rows.Next() {
		var m Read
		var uv, uid, at int64
		var game sql.NullString
		var outcome string
		if err := rows.Scan(&m.Mailbox, &uv, &uid, &m.MessageID, &at, &game, &outcome, &m.Header); err != nil {
			return nil, fmt.Errorf("store: inbox reads: %w", err)
		}
		m.UIDValidity, m.UID, m.ReceivedAt, m.Game, m.Outcome = uint32(uv), uint32(uid), fromNanos(at), game.String, Outcome(outcome)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inbox reads: %w", err)
	}
	return out, nil
}

// ReadKeys is Reads without the headers: what a host checks its database
// against the mailbox with as it starts.
func (r reader) ReadKeys(ctx context.Context) ([]Read, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT mailbox, uidvalidity, uid, message_id, received_at FROM inbox ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("store: inbox keys: %w", err)
	}
	defer rows.Close()
	var out []Read
	for rows.Next() {
		var m Read
		var uv, uid, at int64
		if err := rows.Scan(&m.Mailbox, &uv, &uid, &m.MessageID, &at); err != nil {
			return nil, fmt.Errorf("store: inbox keys: %w", err)
		}
		m.UIDValidity, m.UID, m.ReceivedAt = uint32(uv), uint32(uid), fromNanos(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: inbox keys: %w", err)
	}
	return out, nil
}
