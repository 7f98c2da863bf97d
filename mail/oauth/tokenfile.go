package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/oauth2"
)

// fileStamp tells whether the token file changed since it was last read
// or written.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(fi os.FileInfo) fileStamp { return fileStamp{mod: fi.ModTime(), size: fi.Size()} }

// readTokenFile reads a token as oauth2.Token marshals to JSON.
func readTokenFile(path string) (*oauth2.Token, fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("read the token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("read the token file: %w", err)
	}
	var tok oauth2.Token
	if err := json.NewDecoder(f).Decode(&tok); err != nil {
		return nil, fileStamp{}, fmt.Errorf("read the token file %s: %w", path, err)
	}
	if tok.RefreshToken == "" {
		return nil, fileStamp{}, fmt.Errorf("the token file %s holds no refresh token", path)
	}
	return &tok, stampOf(fi), nil
}

// WriteTokenFile writes tok to path, readable by its owner only. It
// writes a new file and renames it over the old, so that a reader never
// sees half a token.
func WriteTokenFile(path string, tok *oauth2.Token) error {
	data, err := json.MarshalIndent(tok, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the token: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	// CreateTemp makes the file 0600 already; Chmod says so for umasks
	// and platforms that differ.
	err = errors.Join(tmp.Chmod(0o600), writeAll(tmp, data), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write the token file %s: %w", path, err)
	}
	return nil
}

func writeAll(f *os.File, data []byte) error {
	_, err := f.Write(append(data, '\n'))
	return err
}
