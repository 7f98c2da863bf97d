package service_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/service"
)

// A configuration written before the host had a key keeps working: the
// first start makes the key beside it, readable by the host alone, and
// says so in the log; the next start reads the same key.
func TestLoadKeyMakesOneOnFirstStart(t *testing.T) {
	cfg := config.Defaults()
	cfg.KeyFile = filepath.Join(t.TempDir(), "mafiamail.key")
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	first, err := service.LoadKey(&cfg, log)
	if err != nil || first == nil {
		t.Fatalf("first start: %v, %v", first, err)
	}
	if !strings.Contains(logged.String(), "made a new host key") || !strings.Contains(logged.String(), cfg.KeyFile) {
		t.Errorf("the first start did not say it made the key:\n%s", logged.String())
	}
	if fi, err := os.Stat(cfg.KeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, want mode 0600", err)
	}
	logged.Reset()
	again, err := service.LoadKey(&cfg, log)
	if err != nil || again.Fingerprint() != first.Fingerprint() {
		t.Fatalf("second start: %v", err)
	}
	if logged.Len() != 0 {
		t.Errorf("the second start logged:\n%s", logged.String())
	}
	// A host without a configuration file (serve --embedded) has no key.
	cfg.KeyFile = ""
	if k, err := service.LoadKey(&cfg, log); k != nil || err != nil {
		t.Errorf("no key file: %v, %v", k, err)
	}
}
