package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database to dest while the host
// keeps running: VACUUM INTO reads one snapshot of the database, in a read
// transaction of its own, and in WAL mode that blocks no writer. The copy
// is written beside dest, synced, checked, and only then linked into
// place, so dest is either absent or a complete database. dest must not
// exist.
func (s *Store) Backup(ctx context.Context, dest string) error {
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("store: backup to %s: %w", dest, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("store: backup to %s: %w", dest, err)
	}
	suffix := make([]byte, 6)
	rand.Read(suffix)
	tmp := filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp-"+hex.EncodeToString(suffix))
	defer func() {
		// Checking the copy may have opened it in WAL mode.
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(tmp + suffix)
		}
	}()

	// VACUUM INTO must run on a connection that may write (it writes the
	// new file), so neither the writer, which it would hold up, nor the
	// query_only read pool.
	db, err := sql.Open("sqlite", dsn(s.path))
	if err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	db.SetMaxOpenConns(1)
	_, err = db.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: backup to %s: %w", dest, classify(err))
	}

	// The copy holds every token and role, as the database does.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("store: backup to %s: %w", dest, err)
	}
	// SQLite does not sync the file VACUUM INTO writes.
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("store: backup to %s: %w", dest, err)
	}
	if v, err := probe(ctx, tmp, true); err != nil {
		return fmt.Errorf("store: backup to %s: the copy fails its check: %w", dest, err)
	} else if v != len(migrations) {
		return fmt.Errorf("store: backup to %s: the copy has schema version %d, want %d", dest, v, len(migrations))
	}
	// Link, unlike rename, never replaces a file that appeared meanwhile.
	if err := os.Link(tmp, dest); err != nil {
		return fmt.Errorf("store: backup to %s: %w", dest, err)
	}
	if err := syncFile(filepath.Dir(dest)); err != nil {
		return fmt.Errorf("store: backup to %s: sync directory: %w", dest, err)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
