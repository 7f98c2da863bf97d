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

	"github.com/mafiamail/mafiamail/config"
	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/store"
)

// docSkipped names the documented commands this test does not run, and why.
var docSkipped = map[string]string{
	"restore": "reads the documented configuration's mailbox, which this test has not; TestRestoreCommand runs it on the built-in mail servers and service's TestRestoreReplaysTheMailbox replays a game with it",
	"demo":    "plays a whole game through the built-in mail servers (some seconds classic, half a minute mafia150); TestDemo plays both setups with --setup, --seed and --out, each seed twice, TestDemoInEveryLanguage each --language",
}

// docFiles are the markdown files whose commands and configuration
// TestDocCommands runs: README.md and every page of docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no page in docs/")
	}
	return append([]string{"../../README.md"}, pages...)
}

// TestDocCommands runs every mafiamail command line of the code blocks of
// README.md and docs/*.md as it is written there, in a folder that holds
// what the lines name: games.db, on which a host keeps the game friday
// open, as while serve runs; mafiamail.toml, the documented configuration
// on that database; and a saved message, saved.eml. An absolute path is
// taken inside that folder. Every toml block of those files must be a
// configuration that loads.
func TestDocCommands(t *testing.T) {
	var lines, tomls []string
	for _, path := range docFiles(t) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, docCommands(string(text))...)
		for _, block := range docTOML(string(text)) {
			if _, err := config.Parse([]byte(block), path, func(string) (string, bool) { return "secret", true }); err != nil {
				t.Errorf("the configuration in %s does not load: %v", path, err)
			}
			tomls = append(tomls, block)
		}
	}
	// The demo's three lines in README.md and the five games commands and
	// parse of the referee's guide, at least: a test that finds fewer has
	// lost its pages, not its commands.
	if len(lines) < 9 {
		t.Fatalf("found %d mafiamail command lines in README.md and docs/*.md, want nine at least: %q", len(lines), lines)
	}
	if len(tomls) == 0 {
		t.Fatal("no toml configuration in README.md or docs/*.md")
	}
	toml := tomls[0]

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
		if reason, ok := docSkipped[args[0]]; ok {
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

// docCommands returns the arguments, as one line each, of every line in
// a code block of the markdown text that runs mafiamail, whether as
// "mafiamail …" or "go run ./cmd/mafiamail …"; a shell comment is left off.
func docCommands(text string) []string {
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

// docTOML returns the toml blocks of the markdown text.
func docTOML(text string) []string {
	var blocks []string
	var b strings.Builder
	in := false
	for _, line := range strings.Split(text, "\n") {
		s := strings.TrimSpace(line)
		switch {
		case !in && s == "```toml":
			in = true
		case in && s == "```":
			blocks = append(blocks, b.String())
			b.Reset()
			in = false
		case in:
			b.WriteString(s + "\n")
		}
	}
	return blocks
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
