package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver, pure Go

	"github.com/mafiamail/mafiamail/internal/hostkey"
)

// Errors that callers may test with errors.Is.
var (
	// ErrNotFound: no row with that key.
	ErrNotFound = errors.New("not found")
	// ErrExists: a row with that key exists already.
	ErrExists = errors.New("already exists")
	// ErrReadOnly: a write on a store opened with OpenReadOnly.
	ErrReadOnly = errors.New("store opened read-only")
	// ErrLocked: another process has the database open for writing.
	ErrLocked = errors.New("database is in use by another process")
	// ErrNewerSchema: the database was written by a newer program.
	ErrNewerSchema = errors.New("database schema is newer than this program")
	// ErrCorrupt: the file is not an intact mafiamail database.
	ErrCorrupt = errors.New("database is corrupt or not a mafiamail database")
	// ErrSeqConflict: events were appended after a state the caller
	// believed current.
	ErrSeqConflict = errors.New("event sequence conflict")
)

// busyTimeout is how long a connection waits for a lock before SQLITE_BUSY.
// The one writer rarely waits at all; readers and backups never block it in
// WAL mode, but a checkpoint may briefly.
const busyTimeout = 10 * time.Second

// Store is the durable state of the host. Its methods are safe for
// concurrent use; writes are serialized through Update.
type Store struct {
	path     string
	readOnly bool
	log      *slog.Logger

	// writer has exactly one connection, conn, which the store holds for
	// its life; every write transaction starts with BEGIN IMMEDIATE on it.
	writer *sql.DB
	conn   *sql.Conn
	// read is a pool of query_only connections for reads outside Update.
	read *sql.DB
	reader

	mu    sync.Mutex // serializes Update, guards stmts, unsynced and active
	stmts map[string]*sql.Stmt
	// active keeps the active participants write transactions found by
	// token or wrote (see Tx.ActiveParticipantByToken).
	active activeParticipants
	// unsynced is set while conn runs with synchronous=NORMAL, after a
	// transaction that need not be on disk at once (see updateUnsynced).
	unsynced bool
	lock     *fileLock
	outbox   chan struct{}
	closed   bool
	// key derives the tokens the store hands out (see UseKey); nil makes
	// them from crypto/rand. Guarded by mu.
	key *hostkey.Key
}

// Config tunes Open. The zero value is the production setting.
type Config struct {
	// Logger, default slog.Default().
	Logger *slog.Logger
	// ReadConns is the size of the read pool; default 4.
	ReadConns int
}

// Open opens the database at path, creating it if it does not exist and
// applying any pending migrations. It refuses, without changing the file, a
// database written by a newer program (ErrNewerSchema) and one that is
// damaged or not a mafiamail database (ErrCorrupt). Only one process may
// have a database open with Open at a time (ErrLocked).
//
// Outgoing messages that a previous process had claimed but not finished
// are made due again: they may have been handed to SMTP already, and
// sending them again, with the same Message-ID, is what at-least-once
// delivery means.
func Open(ctx context.Context, path string, opts Config) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if err := privateDatabase(path); err != nil {
		return nil, err
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	s, err := open(ctx, path, opts, lock, false)
	if err != nil {
		lock.release()
		return nil, err
	}
	if err := keepPrivate(path, path+"-wal", path+"-shm"); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// privateDatabase makes sure that only the host's own user can read the
// database, which holds every token and role: a folder it creates is 0700,
// a new database file is created 0600 before SQLite opens it (SQLite gives
// the -wal and -shm files the database's mode), and an existing one loses
// any access by others.
func privateDatabase(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("store: create folder for %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	return keepPrivate(path)
}

// keepPrivate takes away the access of group and others to the files that
// exist of paths.
func keepPrivate(paths ...string) error {
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if mode := st.Mode().Perm(); mode&0o077 != 0 {
			if err := os.Chmod(p, mode&^0o077); err != nil {
				return fmt.Errorf("store: make %s private: %w", p, err)
			}
		}
	}
	return nil
}

// OpenReadOnly opens an existing database for reading and for Backup, while
// another process may be writing it. It checks the file as Open does but
// never migrates it: a database at another schema version is refused.
func OpenReadOnly(ctx context.Context, path string, opts Config) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ReadConns <= 0 {
		opts.ReadConns = 2
	}
	return open(ctx, path, opts, nil, true)
}

func open(ctx context.Context, path string, opts Config, lock *fileLock, readOnly bool) (*Store, error) {
	// A read-only open tidies after a refused file only while no writer
	// runs: a writer starting up may have just created the -wal file.
	version, err := probe(ctx, path, lock != nil || !writerActive(path))
	if err != nil {
		return nil, err
	}
	latest := len(migrations)
	if readOnly && version != latest {
		return nil, fmt.Errorf("store: %s has schema version %d, this program reads version %d: open it read-write once to migrate", path, version, latest)
	}

	s := &Store{
		path:     path,
		readOnly: readOnly,
		log:      opts.Logger.With("component", "store"),
		lock:     lock,
		outbox:   make(chan struct{}, 1),
	}
	if !readOnly {
		// temp_store(MEMORY): a savepoint's journal (each message of a
		// group commit has one) stays in memory instead of spilling to a
		// temporary file once it passes 64 KiB; it holds only the pages
		// the message changed.
		s.writer, err = sql.Open("sqlite", dsn(path, "_pragma=journal_mode(WAL)", "_pragma=temp_store(MEMORY)", "_txlock=immediate"))
		if err != nil {
			return nil, fmt.Errorf("store: open %s: %w", path, err)
		}
		s.writer.SetMaxOpenConns(1)
		s.writer.SetMaxIdleConns(1)
		s.writer.SetConnMaxLifetime(0)
		s.writer.SetConnMaxIdleTime(0)
		if err := s.writer.PingContext(ctx); err != nil {
			s.writer.Close()
			return nil, fmt.Errorf("store: open %s: %w", path, classify(err))
		}
		if err := migrate(ctx, s.writer, version, migrations, s.log); err != nil {
			s.writer.Close()
			return nil, err
		}
		if n, err := releaseClaims(ctx, s.writer); err != nil {
			s.writer.Close()
			return nil, err
		} else if n > 0 {
			s.log.Info("outgoing messages claimed by a previous run are due again", "count", n)
		}
		if s.conn, err = s.writer.Conn(ctx); err != nil {
			s.writer.Close()
			return nil, fmt.Errorf("store: open %s: %w", path, classify(err))
		}
	}

	s.read, err = sql.Open("sqlite", dsn(path, "_pragma=query_only(1)"))
	if err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, err)
	}
	s.read.SetMaxOpenConns(opts.ReadConns)
	s.read.SetMaxIdleConns(opts.ReadConns)
	if err := s.read.PingContext(ctx); err != nil {
		s.closeDBs()
		return nil, fmt.Errorf("store: open %s for reading: %w", path, classify(err))
	}
	s.reader = reader{q: s.read}
	return s, nil
}

// dsn is the connection string for path, with the settings every
// connection shares and the extra parameters given.
func dsn(path string, extra ...string) string {
	params := []string{
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=foreign_keys(1)",
		// FULL: a commit is on disk, WAL included, before Update returns.
		"_pragma=synchronous(FULL)",
	}
	params = append(params, extra...)
	return "file:" + escapePath(path) + "?" + strings.Join(params, "&")
}

// escapePath escapes the characters that would end the path part of an
// SQLite URI filename.
func escapePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database. Update calls in progress finish first.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, st := range s.stmts {
		st.Close()
	}
	err := s.closeDBs()
	if s.lock != nil {
		s.lock.release()
	}
	return err
}

func (s *Store) closeDBs() error {
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	if s.conn != nil {
		errs = append(errs, s.conn.Close())
	}
	if s.writer != nil {
		errs = append(errs, s.writer.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("store: close %s: %w", s.path, err)
	}
	return nil
}

// OutboxSignal receives a value after each committed transaction that
// enqueued outgoing mail, so that a sender can wait for work instead of
// polling. Signals coalesce: one value may stand for many transactions.
func (s *Store) OutboxSignal() <-chan struct{} { return s.outbox }

// Update runs fn in one write transaction (BEGIN IMMEDIATE) and commits it
// if fn returns nil; otherwise, or if fn panics, nothing fn did is kept.
// Calls are serialized: there is one writer, and fn must not call Update
// itself. When Update returns nil the transaction is durable
// (synchronous=FULL).
//
// When ctx ends, the transaction is not committed. Its statements run
// under ctx without its end (context.WithoutCancel), and Update checks ctx
// before the commit instead: for each statement run under a context that
// can end, database/sql and the driver start a goroutine to watch it, and
// those goroutines cost a command more CPU than any of its statements. A
// statement here is short, so an end waits for it at most. For the same
// reason the transaction is the connection's own BEGIN and COMMIT, not a
// database/sql Tx: a Tx's context always can end.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return s.update(ctx, true, fn)
}

// updateUnsynced is Update for a transaction that a power failure may
// lose without harm: a claim of outgoing mail, which the next run undoes
// anyway (Open releases it, releaseClaims), and the record of mail the
// server accepted, whose loss sends that mail again with the same bytes
// and Message-ID, as a process that dies before the record does. Its
// commit does not wait for the disk (synchronous=NORMAL), which spares
// the sender two fsyncs per batch while it holds the one writer. It is no
// less atomic, a process that dies keeps it (the operating system has
// it), and the next Update's commit puts it on disk with its own, since
// the WAL is written in order.
func (s *Store) updateUnsynced(ctx context.Context, fn func(tx *Tx) error) error {
	return s.update(ctx, false, fn)
}

// update runs fn in one write transaction; its commit is on disk when it
// returns if synced is set.
func (s *Store) update(ctx context.Context, synced bool, fn func(tx *Tx) error) (err error) {
	if s.readOnly {
		return fmt.Errorf("store: update: %w", ErrReadOnly)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("store: update: %w", sql.ErrConnDone)
	}

	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	w := cachedTx{s: s}
	// The setting holds until changed: a transaction that must be on disk
	// does not begin until FULL is back.
	if synced == s.unsynced {
		level := "FULL"
		if !synced {
			level = "NORMAL"
		}
		if _, err := w.execBare(ctx, "PRAGMA synchronous = "+level); err != nil {
			return fmt.Errorf("store: synchronous=%s: %w", level, classify(err))
		}
		s.unsynced = !synced
	}
	if _, err := w.execBare(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("store: begin: %w", classify(err))
	}
	tx := &Tx{reader: reader{q: w}, w: w}
	committed := false
	defer func() {
		if !committed {
			s.rollback(ctx)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	written := tx.readWritten(ctx)
	if _, err := w.execBare(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("store: commit: %w", classify(err))
	}
	committed = true
	for _, p := range written {
		s.active.put(p)
	}
	if tx.enqueued {
		select {
		case s.outbox <- struct{}{}:
		default:
		}
	}
	return nil
}

// rollback ends a transaction that is not to be kept. A COMMIT that failed
// may have ended it already (SQLite rolls back on some errors): then there
// is nothing to roll back.
func (s *Store) rollback(ctx context.Context) {
	if _, err := (cachedTx{s: s}).execBare(ctx, "ROLLBACK"); err != nil && !strings.Contains(err.Error(), "no transaction is active") {
		s.log.Error("rollback failed", "err", err)
	}
}

// Tx is one write transaction, valid only inside the function given to
// Update. It offers every read of Store too, seeing the transaction's own
// writes.
type Tx struct {
	reader
	// w runs the transaction's statements on the writer connection.
	w        cachedTx
	enqueued bool
	// savepoints counts the savepoints opened, for their names.
	savepoints int
	// wroteParticipants is set once the transaction has added or
	// changed a participant: from then on its lookups by token go to
	// the table (see Tx.ActiveParticipantByToken).
	wroteParticipants bool
	// written are the participants it added or changed, kept once it
	// commits as the table then holds them (see readWritten).
	written []participantKey
}

// cachedTx runs a write transaction's statements as statements prepared
// once on the writer connection: parsing SQL is a good part of the CPU
// time of a small transaction. A statement is prepared the first time a
// transaction runs it. Only Update uses it, holding s.mu. Every statement
// of a transaction, its BEGIN and COMMIT included, runs through it, under
// its context without the context's end: see Update.
type cachedTx struct {
	s *Store
}

// stmt is query prepared on the writer connection, or nil if it cannot be
// prepared (it then runs unprepared, and the error shows there).
func (c cachedTx) stmt(ctx context.Context, query string) *sql.Stmt {
	if st, ok := c.s.stmts[query]; ok {
		return st
	}
	st, err := c.s.conn.PrepareContext(ctx, query)
	if err != nil {
		c.s.log.Debug("statement not cached", "err", err)
		return nil
	}
	if c.s.stmts == nil {
		c.s.stmts = map[string]*sql.Stmt{}
	}
	c.s.stmts[query] = st
	return st
}

// execBare runs a statement without arguments: a transaction's own BEGIN
// and COMMIT, the setting of its synchronous level, a savepoint's (their
// names, sp1, sp2 and on, come back in every transaction). They too are
// prepared once: a group of small messages runs a few of them for each
// message, and preparing one costs about as much as running it.
func (c cachedTx) execBare(ctx context.Context, query string) (sql.Result, error) {
	return c.ExecContext(ctx, query)
}

func (c cachedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx)
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.s.conn.ExecContext(ctx, query, args...)
}

func (c cachedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.s.conn.QueryContext(ctx, query, args...)
}

func (c cachedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.s.conn.QueryRowContext(ctx, query, args...)
}

// queryer is what *sql.DB, *sql.Conn and cachedTx have in common.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// reader holds the read methods shared by Store (read pool) and Tx.
type reader struct{ q queryer }

// Time columns hold nanoseconds since the Unix epoch: exact, sortable, and
// free of time zone questions. The zero time.Time, which has no such
// representation, is stored as 0 and read back as the zero time.
func toNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// nullNanos maps the zero time to NULL.
func nullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

func fromNullNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromNanos(n.Int64)
}

func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}
