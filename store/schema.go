package store

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"strconv"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// applicationID marks a mafiamail database in the SQLite header ("MAFI").
const applicationID = 0x4d414649

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one schema step; version N turns a version N-1 database into
// a version N one.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations are the schema steps, in order, from migrations/NNNN_name.sql.
var migrations = mustLoadMigrations(migrationFS, "migrations")

func mustLoadMigrations(fsys fs.FS, dir string) []migration {
	ms, err := loadMigrations(fsys, dir)
	if err != nil {
		panic(err)
	}
	return ms
}

// loadMigrations reads NNNN_name.sql files; their numbers must run 1..N.
func loadMigrations(fsys fs.FS, dir string) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("store: read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("store: migration %q is not named NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("store: read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("store: migrations must be numbered 1..N without gaps; found %d at position %d", m.version, i+1)
		}
	}
	return ms, nil
}

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// probe finds the schema version of the database at path without changing
// it: 0 for a database that does not exist yet. It returns ErrCorrupt for a
// damaged or foreign file and ErrNewerSchema for a newer one. tidy allows it
// to remove the empty -wal and -shm files its own read left beside a refused
// file; only a caller that holds the database's lock may ask for that, as a
// writer starting up at the same moment may have just created them.
func probe(ctx context.Context, dbPath string, tidy bool) (version int, err error) {
	fresh, err := looksFresh(dbPath)
	if err != nil {
		return 0, err
	}
	if fresh {
		return 0, nil
	}

	// A read-only connection cannot write the database. In WAL mode it
	// still creates empty -wal and -shm files if they are missing; remove
	// those again so that a refused database is left exactly as found.
	// Only then: a database that is accepted may have a writer by now,
	// and its WAL must never be touched.
	walExisted := exists(dbPath + "-wal")
	shmExisted := exists(dbPath + "-shm")
	defer func() {
		if err != nil && tidy && !walExisted {
			removeIfEmpty(dbPath + "-wal")
			if !shmExisted && !exists(dbPath+"-wal") {
				os.Remove(dbPath + "-shm")
			}
		}
	}()

	db, err := sql.Open("sqlite", "file:"+escapePath(dbPath)+"?mode=ro&"+
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()))
	if err != nil {
		return 0, fmt.Errorf("store: open %s: %w", dbPath, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	var appID, tables int
	err = db.QueryRowContext(ctx, `SELECT
		(SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema)`).Scan(&appID, &version, &tables)
	if err != nil {
		return 0, fmt.Errorf("store: read %s: %w", dbPath, classify(err))
	}
	switch {
	case appID == 0 && version == 0 && tables == 0:
		// An empty database, e.g. one created before a crash.
		return 0, nil
	case appID != applicationID:
		return 0, fmt.Errorf("store: %w: %s is an SQLite database of another program (application_id %#x)", ErrCorrupt, dbPath, appID)
	case version > len(migrations):
		return 0, fmt.Errorf("store: %w: %s has schema version %d; this program knows versions up to %d: run a newer mafiamail, or restore a backup",
			ErrNewerSchema, dbPath, version, len(migrations))
	}

	// quick_check reads every page and checks the b-trees. For a file of
	// 600 MB that is a third of a second when the system holds the file in
	// memory, and as long as reading it from disk otherwise (twelve seconds
	// on a small virtual machine): a host starts seldom, and must not start
	// on a damaged file.
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return 0, fmt.Errorf("store: check %s: %w", dbPath, classify(err))
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return 0, fmt.Errorf("store: check %s: %w", dbPath, classify(err))
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: check %s: %w", dbPath, classify(err))
	}
	if len(problems) > 0 {
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("and %d more", len(problems)-5))
		}
		return 0, fmt.Errorf("store: %w: %s fails its integrity check: %s", ErrCorrupt, dbPath, strings.Join(problems, "; "))
	}
	return version, nil
}

// looksFresh reports whether no database exists at path yet: no file, or an
// empty one with no write-ahead log holding its first transactions. A file
// that does not start as SQLite files do is ErrCorrupt.
func looksFresh(dbPath string) (bool, error) {
	f, err := os.Open(dbPath)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: open %s: %w", dbPath, err)
	}
	defer f.Close()
	head := make([]byte, 100)
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && (errors.Is(err, io.EOF)):
		// Empty: fresh, unless a WAL holds the first commits (a crash
		// before the first checkpoint).
		if st, err := os.Stat(dbPath + "-wal"); err == nil && st.Size() > 0 {
			return false, nil
		}
		return true, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return false, fmt.Errorf("store: %w: %s is %d bytes, too short for an SQLite database", ErrCorrupt, dbPath, n)
	case err != nil:
		return false, fmt.Errorf("store: read %s: %w", dbPath, err)
	}
	if !bytes.HasPrefix(head, sqliteMagic) {
		return false, fmt.Errorf("store: %w: %s is not an SQLite database", ErrCorrupt, dbPath)
	}
	return false, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func removeIfEmpty(p string) {
	if st, err := os.Stat(p); err == nil && st.Size() == 0 {
		os.Remove(p)
	}
}

// migrate applies the migrations after version from, each in its own
// transaction together with the new user_version, so a crash leaves the
// database at one version or the next, never between.
func migrate(ctx context.Context, db *sql.DB, from int, ms []migration, log *slog.Logger) error {
	for _, m := range ms[from:] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("store: migration %d (%s): begin: %w", m.version, m.name, classify(err))
		}
		// A concurrent Open cannot exist (the lock file), but check the
		// version again inside the transaction all the same.
		var cur int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, classify(err))
		}
		if cur != m.version-1 {
			tx.Rollback()
			return fmt.Errorf("store: migration %d (%s): database is at version %d, want %d", m.version, m.name, cur, m.version-1)
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %d (%s): %w", m.version, m.name, classify(err))
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
			tx.Rollback()
			return fmt.Errorf("store: migration %d (%s): set version: %w", m.version, m.name, classify(err))
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("store: migration %d (%s): commit: %w", m.version, m.name, classify(err))
		}
		log.Info("database migrated", "version", m.version, "migration", m.name)
	}
	return nil
}

// classify marks SQLite's corruption errors with ErrCorrupt, so that callers
// can tell a damaged file from a passing failure.
func classify(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return err
}
