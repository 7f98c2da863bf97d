package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/store"
)

// readmeSkipped names the README's commands this test does not run, and why.
var readmeSkipped = map[string]string{
	"demo": "plays a whole game through the built-in mail servers (about 15 s classic, 35 s mafia150); TestDemo plays both setups with --setup, --seed and --out",
}

// TestReadmeCommands runs every mafiamail command line of README.md's code
// blocks as it is written there, in a folder that holds what the lines
// name: games.db, on which a host keeps the game friday open, as while
// serve runs; mafiamail.toml, the README's own configuration on that
// database; and a saved message, saved.eml. An absolute path is taken
// inside that folder.
func TestReadmeCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := readmeCommands(string(readme))
	if len(lines) < 5 {
		t.Fatalf("found %d mafiamail command lines in README.md, want the five under the referee's guide at least: %q", len(lines), lines)
	}
	toml := readmeTOML(string(readme))
	if toml == "" {
		t.Fatal("no toml configuration in README.md")
	}

	dir := t.TempDir()
	t.Chdir(dir)
	hostGame(t, "games.db", "mafia@example.org", "you@example.org", "friday")
	toml = regexp.MustCompile(`(?m)^\s*database\s*=.*$`).ReplaceAllString(toml, `database = "games.db"`)
	if err := os.WriteFile("mafiamail.toml", []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAFIAMAIL_IMAP_PASSWORD", "secret")
	t.Setenv("MAFIAMAIL_SMTP_PASSWORD", "secret")
	saved := "From: Dave <dave@example.org>\r\nTo: mafia+friday@example.org\r\nSubject: join\r\n" +
		"Message-ID: <saved@example.org>\r\n\r\nJOIN Dave\r\n"
	if err := os.WriteFile("saved.eml", []byte(saved), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, line := range lines {
		args := strings.Fields(line)
		if reason, ok := readmeSkipped[args[0]]; ok {
			t.Logf("skipped %q: %s", line, reason)
			continue
		}
		for i, a := range args {
			if filepath.IsAbs(a) {
				args[i] = strings.TrimPrefix(a, "/")
				if err := os.MkdirAll(filepath.Dir(args[i]), 0o700); err != nil {
					t.Fatal(err)
				}
			}
		}
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 {
			t.Errorf("mafiamail %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
		}
	}
}

// readmeCommands returns the arguments, as one line each, of every line in
// a code block of the markdown text that runs mafiamail, whether as
// "mafiamail …" or "go run ./cmd/mafiamail …"; a shell comment is left off.
func readmeCommands(text string) []string {
	var lines []string
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		raw := sc.Text()
		s := strings.TrimSpace(raw)
		if strings.HasPrefix(s, "```") {
			fenced = !fenced
			continue
		}
		if !fenced && !strings.HasPrefix(raw, "    ") && !strings.HasPrefix(raw, "\t") {
			continue
		}
		var rest string
		switch {
		case strings.HasPrefix(s, "mafiamail "):
			rest = strings.TrimPrefix(s, "mafiamail ")
		case strings.HasPrefix(s, "go run ./cmd/mafiamail "):
			rest = strings.TrimPrefix(s, "go run ./cmd/mafiamail ")
		default:
			continue
		}
		if i := strings.Index(rest, " #"); i >= 0 {
			rest = rest[:i]
		}
		lines = append(lines, strings.TrimSpace(rest))
	}
	return lines
}

// readmeTOML is the first toml block of the markdown text.
func readmeTOML(text string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		s := strings.TrimSpace(line)
		switch {
		case !in && s == "```toml":
			in = true
		case in && s == "```":
			return b.String()
		case in:
			b.WriteString(s + "\n")
		}
	}
	return ""
}

// hostGame creates the database at path with a host of the address on it,
// and a game of the referee's with three players signed up. The host keeps
// the database open until the test ends.
func hostGame(t *testing.T, path, address, referee, game string) {
	t.Helper()
	_, _, send := testHost(t, path, host.Config{Address: address, Referees: []string{referee}})
	local, domain, _ := strings.Cut(address, "@")
	send(referee, address, "NEW GAME "+game)
	for _, n := range []string{"Alice", "Bob", "Carol"} {
		send(strings.ToLower(n)+"@"+domain, local+"+"+game+"@"+domain, "JOIN "+n)
	}
}

// testHost opens a host as cfg says (its store at path, quiet, trusting
// the receiving server mx.players.test) until the test ends, and returns
// it and its store with a way to hand it mail, each message under the
// next UID, passed by that server.
func testHost(t *testing.T, path string, cfg host.Config) (*store.Store, *host.Host, func(from, to, body string)) {
	t.Helper()
	ctx := t.Context()
	quiet := slog.New(slog.DiscardHandler)
	st, err := store.Open(ctx, path, store.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg.Store, cfg.Log, cfg.AuthServID = st, quiet, "mx.players.test"
	h, err := host.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	uid := uint32(0)
	return st, h, func(from, to, body string) {
		t.Helper()
		uid++
		raw := fmt.Sprintf("Authentication-Results: mx.players.test; dmarc=pass header.from=%s\r\n"+
			"From: %s\r\nTo: %s\r\nSubject: x\r\nMessage-ID: <%d@t>\r\n\r\n%s\r\n", from[strings.LastIndexByte(from, '@')+1:], from, to, uid, body)
		if err := h.HandleMessage(ctx, "INBOX", 1, uid, []byte(raw)); err != nil {
			t.Fatal(err)
		}
	}
}
