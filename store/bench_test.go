package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// benchRaw is a plausible inbound message: headers of a real mail client
// and a short reply with a quoted tail, about 2 KiB.
func benchRaw(i int) []byte {
	id := fmt.Sprintf("<bench-%d@mail.example.org>", i)
	return []byte("Return-Path: <alice@example.org>\r\nDelivered-To: host+g1-t-abcdefghijklmnop@example.org\r\n" +
		"Received: from mail.example.org by mx.example.org with ESMTPS; Mon, 2 Mar 2026 09:00:00 +0000\r\n" +
		"From: Alice <alice@example.org>\r\nTo: host+g1-t-abcdefghijklmnop@example.org\r\n" +
		"Subject: Re: [g1] Day 2\r\nMessage-ID: " + id + "\r\nDate: Mon, 2 Mar 2026 09:00:00 +0000\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" +
		"VOTE Bob\r\nBob has been far too quiet.\r\n\r\nOn Mon, 2 Mar 2026, host wrote:\r\n" +
		strings.Repeat("> the official tally of the day, quoted back as mail clients do\r\n", 24))
}

// BenchmarkInboundCommit measures inbound messages committed per second:
// each is one transaction of the host's shape (inbox row with the raw
// message, one event, one outbox row with the reply, the outcome), with
// synchronous=FULL. Interleaved with it, in the same run and directory,
// a bare loop commits one INSERT of the same raw bytes per transaction with
// the same settings; both rates and their ratio are reported.
func BenchmarkInboundCommit(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "store.db"), Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(ctx, func(tx *Tx) error { return tx.CreateGame(ctx, "g1", "running", t0) }); err != nil {
		b.Fatal(err)
	}

	bare, err := sql.Open("sqlite", dsn(filepath.Join(dir, "bare.db"), "_pragma=journal_mode(WAL)", "_txlock=immediate"))
	if err != nil {
		b.Fatal(err)
	}
	defer bare.Close()
	bare.SetMaxOpenConns(1)
	if _, err := bare.Exec(`CREATE TABLE bare (id INTEGER PRIMARY KEY, raw BLOB NOT NULL)`); err != nil {
		b.Fatal(err)
	}

	var seq int64
	var inboundTime, bareTime time.Duration
	reply := rawMail("<reply-0@host>", strings.Repeat("Your vote for Bob was recorded.\r\n", 20))
	i := 0
	for b.Loop() {
		raw := benchRaw(i)
		start := time.Now()
		err := s.Update(ctx, func(tx *Tx) error {
			rec, dup, err := tx.RecordInbound(ctx, Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1),
				MessageID: fmt.Sprintf("<bench-%d@mail.example.org>", i), Raw: raw, ReceivedAt: t0})
			if err != nil || dup != NotDuplicate {
				return fmt.Errorf("record: %v %v", dup, err)
			}
			cause := fmt.Sprintf("inbox:%d", rec.ID)
			if _, err := tx.AppendEvents(ctx, "g1", seq, cause, NewEvent{Type: "voted", Version: 1,
				Payload: []byte(`{"voter":"Alice","target":"Bob"}`), At: t0}); err != nil {
				return err
			}
			id := fmt.Sprintf("<reply-%d@host>", i)
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "confirm", From: "host@example.org",
				To: []string{"alice@example.org"}, Raw: []byte(strings.Replace(string(reply), "<reply-0@host>", id, 1)), Cause: cause}, t0); err != nil {
				return err
			}
			return tx.SetInboundOutcome(ctx, rec.ID, OutcomeApplied, "", "g1")
		})
		inboundTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		seq++

		start = time.Now()
		tx, err := bare.Begin()
		if err == nil {
			_, err = tx.Exec(`INSERT INTO bare (raw) VALUES (?)`, raw)
			if err == nil {
				err = tx.Commit()
			} else {
				tx.Rollback()
			}
		}
		bareTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	inboundRate := float64(i) / inboundTime.Seconds()
	bareRate := float64(i) / bareTime.Seconds()
	b.ReportMetric(inboundRate, "inbound/s")
	b.ReportMetric(bareRate, "bare_inserts/s")
	b.ReportMetric(inboundRate/bareRate, "inbound/bare")
}

// BenchmarkDuplicateInbound measures recognizing mail already processed,
// as after a UIDVALIDITY change: a transaction that finds the Message-ID
// and writes nothing.
func BenchmarkDuplicateInbound(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "store.db"), Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const stored = 1000
	err = s.Update(ctx, func(tx *Tx) error {
		for i := range stored {
			if _, _, err := tx.RecordInbound(ctx, Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1),
				MessageID: fmt.Sprintf("<bench-%d@mail.example.org>", i), Raw: benchRaw(i), ReceivedAt: t0}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		n := i % stored
		err := s.Update(ctx, func(tx *Tx) error {
			_, dup, err := tx.RecordInbound(ctx, Inbound{Mailbox: "INBOX", UIDValidity: 2, UID: uint32(n + 1),
				MessageID: fmt.Sprintf("<bench-%d@mail.example.org>", n), Raw: benchRaw(n), ReceivedAt: t0})
			if err == nil && dup != DuplicateMessageID {
				err = fmt.Errorf("message %d: %v, want DuplicateMessageID", n, dup)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkOutboxCycle measures an outgoing message's way through the
// outbox as a thread post's copies take it: 25 copies of about 9 KiB (a
// text and an HTML part) queued in one transaction, then claimed 50 at a
// time and marked sent, as the sender does. It reports the time per copy.
func BenchmarkOutboxCycle(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "store.db"), Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Update(ctx, func(tx *Tx) error { return tx.CreateGame(ctx, "g1", "running", t0) }); err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("Carol writes: Bob has been far too quiet, and he voted late.\r\n", 150)
	const copies = 25
	n := 0
	for b.Loop() {
		err := s.Update(ctx, func(tx *Tx) error {
			for range copies {
				id := fmt.Sprintf("<copy-%d@host>", n)
				n++
				if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "post", From: "host@example.org",
					To: []string{fmt.Sprintf("reader%d@example.org", n%copies)}, Raw: rawMail(id, body)}, t0); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		for {
			ms, err := s.ClaimDue(ctx, t0, 50)
			if err != nil {
				b.Fatal(err)
			}
			if len(ms) == 0 {
				break
			}
			ids := make([]int64, len(ms))
			for i, m := range ms {
				ids[i] = m.ID
			}
			if err := s.MarkAllSent(ctx, ids, t0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/copy")
}
