package oauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/oauth2"
)

// fileStamp tells whether the token file changed since it was last read
// or written. It is a digest of the contents, not the modification time:
// a new authorisation can rewrite the file, at the same size, within the
// file system's clock tick, and a token file is small enough to read
// whenever a token is asked for.
type fileStamp [sha256.Size]byte

func stampOf(data []byte) fileStamp { return sha256.Sum256(data) }

// readTokenFile reads a token as oauth2.Token marshals to JSON.
func readTokenFile(path string, data []byte) (*oauth2.Token, error) {
	var tok oauth2.Token
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&tok); err != nil {
		return nil, fmt.Errorf("read the token file %s: %w", path, err)
	}
	if tok.RefreshToken == "" {
		return nil, fmt.Errorf("the token file %s holds no refresh token", path)
	}
	return &tok, nil
}

// WriteTokenFile writes tok to path, readable by its owner only. It
// writes a new file and renames it over the old, so that a reader never
// sees half a token.
func WriteTokenFile(path string, tok *oauth2.Token) error {
	_, err := writeTokenFile(path, tok)
	return err
}

// writeTokenFile is WriteTokenFile, returning the stamp of what it wrote.
func writeTokenFile(path string, tok *oauth2.Token) (fileStamp, error) {
	data, err := encodeToken(tok)
	if err != nil {
		return fileStamp{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return fileStamp{}, fmt.Errorf("write the token file: %w", err)
	}
	// CreateTemp makes the file 0600 already; Chmod says so for umasks
	// and platforms that differ.
	err = errors.Join(tmp.Chmod(0o600), writeAll(tmp, data), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fileStamp{}, fmt.Errorf("write the token file %s: %w", path, err)
	}
	return stampOf(data), nil
}

// encodeToken is the token file's contents for tok.
func encodeToken(tok *oauth2.Token) ([]byte, error) {
	data, err := json.MarshalIndent(tok, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode the token: %w", err)
	}
	return append(data, '\n'), nil
}

func writeAll(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}
