package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
)

func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		said   string
	}{
		{"success", nil, 0, ""},
		{"stopped by a signal", fmt.Errorf("serve: %w", context.Canceled), 0, ""},
		// The flag set printed the usage that --help asked for: nothing
		// failed, and nothing more is said.
		{"help asked for", Usage(flag.ErrHelp), 0, ""},
		{"help asked for, wrapped", fmt.Errorf("parse flags: %w", flag.ErrHelp), 0, ""},
		{"usage", Usagef("--games: %q is not a number of games", "x"), 2, `mafiamail-bench: --games: "x" is not a number of games` + "\n"},
		{"wrapped usage", fmt.Errorf("parse flags: %w", Usage(errors.New("flag provided but not defined: -x"))), 2,
			"mafiamail-bench: parse flags: flag provided but not defined: -x\n"},
		{"failure", errors.New("open games.db: permission denied"), 1, "mafiamail-bench: open games.db: permission denied\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := ExitStatus("mafiamail-bench", tc.err, &stderr); got != tc.status {
				t.Errorf("status %d, want %d", got, tc.status)
			}
			if stderr.String() != tc.said {
				t.Errorf("said %q, want %q", stderr.String(), tc.said)
			}
		})
	}
}

func TestNewLoggerFormatAndLevel(t *testing.T) {
	var out bytes.Buffer
	log := NewLogger(&out, "json", "warn")
	log.Info("hidden")
	log.Warn("shown", "game", "friday")
	if s := out.String(); strings.Contains(s, "hidden") || !strings.Contains(s, `"msg":"shown"`) || !strings.Contains(s, `"game":"friday"`) {
		t.Errorf("json logger at warn wrote %q", s)
	}
	out.Reset()
	NewLogger(&out, "text", "nonsense").Info("at info")
	if s := out.String(); !strings.Contains(s, "msg=\"at info\"") {
		t.Errorf("text logger with an unknown level wrote %q, want info and up", s)
	}
}

func TestFlagsReturnErrors(t *testing.T) {
	var stderr bytes.Buffer
	fs := Flags("mafiamail check", &stderr)
	fs.String("config", "", "")
	if err := fs.Parse([]string{"--nope"}); err == nil {
		t.Fatal("an unknown flag was accepted")
	}
	if !strings.Contains(stderr.String(), "flag provided but not defined: -nope") {
		t.Errorf("stderr %q does not name the unknown flag", stderr.String())
	}
}

func TestTuneServerGC(t *testing.T) {
	was := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(was) })
	if !TuneServerGC(func(string) string { return "" }) {
		t.Errorf("without GOGC the target was left alone")
	}
	if got := debug.SetGCPercent(100); got != ServerGCPercent {
		t.Errorf("without GOGC the collector's target is %d, want %d", got, ServerGCPercent)
	}
	// The runtime reads GOGC itself at start: here it is as if it had
	// set 100.
	gogc := func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	}
	if TuneServerGC(gogc) {
		t.Errorf("with GOGC set the target was changed")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the collector's target became %d, want 100", got)
	}
}
