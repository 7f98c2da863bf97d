package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The systemd unit in deploy/ passes `systemd-analyze verify`: its options
// exist and fit together. The check needs the binary the unit starts to
// exist, so it verifies a copy that starts this test's own executable.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("systemd-analyze is missing: .ci/run installs the systemd package")
		}
		t.Skip("systemd-analyze is not installed")
	}
	unit, err := os.ReadFile("../../deploy/mafiamail.service")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/local/bin/mafiamail serve ") {
		t.Fatal("the unit no longer starts /usr/local/bin/mafiamail serve")
	}
	copyPath := filepath.Join(t.TempDir(), "mafiamail.service")
	if err := os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/mafiamail", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", copyPath).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
