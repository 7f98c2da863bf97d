package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 123456789, time.UTC)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "mafiamail.db"))
}

func update(t *testing.T, s *Store, fn func(ctx context.Context, tx *Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := s.Update(ctx, func(tx *Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func mustCreateGame(t *testing.T, s *Store, id string) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx *Tx) error { return tx.CreateGame(ctx, id, "signup", t0) })
}

func rawMail(msgID, body string) []byte {
	return []byte("From: alice@example.org\r\nTo: host@example.org\r\nMessage-ID: " + msgID +
		"\r\nSubject: test\r\n\r\n" + body + "\r\n")
}

func payload(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// countRows counts a table's rows on the read pool.
func countRows(t *testing.T, s *Store, table string) int {
	t.Helper()
	var n int
	if err := s.read.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestMigrateFromEmptyDatabase(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		setup func(path string)
	}{
		{"no file", func(string) {}},
		{"empty file", func(p string) { os.WriteFile(p, nil, 0o600) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".db")
			tc.setup(path)
			s := openAt(t, path)
			var version, appID int
			var journal string
			if err := s.conn.QueryRowContext(context.Background(), `SELECT (SELECT user_version FROM pragma_user_version),
				(SELECT application_id FROM pragma_application_id),
				(SELECT journal_mode FROM pragma_journal_mode)`).Scan(&version, &appID, &journal); err != nil {
				t.Fatal(err)
			}
			if version != len(migrations) || appID != applicationID || journal != "wal" {
				t.Errorf("user_version %d (want %d), application_id %#x (want %#x), journal_mode %s (want wal)",
					version, len(migrations), appID, applicationID, journal)
			}
			var sync, fk int
			if err := s.conn.QueryRowContext(context.Background(), `SELECT (SELECT synchronous FROM pragma_synchronous),
				(SELECT foreign_keys FROM pragma_foreign_keys)`).Scan(&sync, &fk); err != nil {
				t.Fatal(err)
			}
			if sync != 2 || fk != 1 {
				t.Errorf("writer has synchronous=%d (want 2, FULL), foreign_keys=%d (want 1)", sync, fk)
			}
			for _, table := range []string{"games", "participants", "events", "snapshots", "inbox", "outbox",
				"held_posts", "players", "suspensions"} {
				countRows(t, s, table) // fails if the table is missing
			}
			// Reopening finds nothing to do and keeps the data.
			mustCreateGame(t, s, "g1")
			s.Close()
			s2 := openAt(t, path)
			if _, err := s2.Game(context.Background(), "g1"); err != nil {
				t.Errorf("after reopening: %v", err)
			}
		})
	}
}

func TestMigrationsApplyStepByStepAndAtomically(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "steps.db")
	db, err := sql.Open("sqlite", dsn(path, "_pragma=journal_mode(WAL)", "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ms := []migration{
		{1, "one", "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"},
		{2, "two", "ALTER TABLE a ADD COLUMN y TEXT NOT NULL DEFAULT 'v2'; CREATE TABLE b (z);"},
		{3, "broken", "CREATE TABLE c (z); INSERT INTO nowhere VALUES (1);"},
	}
	version := func() int {
		var v int
		if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if err := migrate(ctx, db, 0, ms[:1], quietLogger()); err != nil || version() != 1 {
		t.Fatalf("to version 1: %v, at %d", err, version())
	}
	if err := migrate(ctx, db, 1, ms[:2], quietLogger()); err != nil || version() != 2 {
		t.Fatalf("1 to 2: %v, at %d", err, version())
	}
	var y string
	if err := db.QueryRow("SELECT y FROM a").Scan(&y); err != nil || y != "v2" {
		t.Errorf("data after migration 2: %q, %v", y, err)
	}
	err = migrate(ctx, db, 2, ms, quietLogger())
	if err == nil || !strings.Contains(err.Error(), "migration 3 (broken)") {
		t.Fatalf("broken migration: err %v", err)
	}
	if version() != 2 {
		t.Errorf("a failed migration moved the version to %d", version())
	}
	var n int
	db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'c'").Scan(&n)
	if n != 0 {
		t.Errorf("a failed migration left part of its work behind")
	}
	// A version that does not match what the migration expects is refused.
	if err := migrate(ctx, db, 0, ms[:2], quietLogger()); err == nil {
		t.Errorf("re-applying migration 1 on a version 2 database succeeded")
	}
}

// migratedFrom is a store opened on a database that a host of schema
// version n left: write fills the file at that version, and Open then
// migrates it the rest of the way. The store is closed when the test ends.
func migratedFrom(t *testing.T, n int, write func(db *sql.DB)) *Store {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", n))
	db, err := sql.Open("sqlite", dsn(path, "_pragma=journal_mode(WAL)", "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if err := migrate(ctx, db, 0, migrations[:n], quietLogger()); err != nil {
		t.Fatal(err)
	}
	write(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestOutboxBytesMoveToATableOfTheirOwn: a database of the schema before
// outbox_raw, with mail waiting, sent and failed, opens with every
// message's bytes and state as they were, and the waiting ones are claimed
// and sent as before.
func TestOutboxBytesMoveToATableOfTheirOwn(t *testing.T) {
	ctx := context.Background()
	raws := map[string][]byte{}
	s := migratedFrom(t, 8, func(db *sql.DB) {
		for i, status := range []string{"pending", "sent", "failed", "pending"} {
			id := fmt.Sprintf("<m%d@host>", i)
			raws[id] = rawMail(id, strings.Repeat(fmt.Sprintf("line %d of a long message\r\n", i), 400))
			if _, err := db.ExecContext(ctx, `INSERT INTO outbox
				(message_id, game, kind, mail_from, rcpts, raw, status, attempts, next_attempt, created_at)
				VALUES (?, NULL, 'post', 'host@example.org', '["a@example.org"]', ?, ?, 0, ?, ?)`,
				id, raws[id], status, toNanos(t0), toNanos(t0)); err != nil {
				t.Fatal(err)
			}
		}
	})
	all, err := s.OutMessages(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]OutStatus{"<m0@host>": OutPending, "<m1@host>": OutSent, "<m2@host>": OutFailed, "<m3@host>": OutPending}
	if len(all) != len(want) {
		t.Fatalf("%d messages after the migration, want %d", len(all), len(want))
	}
	for _, m := range all {
		if !bytes.Equal(m.Raw, raws[m.MessageID]) || m.Status != want[m.MessageID] {
			t.Errorf("%s: status %s, %d bytes; want %s, %d bytes as queued", m.MessageID, m.Status, len(m.Raw), want[m.MessageID], len(raws[m.MessageID]))
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(claimed) != 2 || claimed[0].MessageID != "<m0@host>" || claimed[1].MessageID != "<m3@host>" {
		t.Fatalf("claimed %v, want the two waiting messages in order", claimed)
	}
	for _, m := range claimed {
		if !bytes.Equal(m.Raw, raws[m.MessageID]) {
			t.Errorf("claimed %s with %d bytes, want %d", m.MessageID, len(m.Raw), len(raws[m.MessageID]))
		}
	}
	if err := s.MarkAllSent(ctx, []int64{claimed[0].ID, claimed[1].ID}, t0); err != nil {
		t.Fatal(err)
	}
	var cols int
	if err := s.conn.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info('outbox') WHERE name = 'raw'`).Scan(&cols); err != nil || cols != 0 {
		t.Errorf("the outbox still has a raw column (%d, %v)", cols, err)
	}
}

// TestEventLogMovesToATableInWritingOrder: a database whose event log is
// the WITHOUT ROWID table of before opens with every game's events as they
// were, in order; the log takes appends, still refuses a second event at a
// taken place, and is still append-only.
func TestEventLogMovesToATableInWritingOrder(t *testing.T) {
	ctx := context.Background()
	want := map[string][]Event{}
	s := migratedFrom(t, 9, func(db *sql.DB) {
		for _, g := range []string{"dec26", "jan27"} {
			if _, err := db.ExecContext(ctx, `INSERT INTO games (id, status, created_at, updated_at) VALUES (?, 'running', ?, ?)`,
				g, toNanos(t0), toNanos(t0)); err != nil {
				t.Fatal(err)
			}
		}
		// The two games' events written in turn, as a host writes them.
		for seq := int64(1); seq <= 30; seq++ {
			for _, g := range []string{"jan27", "dec26"} {
				e := Event{Game: g, Seq: seq, Type: "status", Version: 1,
					Payload: json.RawMessage(fmt.Sprintf(`{"game":%q,"seq":%d,"text":%q}`, g, seq, strings.Repeat("x", int(seq)*13))),
					At:      t0.Add(time.Duration(seq) * time.Minute), Cause: fmt.Sprintf("inbox:%d", seq)}
				if _, err := db.ExecContext(ctx, `INSERT INTO events (game, seq, type, version, payload, created_at, cause) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					e.Game, e.Seq, e.Type, e.Version, string(e.Payload), toNanos(e.At), e.Cause); err != nil {
					t.Fatal(err)
				}
				want[g] = append(want[g], e)
			}
		}
	})
	for g, evs := range want {
		got, err := s.Events(ctx, g, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(evs) {
			t.Fatalf("%s: %d events after the migration, want %d", g, len(got), len(evs))
		}
		for i := range got {
			if got[i].Seq != evs[i].Seq || got[i].Type != evs[i].Type || got[i].Version != evs[i].Version ||
				!bytes.Equal(got[i].Payload, evs[i].Payload) || !got[i].At.Equal(evs[i].At) || got[i].Cause != evs[i].Cause {
				t.Errorf("%s event %d: %+v, want %+v", g, i+1, got[i], evs[i])
			}
		}
	}
	var withoutRowid int
	if err := s.conn.QueryRowContext(ctx, `SELECT wr FROM pragma_table_list WHERE name = 'events'`).Scan(&withoutRowid); err != nil || withoutRowid != 0 {
		t.Errorf("the event log is still WITHOUT ROWID (%d, %v)", withoutRowid, err)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AppendEvents(ctx, "dec26", 30, "inbox:31", NewEvent{Type: "vote", Version: 1, Payload: json.RawMessage(`{}`), At: t0})
		return err
	}); err != nil {
		t.Fatalf("append after the migration: %v", err)
	}
	if last, err := s.LastSeq(ctx, "dec26"); err != nil || last != 31 {
		t.Errorf("dec26's last event %d (%v), want 31", last, err)
	}
	if last, err := s.LastSeq(ctx, "jan27"); err != nil || last != 30 {
		t.Errorf("jan27's last event %d (%v), want 30", last, err)
	}
	for _, q := range []string{
		`INSERT INTO events (game, seq, type, version, payload, created_at) VALUES ('jan27', 7, 'vote', 1, '{}', 0)`,
		`UPDATE events SET type = 'kill' WHERE game = 'jan27' AND seq = 7`,
		`DELETE FROM events WHERE game = 'jan27'`,
	} {
		if err := s.Update(ctx, func(tx *Tx) error {
			_, err := tx.q.ExecContext(ctx, q)
			return err
		}); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
}

func TestEmbeddedMigrationsAreNumberedWithoutGaps(t *testing.T) {
	if len(migrations) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, m := range migrations {
		if m.version != i+1 || m.sql == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

// snapshotDir returns every file in dir with its SHA-256, to prove a refused
// database was left exactly as it was.
func snapshotDir(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = sha256.Sum256(b)
	}
	return out
}

func assertUnchanged(t *testing.T, dir string, before map[string][32]byte) {
	t.Helper()
	after := snapshotDir(t, dir)
	for name, h := range before {
		if after[name] != h {
			t.Errorf("%s changed", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok && !strings.HasSuffix(name, ".lock") {
			t.Errorf("%s appeared", name)
		}
	}
}

// filledDatabase creates a closed database with enough rows to span many
// pages.
func filledDatabase(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "full.db")
	s, err := Open(context.Background(), path, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i := range 200 {
			m := Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: uint32(i + 1), MessageID: fmt.Sprintf("<%d@x>", i),
				Raw: rawMail(fmt.Sprintf("<%d@x>", i), strings.Repeat("filler ", 300)), ReceivedAt: t0}
			if _, _, err := tx.RecordInbound(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRefusesNewerSchemaWithoutTouchingIt(t *testing.T) {
	dir := t.TempDir()
	path := filledDatabase(t, dir)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	before := snapshotDir(t, dir)

	_, err = Open(context.Background(), path, Config{Logger: quietLogger()})
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open: err %v, want ErrNewerSchema", err)
	}
	want := fmt.Sprintf("schema version %d; this program knows versions up to %d", len(migrations)+1, len(migrations))
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if _, err := OpenReadOnly(context.Background(), path, Config{Logger: quietLogger()}); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("OpenReadOnly: err %v, want ErrNewerSchema", err)
	}
	assertUnchanged(t, dir, before)
}

func TestRefusesCorruptFilesWithoutTouchingThem(t *testing.T) {
	cases := []struct {
		name    string
		make    func(t *testing.T, dir string) string
		wantMsg string
	}{
		{"text file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "text.db")
			os.WriteFile(p, []byte(strings.Repeat("this is not a database\n", 20)), 0o600)
			return p
		}, "not an SQLite database"},
		{"truncated header", func(t *testing.T, dir string) string {
			p := filledDatabase(t, dir)
			if err := os.Truncate(p, 50); err != nil {
				t.Fatal(err)
			}
			return p
		}, "too short"},
		{"truncated pages", func(t *testing.T, dir string) string {
			p := filledDatabase(t, dir)
			st, _ := os.Stat(p)
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			return p
		}, ""},
		{"scribbled pages", func(t *testing.T, dir string) string {
			p := filledDatabase(t, dir)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			pageSize := int(b[16])<<8 | int(b[17])
			if pageSize == 1 {
				pageSize = 65536
			}
			// Overwrite pages 3 to 6 wholesale: b-tree pages of the
			// schema's first tables.
			for i := 2 * pageSize; i < 6*pageSize && i < len(b); i++ {
				b[i] = byte(i*7 + 3)
			}
			os.WriteFile(p, b, 0o600)
			return p
		}, ""},
		{"another program's database", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "other.db")
			db, _ := sql.Open("sqlite", "file:"+p)
			if _, err := db.Exec("CREATE TABLE notes (x); INSERT INTO notes VALUES ('hello');"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			return p
		}, "another program"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.make(t, dir)
			before := snapshotDir(t, dir)
			s, err := Open(context.Background(), path, Config{Logger: quietLogger()})
			if err == nil {
				s.Close()
				t.Fatalf("Open accepted a damaged database")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open: err %v, want ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
			t.Logf("refused: %v", err)
			assertUnchanged(t, dir, before)
		})
	}
}

func TestOpenAfterCrashBeforeCheckpoint(t *testing.T) {
	// Copying the files of an open database gives what a crash leaves:
	// committed transactions still in the WAL, main file behind.
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "live.db"))
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, err := tx.AppendEvents(ctx, "g1", 0, "test", NewEvent{Type: "started", Version: 1, Payload: payload(1), At: t0})
		return err
	})
	crash := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(dir, "live.db"+suffix))
		if err != nil {
			t.Fatalf("read live.db%s: %v", suffix, err)
		}
		if err := os.WriteFile(filepath.Join(crash, "crash.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s2 := openAt(t, filepath.Join(crash, "crash.db"))
	evs, err := s2.Events(context.Background(), "g1", 0)
	if err != nil || len(evs) != 1 || evs[0].Type != "started" {
		t.Fatalf("after the crash: %v, %v", evs, err)
	}
}

func TestOneWriterProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	if _, err := Open(context.Background(), path, Config{Logger: quietLogger()}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: err %v, want ErrLocked", err)
	}
	ro, err := OpenReadOnly(context.Background(), path, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("OpenReadOnly while locked: %v", err)
	}
	defer ro.Close()
	if _, err := ro.Game(context.Background(), "g1"); err != nil {
		t.Errorf("read-only read: %v", err)
	}
	if err := ro.Update(context.Background(), func(*Tx) error { return nil }); !errors.Is(err, ErrReadOnly) {
		t.Errorf("read-only Update: err %v, want ErrReadOnly", err)
	}
	s.Close()
	s2 := openAt(t, path)
	if _, err := s2.Game(context.Background(), "g1"); err != nil {
		t.Errorf("after the first store closed: %v", err)
	}
}

func TestUpdateIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustCreateGame(t, s, "g1")
	in := Inbound{Mailbox: "INBOX", UIDValidity: 7, UID: 1, MessageID: "<a@x>", Raw: rawMail("<a@x>", "VOTE bob"), ReceivedAt: t0}
	out := OutMessage{MessageID: "<r1@host>", Game: "g1", Kind: "confirm", From: "host@example.org",
		To: []string{"alice@example.org"}, Raw: rawMail("<r1@host>", "ok")}
	work := func(tx *Tx) error {
		rec, dup, err := tx.RecordInbound(ctx, in)
		if err != nil || dup != NotDuplicate {
			return fmt.Errorf("record: %v %v", dup, err)
		}
		if _, err := tx.AppendEvents(ctx, "g1", 0, fmt.Sprintf("inbox:%d", rec.ID),
			NewEvent{Type: "voted", Version: 1, Payload: payload(map[string]string{"by": "alice"}), At: t0}); err != nil {
			return err
		}
		if _, err := tx.Enqueue(ctx, out, t0); err != nil {
			return err
		}
		return tx.SetInboundOutcome(ctx, rec.ID, OutcomeApplied, "", "g1")
	}
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx *Tx) error {
		if err := work(tx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Errorf("the panic was swallowed")
			}
		}()
		s.Update(ctx, func(tx *Tx) error {
			work(tx)
			panic("in the middle")
		})
	}()
	// A context that ends while the transaction runs: the statements
	// after the end still run (Update checks the context before the
	// commit, not in every statement), and nothing is committed.
	cctx, cancel := context.WithCancel(ctx)
	err = s.Update(cctx, func(tx *Tx) error {
		cancel()
		return work(tx)
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Update whose context ended returned %v, want context.Canceled", err)
	}
	if err := s.Update(cctx, work); !errors.Is(err, context.Canceled) {
		t.Fatalf("Update with an ended context returned %v, want context.Canceled", err)
	}
	for _, table := range []string{"inbox", "events", "outbox"} {
		if n := countRows(t, s, table); n != 0 {
			t.Errorf("%s has %d rows after rolled back updates", table, n)
		}
	}
	select {
	case <-s.OutboxSignal():
		t.Errorf("outbox signalled for a rolled back transaction")
	default:
	}

	if err := s.Update(ctx, work); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"inbox", "events", "outbox"} {
		if n := countRows(t, s, table); n != 1 {
			t.Errorf("%s has %d rows, want 1", table, n)
		}
	}
	select {
	case <-s.OutboxSignal():
	default:
		t.Errorf("no outbox signal after a commit that enqueued mail")
	}
}

func TestRecordInboundDeduplicates(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	m := Inbound{Mailbox: "INBOX", UIDValidity: 100, UID: 5, MessageID: " <abc@example.org> ",
		Raw: rawMail("<abc@example.org>", "VOTE bob"), ReceivedAt: t0}
	var first Inbound
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var dup Duplicate
		var err error
		first, dup, err = tx.RecordInbound(ctx, m)
		if err != nil || dup != NotDuplicate || first.ID == 0 || first.Outcome != OutcomePending {
			return fmt.Errorf("first record: %+v %v %v", first, dup, err)
		}
		return tx.SetInboundOutcome(ctx, first.ID, OutcomeRefused, "unknown token", "g1")
	})

	check := func(name string, m Inbound, want Duplicate) {
		t.Helper()
		update(t, s, func(ctx context.Context, tx *Tx) error {
			prev, dup, err := tx.RecordInbound(ctx, m)
			if err != nil {
				return err
			}
			if dup != want {
				t.Errorf("%s: duplicate %v, want %v", name, dup, want)
			}
			if want != NotDuplicate && (prev.ID != first.ID || prev.Outcome != OutcomeRefused ||
				prev.Reason != "unknown token" || prev.Game != "g1") {
				t.Errorf("%s: returned %+v, want the first record", name, prev)
			}
			return nil
		})
	}
	check("same UID", m, DuplicateUID)
	moved := m
	moved.UIDValidity, moved.UID = 101, 1
	check("new UIDVALIDITY, same Message-ID", moved, DuplicateMessageID)
	bare := moved
	bare.MessageID = "abc@example.org"
	bare.UID = 2
	check("Message-ID without brackets", bare, DuplicateMessageID)

	// Without a Message-ID the raw bytes are the key.
	noID := Inbound{Mailbox: "INBOX", UIDValidity: 101, UID: 10, Raw: []byte("Subject: x\r\n\r\nhi\r\n"), ReceivedAt: t0}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, dup, err := tx.RecordInbound(ctx, noID)
		if err != nil || dup != NotDuplicate {
			t.Errorf("first message without Message-ID: %v %v", dup, err)
		}
		return err
	})
	again := noID
	again.UID = 11
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, dup, err := tx.RecordInbound(ctx, again)
		if dup != DuplicateMessageID {
			t.Errorf("same bytes under a new UID: %v, want DuplicateMessageID", dup)
		}
		return err
	})
	other := noID
	other.UID, other.Raw = 12, []byte("Subject: x\r\n\r\nsomething else\r\n")
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, dup, err := tx.RecordInbound(ctx, other)
		if dup != NotDuplicate {
			t.Errorf("different bytes: %v, want NotDuplicate", dup)
		}
		return err
	})

	got, err := s.InboundByUID(ctx, "INBOX", 100, 5)
	if err != nil || got.ID != first.ID || string(got.Raw) != string(m.Raw) || !got.ReceivedAt.Equal(t0) {
		t.Errorf("InboundByUID: %+v, %v", got, err)
	}
	if _, err := s.InboundByUID(ctx, "INBOX", 100, 6); !errors.Is(err, ErrNotFound) {
		t.Errorf("InboundByUID of an unknown UID: %v", err)
	}
	pending, err := s.InboundByOutcome(ctx, OutcomePending, 0)
	if err != nil || len(pending) != 2 {
		t.Errorf("pending messages: %d, %v; want 2", len(pending), err)
	}
}

func TestEventLog(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustCreateGame(t, s, "g1")
	var evs []Event
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		evs, err = tx.AppendEvents(ctx, "g1", 0, "inbox:1",
			NewEvent{Type: "joined", Version: 1, Payload: payload("alice"), At: t0},
			NewEvent{Type: "joined", Version: 1, Payload: payload("bob"), At: t0.Add(time.Second)})
		return err
	})
	if len(evs) != 2 || evs[0].Seq != 1 || evs[1].Seq != 2 {
		t.Fatalf("appended %+v", evs)
	}
	err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AppendEvents(ctx, "g1", 1, "", NewEvent{Type: "late", Payload: payload(nil), At: t0})
		return err
	})
	if !errors.Is(err, ErrSeqConflict) {
		t.Errorf("append after a stale seq: %v, want ErrSeqConflict", err)
	}
	// A state ahead of the log is as wrong as one behind it, and a
	// refused append leaves none of its events, with nothing or several.
	for _, after := range []int64{0, 1, 3, 7} {
		for _, n := range []int{0, 1, 3} {
			var more []NewEvent
			for range n {
				more = append(more, NewEvent{Type: "late", Payload: payload(nil), At: t0})
			}
			err := s.Update(ctx, func(tx *Tx) error {
				_, err := tx.AppendEvents(ctx, "g1", after, "", more...)
				return err
			})
			if !errors.Is(err, ErrSeqConflict) || !strings.Contains(err.Error(), "log is at 2") {
				t.Errorf("append of %d after event %d with the log at 2: %v, want ErrSeqConflict", n, after, err)
			}
		}
	}
	if last, err := s.LastSeq(ctx, "g1"); err != nil || last != 2 {
		t.Errorf("after refused appends the log is at %d (%v), want 2", last, err)
	}
	err = s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AppendEvents(ctx, "nogame", 0, "", NewEvent{Type: "x", Payload: payload(1), At: t0})
		return err
	})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("append to a missing game: %v, want ErrNotFound", err)
	}
	err = s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AppendEvents(ctx, "g1", 2, "", NewEvent{Type: "x", Payload: json.RawMessage("{nope"), At: t0})
		return err
	})
	if err == nil {
		t.Errorf("invalid JSON payload accepted")
	}
	for _, stmt := range []string{"UPDATE events SET type = 'forged' WHERE seq = 1", "DELETE FROM events WHERE seq = 2"} {
		err := s.Update(ctx, func(tx *Tx) error {
			_, err := tx.w.execBare(ctx, stmt)
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err %v, want the append-only refusal", stmt, err)
		}
	}
	got, err := s.Events(ctx, "g1", 0)
	if err != nil || len(got) != 2 || got[0].Type != "joined" || string(got[1].Payload) != `"bob"` ||
		got[0].Cause != "inbox:1" || !got[1].At.Equal(t0.Add(time.Second)) {
		t.Errorf("Events: %+v, %v", got, err)
	}
	tail, _ := s.Events(ctx, "g1", 1)
	if len(tail) != 1 || tail[0].Seq != 2 {
		t.Errorf("Events after 1: %+v", tail)
	}
}

// counterState is the test fold's state: how many events, and their types.
type counterState struct {
	N     int      `json:"n"`
	Types []string `json:"types"`
}

func counterFold(game string, state []byte, evs []Event) ([]byte, error) {
	var st counterState
	if state != nil {
		if err := json.Unmarshal(state, &st); err != nil {
			return nil, err
		}
	}
	for _, e := range evs {
		st.N++
		st.Types = append(st.Types, e.Type)
	}
	return json.Marshal(st)
}

func TestRebuildFromSnapshotAndTail(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rebuild.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	mustCreateGame(t, s, "g2")
	appendN := func(game string, n int) {
		update(t, s, func(ctx context.Context, tx *Tx) error {
			last, err := tx.LastSeq(ctx, game)
			if err != nil {
				return err
			}
			for i := range n {
				if _, err := tx.AppendEvents(ctx, game, last+int64(i), "", NewEvent{Type: fmt.Sprintf("e%d", last+int64(i)+1), Version: 1, Payload: payload(i), At: t0}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	appendN("g1", 5)
	appendN("g2", 3)
	before, err := s.RebuildAll(ctx, counterFold, true)
	if err != nil || len(before) != 2 {
		t.Fatalf("RebuildAll: %v, %v", before, err)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		return tx.SaveSnapshot(ctx, "g1", 5, before[0].State, t0)
	})
	if err := s.Update(ctx, func(tx *Tx) error { return tx.SaveSnapshot(ctx, "g1", 6, before[0].State, t0) }); err == nil {
		t.Errorf("snapshot past the end of the log accepted")
	}
	appendN("g1", 4)
	want, err := counterFold("g1", nil, mustEvents(t, s, "g1"))
	if err != nil {
		t.Fatal(err)
	}

	// A restart rebuilds the same state from snapshot + tail.
	s.Close()
	s = openAt(t, path)
	got, err := s.RebuildAll(ctx, counterFold, true)
	if err != nil {
		t.Fatalf("RebuildAll after restart: %v", err)
	}
	if got[0].Game != "g1" || got[0].Seq != 9 || got[0].FromSnapshot != 5 || !got[0].Verified || string(got[0].State) != string(want) {
		t.Errorf("g1 rebuilt as %+v (state %s), want seq 9 from snapshot 5, state %s", got[0], got[0].State, want)
	}
	if got[1].Game != "g2" || got[1].Seq != 3 || got[1].FromSnapshot != 0 || string(got[1].State) != string(before[1].State) {
		t.Errorf("g2 rebuilt as %+v", got[1])
	}

	// A snapshot that is intact but wrong is caught by verification only.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		return tx.SaveSnapshot(ctx, "g1", 5, []byte(`{"n":5,"types":["forged"]}`), t0)
	})
	if _, err := s.Rebuild(ctx, "g1", counterFold, false); err != nil {
		t.Errorf("unverified rebuild: %v", err)
	}
	// Verified, it is passed over: the state is the fold of the whole log.
	rb, err := s.Rebuild(ctx, "g1", counterFold, true)
	if err != nil || !rb.Stale || string(rb.State) != string(want) || rb.Seq != 9 {
		t.Errorf("verified rebuild of a wrong snapshot: %+v (state %s), %v; want it marked stale and the state %s from the log",
			rb, rb.State, err, want)
	}
	// A snapshot damaged on disk fails its hash.
	update(t, s, func(ctx context.Context, tx *Tx) error {
		_, err := tx.w.execBare(ctx, `UPDATE snapshots SET state = CAST('{"n":1}' AS BLOB) WHERE game = 'g1'`)
		return err
	})
	if _, err := s.Rebuild(ctx, "g1", counterFold, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("rebuild from a damaged snapshot: %v, want ErrCorrupt", err)
	}
}

func mustEvents(t *testing.T, s *Store, game string) []Event {
	t.Helper()
	evs, err := s.Events(context.Background(), game, 0)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestOutbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outbox.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	msg := func(id string) OutMessage {
		return OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
			To: []string{"a@example.org", "b@example.org"}, Raw: rawMail(id, "post"), Cause: "inbox:1"}
	}
	for _, bad := range []OutMessage{
		{Kind: "x", From: "h@x", To: []string{"a@x"}, Raw: rawMail("<z@x>", "")},                     // no Message-ID
		{MessageID: "<y@x>", Kind: "x", From: "h@x", To: []string{"a@x"}, Raw: rawMail("<z@x>", "")}, // header differs
		{MessageID: "<z@x>", Kind: "x", From: "h@x", Raw: rawMail("<z@x>", "")},                      // no recipients
	} {
		if err := s.Update(ctx, func(tx *Tx) error { _, err := tx.Enqueue(ctx, bad, t0); return err }); err == nil {
			t.Errorf("Enqueue accepted %+v", bad)
		}
	}
	var ids []int64
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for _, id := range []string{"<m1@host>", "m2@host", "<m3@host>"} {
			n, err := tx.Enqueue(ctx, msg(id), t0)
			if err != nil {
				return err
			}
			ids = append(ids, n)
		}
		return nil
	})
	if err := s.Update(ctx, func(tx *Tx) error { _, err := tx.Enqueue(ctx, msg("<m1@host>"), t0); return err }); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate Message-ID: %v, want ErrExists", err)
	}
	if next, ok, err := s.NextAttempt(ctx); err != nil || !ok || !next.Equal(t0) {
		t.Errorf("NextAttempt: %v %v %v", next, ok, err)
	}

	if got, _ := s.ClaimDue(ctx, t0.Add(-time.Nanosecond), 10); len(got) != 0 {
		t.Errorf("claimed %d messages before they were due", len(got))
	}
	claimed, err := s.ClaimDue(ctx, t0, 2)
	if err != nil || len(claimed) != 2 || claimed[0].ID != ids[0] || claimed[1].ID != ids[1] {
		t.Fatalf("ClaimDue: %+v, %v", claimed, err)
	}
	c := claimed[1]
	if c.MessageID != "<m2@host>" || c.Status != OutSending || c.Kind != "thread" || c.Game != "g1" ||
		!slices.Equal(c.To, []string{"a@example.org", "b@example.org"}) || string(c.Raw) != string(rawMail("m2@host", "post")) {
		t.Errorf("claimed message: %+v", c)
	}
	// The third message goes to the recipients of the first two, which
	// are still being sent: it waits for them.
	if again, _ := s.ClaimDue(ctx, t0, 10); len(again) != 0 {
		t.Errorf("a second claim got %+v while earlier mail to the same recipients was being sent", again)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET status = 'sent' WHERE id IN (?, ?)`, ids[0], ids[1])
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.ClaimDue(ctx, t0, 10); len(again) != 1 || again[0].ID != ids[2] {
		t.Errorf("a second claim got %+v, want only the third message", again)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.q.ExecContext(ctx, `UPDATE outbox SET status = 'sending' WHERE id IN (?, ?)`, ids[0], ids[1])
		return err
	}); err != nil {
		t.Fatal(err)
	}

	if err := s.MarkSent(ctx, ids[0], t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkRetry(ctx, ids[1], t0.Add(time.Minute), "451 try later"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkFailed(ctx, ids[2], "550 no such user"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkSent(ctx, 999, t0); !errors.Is(err, ErrNotFound) {
		t.Errorf("MarkSent of a missing message: %v", err)
	}
	m0, _ := s.OutMessageByID(ctx, ids[0])
	m1, _ := s.OutMessageByID(ctx, ids[1])
	m2, _ := s.OutMessageByID(ctx, ids[2])
	if m0.Status != OutSent || m0.Attempts != 1 || !m0.SentAt.Equal(t0.Add(time.Second)) {
		t.Errorf("sent: %+v", m0)
	}
	if m1.Status != OutPending || m1.Attempts != 1 || !m1.NextAttempt.Equal(t0.Add(time.Minute)) || m1.LastError != "451 try later" {
		t.Errorf("retry: %+v", m1)
	}
	if m2.Status != OutFailed || m2.Attempts != 1 || m2.LastError != "550 no such user" {
		t.Errorf("failed: %+v", m2)
	}
	// The retry is the one pending message, due a minute on: the next
	// attempt after any time before it, none after it.
	if next, ok, err := s.NextAttemptAfter(ctx, t0); err != nil || !ok || !next.Equal(t0.Add(time.Minute)) {
		t.Errorf("NextAttemptAfter(t0): %v %v %v, want the retry's time", next, ok, err)
	}
	if next, ok, err := s.NextAttemptAfter(ctx, t0.Add(time.Minute)); err != nil || ok {
		t.Errorf("NextAttemptAfter(the retry's time): %v %v %v, want none", next, ok, err)
	}
	if got, _ := s.ClaimDue(ctx, t0.Add(59*time.Second), 10); len(got) != 0 {
		t.Errorf("a retry was claimed before its time")
	}
	if got, _ := s.ClaimDue(ctx, t0.Add(time.Minute), 10); len(got) != 1 || got[0].ID != ids[1] {
		t.Errorf("the retry was not claimed at its time: %+v", got)
	}

	// A message claimed when the process died is due again after a restart.
	s.Close()
	s = openAt(t, path)
	pending, err := s.OutMessages(ctx, OutPending)
	if err != nil || len(pending) != 1 || pending[0].ID != ids[1] {
		t.Errorf("after restart pending = %+v, %v", pending, err)
	}
	all, _ := s.OutMessages(ctx, "")
	if len(all) != 3 {
		t.Errorf("OutMessages: %d, want 3", len(all))
	}
}

func TestGamesParticipantsAndTokens(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, bad := range []string{"a", "ThisGame", "game-1", "abcdefghijklmnopqrstu", ""} {
		if err := s.Update(ctx, func(tx *Tx) error { return tx.CreateGame(ctx, bad, "signup", t0) }); err == nil {
			t.Errorf("game id %q accepted", bad)
		}
	}
	mustCreateGame(t, s, "mafia150")
	if err := s.Update(ctx, func(tx *Tx) error { return tx.CreateGame(ctx, "mafia150", "signup", t0) }); !errors.Is(err, ErrExists) {
		t.Errorf("second game with one id: %v, want ErrExists", err)
	}

	tokenRe := regexp.MustCompile(`^[a-z2-7]{16}$`)
	seen := map[string]bool{}
	for range 1000 {
		tok := NewToken()
		if !tokenRe.MatchString(tok) || seen[tok] {
			t.Fatalf("token %q: bad form or repeated", tok)
		}
		seen[tok] = true
	}

	var ref, alice Participant
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		if ref, err = tx.AddParticipant(ctx, "mafia150", "Referee", "ref@example.org", KindReferee, t0); err != nil {
			return err
		}
		alice, err = tx.AddParticipant(ctx, "mafia150", "Alice", " Alice@Example.org ", KindPlayer, t0)
		return err
	})
	if ref.Token == alice.Token || !tokenRe.MatchString(alice.Token) || alice.Address != "Alice@Example.org" || alice.Role != "" {
		t.Errorf("participants: %+v %+v", ref, alice)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AddParticipant(ctx, "nogame", "X", "x@x", KindPlayer, t0)
		return err
	}); !errors.Is(err, ErrNotFound) {
		t.Errorf("participant of a missing game: %v, want ErrNotFound", err)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.AddParticipant(ctx, "mafia150", "X", "x@x", "spectator", t0)
		return err
	}); err == nil {
		t.Errorf("unknown participant kind accepted")
	}

	got, err := s.ParticipantByToken(ctx, "mafia150", strings.ToUpper(alice.Token))
	if err != nil || got != alice {
		t.Errorf("lookup by upper-cased token: %+v, %v; want %+v", got, err, alice)
	}
	if _, err := s.ParticipantByToken(ctx, "other", alice.Token); !errors.Is(err, ErrNotFound) {
		t.Errorf("token of another game: %v, want ErrNotFound", err)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetRole(ctx, "mafia150", alice.Token, "Mafia"); err != nil {
			return err
		}
		return tx.SetParticipantStatus(ctx, "mafia150", alice.Token, StatusReplaced)
	})
	if _, err := s.ActiveParticipantByToken(ctx, "mafia150", alice.Token); !errors.Is(err, ErrNotFound) {
		t.Errorf("replaced participant's token still active: %v", err)
	}
	ps, err := s.Participants(ctx, "mafia150")
	if err != nil || len(ps) != 2 || ps[0].Name != "Alice" || ps[0].Role != "Mafia" || ps[0].Status != StatusReplaced || ps[1].Kind != KindReferee {
		t.Errorf("Participants: %+v, %v", ps, err)
	}
}

func TestGameDeadlines(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	for _, g := range []string{"aa", "bb", "cc"} {
		mustCreateGame(t, s, g)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetGameDeadline(ctx, "aa", t0.Add(2*time.Hour), t0); err != nil {
			return err
		}
		if err := tx.SetGameDeadline(ctx, "bb", t0.Add(time.Hour), t0); err != nil {
			return err
		}
		return tx.SetGameStatus(ctx, "cc", "running", t0.Add(time.Minute))
	})
	next, ok, err := s.NextDeadline(ctx)
	if err != nil || !ok || next.ID != "bb" || !next.Deadline.Equal(t0.Add(time.Hour)) {
		t.Errorf("NextDeadline: %+v %v %v", next, ok, err)
	}
	due, _ := s.DueGames(ctx, t0.Add(time.Hour))
	if len(due) != 1 || due[0].ID != "bb" {
		t.Errorf("DueGames at +1h: %+v", due)
	}
	due, _ = s.DueGames(ctx, t0.Add(3*time.Hour))
	if len(due) != 2 || due[0].ID != "bb" || due[1].ID != "aa" {
		t.Errorf("DueGames at +3h: %+v", due)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		if err := tx.SetGameDeadline(ctx, "bb", time.Time{}, t0); err != nil {
			return err
		}
		return tx.SetGameDeadline(ctx, "aa", time.Time{}, t0)
	})
	if _, ok, _ := s.NextDeadline(ctx); ok {
		t.Errorf("cleared deadlines still found")
	}
	g, err := s.Game(ctx, "cc")
	if err != nil || g.Status != "running" || !g.UpdatedAt.Equal(t0.Add(time.Minute)) || !g.CreatedAt.Equal(t0) {
		t.Errorf("Game: %+v %v", g, err)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.SetGameStatus(ctx, "zz", "x", t0) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("status of a missing game: %v", err)
	}
}

func TestHeldPosts(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	mustCreateGame(t, s, "g1")
	mustCreateGame(t, s, "g2")
	var p1, p2 Participant
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		if p1, err = tx.AddParticipant(ctx, "g1", "Dead Dan", "dan@example.org", KindPlayer, t0); err != nil {
			return err
		}
		p2, err = tx.AddParticipant(ctx, "g2", "Eve", "eve@example.org", KindPlayer, t0)
		return err
	})
	var h []HeldPost
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for _, hp := range []HeldPost{
			{Game: "g1", Author: p1.Token, Text: "I was the doctor!", Reason: "dead player"},
			{Game: "g1", Author: p1.Token, Text: "again", Reason: "dead player"},
			{Game: "g2", Author: p2.Token, Text: "my role message says", Reason: "role message"},
		} {
			got, err := tx.HoldPost(ctx, hp, t0)
			if err != nil {
				return err
			}
			h = append(h, got)
		}
		return nil
	})
	if h[0].Number != 1 || h[1].Number != 2 || h[2].Number != 1 || h[0].Status != Held {
		t.Errorf("numbers: %d %d %d", h[0].Number, h[1].Number, h[2].Number)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.HoldPost(ctx, HeldPost{Game: "g1", Author: "nosuchtoken", Text: "x", Reason: "x"}, t0)
		return err
	}); err == nil {
		t.Errorf("held post by an unknown author accepted")
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		p, err := tx.DecideHeldPost(ctx, "g1", 2, Rejected, t0.Add(time.Hour))
		if err == nil && (p.Status != Rejected || !p.DecidedAt.Equal(t0.Add(time.Hour))) {
			t.Errorf("decided: %+v", p)
		}
		return err
	})
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.DecideHeldPost(ctx, "g1", 2, Relayed, t0)
		return err
	}); !errors.Is(err, ErrDecided) {
		t.Errorf("deciding twice: %v, want ErrDecided", err)
	}
	if err := s.Update(ctx, func(tx *Tx) error {
		_, err := tx.DecideHeldPost(ctx, "g1", 9, Relayed, t0)
		return err
	}); !errors.Is(err, ErrNotFound) {
		t.Errorf("deciding a missing post: %v, want ErrNotFound", err)
	}
	held, _ := s.HeldPosts(ctx, "g1", Held)
	all, _ := s.HeldPosts(ctx, "g1", "")
	if len(held) != 1 || held[0].Number != 1 || held[0].Text != "I was the doctor!" || len(all) != 2 {
		t.Errorf("HeldPosts: held %+v, all %d", held, len(all))
	}
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	update(t, s, func(ctx context.Context, tx *Tx) error {
		for i, addr := range []string{"Bob@Example.org", "bob@example.org ", "BOB@EXAMPLE.ORG"} {
			n, err := tx.RecordBounce(ctx, addr, fmt.Sprintf("550 mailbox full #%d", i), t0.Add(time.Duration(i)*time.Hour))
			if err != nil {
				return err
			}
			if n != i+1 {
				t.Errorf("bounce %d counted as %d", i+1, n)
			}
		}
		return nil
	})
	rec, err := s.PlayerRecord(ctx, "bob@example.org")
	if err != nil || rec.Bounces != 3 || rec.LastBounce != "550 mailbox full #2" || !rec.LastBounceAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("PlayerRecord: %+v %v", rec, err)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error { return tx.ResetBounces(ctx, "BOB@example.org") })
	if rec, _ := s.PlayerRecord(ctx, "bob@example.org"); rec.Bounces != 0 {
		t.Errorf("bounces after reset: %d", rec.Bounces)
	}
	if rec, err := s.PlayerRecord(ctx, "new@example.org"); err != nil || rec.Bounces != 0 {
		t.Errorf("unknown address: %+v %v", rec, err)
	}

	var sus Suspension
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		sus, err = tx.Suspend(ctx, "Carl@Example.org", "two missed votes", "g1", t0)
		return err
	})
	act, err := s.ActiveSuspensions(ctx, "carl@example.org")
	if err != nil || len(act) != 1 || act[0].ID != sus.ID || act[0].Reason != "two missed votes" || act[0].Game != "g1" {
		t.Fatalf("ActiveSuspensions: %+v %v", act, err)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error {
		return tx.ConsumeSuspension(ctx, sus.ID, "g2", t0.Add(time.Hour))
	})
	if act, _ := s.ActiveSuspensions(ctx, "carl@example.org"); len(act) != 0 {
		t.Errorf("a served suspension is still active: %+v", act)
	}
	if err := s.Update(ctx, func(tx *Tx) error { return tx.ConsumeSuspension(ctx, sus.ID, "g3", t0) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("serving a suspension twice: %v, want ErrNotFound", err)
	}
}

func TestBackupWhileWriting(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	s := openAt(t, filepath.Join(dir, "live.db"))
	mustCreateGame(t, s, "g1")

	// The writer records one inbound message and one event per transaction,
	// as fast as it can, until the backups are done.
	writes := make(chan int, 1)
	writeErr := make(chan error, 1)
	go func() {
		n := 0
		defer func() { writes <- n }()
		for ctx.Err() == nil {
			err := s.Update(context.Background(), func(tx *Tx) error {
				m := Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: uint32(n + 1), MessageID: fmt.Sprintf("<%d@x>", n),
					Raw: rawMail(fmt.Sprintf("<%d@x>", n), strings.Repeat("x", 1000)), ReceivedAt: t0}
				rec, _, err := tx.RecordInbound(ctx, m)
				if err != nil {
					return err
				}
				_, err = tx.AppendEvents(context.Background(), "g1", int64(n), fmt.Sprintf("inbox:%d", rec.ID),
					NewEvent{Type: "applied", Version: 1, Payload: payload(n), At: t0})
				return err
			})
			if err != nil {
				writeErr <- err
				return
			}
			n++
		}
	}()
	waitFor := func(min int64) {
		deadline := time.Now().Add(60 * time.Second)
		for {
			last, err := s.LastSeq(context.Background(), "g1")
			if err != nil {
				t.Fatal(err)
			}
			if last >= min {
				return
			}
			select {
			case err := <-writeErr:
				t.Fatalf("writer: %v", err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("writer stuck at %d events", last)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	var sizes []int64
	for i := range 3 {
		waitFor(int64(20 * (i + 1)))
		dest := filepath.Join(dir, fmt.Sprintf("backup-%d.db", i))
		if err := s.Backup(context.Background(), dest); err != nil {
			t.Fatalf("Backup %d: %v", i, err)
		}
		b, err := OpenReadOnly(context.Background(), dest, Config{Logger: quietLogger()})
		if err != nil {
			t.Fatalf("open backup %d: %v", i, err)
		}
		evs, err := b.Events(context.Background(), "g1", 0)
		if err != nil {
			t.Fatalf("backup %d events: %v", i, err)
		}
		// Each transaction wrote one inbound row and one event: a
		// consistent snapshot has exactly as many of each.
		if inbox := countRows(t, b, "inbox"); inbox != len(evs) || len(evs) < 20*(i+1) {
			t.Errorf("backup %d: %d inbound rows, %d events: not one consistent snapshot", i, inbox, len(evs))
		}
		sizes = append(sizes, int64(len(evs)))
		b.Close()
	}
	cancel()
	total := <-writes
	t.Logf("backups taken at %v events while %d transactions committed", sizes, total)
	if err := s.Backup(context.Background(), filepath.Join(dir, "backup-0.db")); !errors.Is(err, os.ErrExist) {
		t.Errorf("backup over an existing file: %v, want ErrExist", err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestTimesRoundTripExactly(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	local := time.Date(2026, 7, 4, 23, 59, 59, 999999999, time.FixedZone("EDT", -4*3600))
	var zero, exact Inbound
	update(t, s, func(ctx context.Context, tx *Tx) error {
		var err error
		if zero, _, err = tx.RecordInbound(ctx, Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: 1, Raw: []byte("a")}); err != nil {
			return err
		}
		exact, _, err = tx.RecordInbound(ctx, Inbound{Mailbox: "INBOX", UIDValidity: 1, UID: 2, Raw: []byte("b"), ReceivedAt: local})
		return err
	})
	gotZero, err := s.InboundByID(ctx, zero.ID)
	if err != nil || !gotZero.ReceivedAt.IsZero() {
		t.Errorf("zero time read back as %v (%v)", gotZero.ReceivedAt, err)
	}
	gotExact, err := s.InboundByID(ctx, exact.ID)
	if err != nil || !gotExact.ReceivedAt.Equal(local) || gotExact.ReceivedAt.Location() != time.UTC {
		t.Errorf("%v read back as %v (%v), want the same instant in UTC", local, gotExact.ReceivedAt, err)
	}
}

// A deadline is applied like a message: its events, its mail and the next
// deadline commit together, so across a crash it fires once.
func TestDeadlineFiresOnceAcrossACrash(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clock.db")
	s := openAt(t, path)
	mustCreateGame(t, s, "g1")
	update(t, s, func(ctx context.Context, tx *Tx) error { return tx.SetGameDeadline(ctx, "g1", t0, t0) })

	fire := func(s *Store, now time.Time, crash bool) error {
		return s.Update(ctx, func(tx *Tx) error {
			due, err := tx.DueGames(ctx, now)
			if err != nil || len(due) == 0 {
				return err
			}
			last, err := tx.LastSeq(ctx, "g1")
			if err != nil {
				return err
			}
			if _, err := tx.AppendEvents(ctx, "g1", last, "deadline",
				NewEvent{Type: "day_closed", Version: 1, Payload: payload(last), At: now}); err != nil {
				return err
			}
			id := fmt.Sprintf("<close-%d@host>", last)
			if _, err := tx.Enqueue(ctx, OutMessage{MessageID: id, Game: "g1", Kind: "thread", From: "host@example.org",
				To: []string{"all@example.org"}, Raw: rawMail(id, "Day 1 is over."), Cause: "deadline"}, now); err != nil {
				return err
			}
			if err := tx.SetGameDeadline(ctx, "g1", now.Add(24*time.Hour), now); err != nil {
				return err
			}
			if crash {
				return errors.New("killed before commit")
			}
			return nil
		})
	}
	late := t0.Add(3 * time.Hour) // the host was down past the deadline
	if err := fire(s, late, true); err == nil {
		t.Fatal("the simulated crash did not fail the update")
	}
	if due, _ := s.DueGames(ctx, late); len(due) != 1 {
		t.Fatalf("after a crash mid-deadline the game is not due any more: %+v", due)
	}
	if err := fire(s, late, false); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openAt(t, path)
	if err := fire(s, late, false); err != nil { // a restart checks again
		t.Fatal(err)
	}
	evs := mustEvents(t, s, "g1")
	out, _ := s.OutMessages(ctx, "")
	g, _ := s.Game(ctx, "g1")
	if len(evs) != 1 || len(out) != 1 || !g.Deadline.Equal(late.Add(24*time.Hour)) {
		t.Errorf("after the deadline: %d events, %d messages (want 1 and 1), next deadline %v", len(evs), len(out), g.Deadline)
	}
}

// TestWriterActive: a read-only open leaves the files of a database with a
// running writer alone, and knows one runs by its lock.
func TestWriterActive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	if writerActive(path) {
		t.Fatal("a writer is active before any open")
	}
	s, err := Open(context.Background(), path, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if !writerActive(path) {
		t.Fatal("the open writer is not seen")
	}
	s.Close()
	if writerActive(path) {
		t.Fatal("a closed writer is still seen")
	}
}

// The database, its WAL and a backup hold every token and role: they are
// created for the host's user alone, in a folder of its own, and an
// existing database readable by others is made private.
func TestFilesArePrivate(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "games")
	path := filepath.Join(dir, "games.db")
	s, err := Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, func(ctx context.Context, tx *Tx) error { return tx.CreateGame(ctx, "g1", "signup", t0) })
	backup := filepath.Join(t.TempDir(), "backup.db")
	if err := s.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	mode := func(p string) os.FileMode {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600, backup: 0o600} {
		if got := mode(p); got != want {
			t.Errorf("%s has mode %o, want %o", p, got, want)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := mode(path); got != 0o600 {
		t.Errorf("a database left readable by others has mode %o after Open, want 600", got)
	}
}
