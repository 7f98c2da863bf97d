package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPerformanceDocCommands: every flag docs/performance.md names is one
// the bench takes, and every bench command line written there parses.
func TestPerformanceDocCommands(t *testing.T) {
	doc, err := os.ReadFile("../../docs/performance.md")
	if err != nil {
		t.Fatal(err)
	}
	var usage, out bytes.Buffer
	// -h prints the usage, and asks for nothing that could fail.
	if code := run([]string{"-h"}, &out, &usage); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z][a-z-]*)`).FindAllStringSubmatch(usage.String(), -1) {
		defined[m[1]] = true
	}
	if !defined["baseline"] || !defined["stack"] {
		t.Fatalf("the bench's usage lists no --baseline or --stack:\n%s", usage.String())
	}
	named := regexp.MustCompile(`(?:^|[\s(\x60])--([a-z][a-z-]*)`).FindAllStringSubmatch(string(doc), -1)
	for _, m := range named {
		if !defined[m[1]] {
			t.Errorf("docs/performance.md names --%s, which the bench does not take", m[1])
		}
	}
	lines := regexp.MustCompile("go run ./cmd/mafiamail-bench([^`\n]*)").FindAllStringSubmatch(string(doc), -1)
	if len(lines) < 5 {
		t.Fatalf("found %d bench command lines in docs/performance.md, want the five of its table at least", len(lines))
	}
	for _, l := range lines {
		// --runs 0, last, stops the bench once its flags are read and
		// checked up to the runs: a flag or value the bench does not
		// take fails before.
		args := append(strings.Fields(l[1]), "--runs", "0")
		var stderr bytes.Buffer
		code := run(args, &out, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "--runs at least 1") {
			t.Errorf("mafiamail-bench%s: exit %d, %s", l[1], code, stderr.String())
		}
	}
}
