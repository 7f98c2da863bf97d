package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/host"
	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
	"github.com/mafiamail/mafiamail/mail/mailserver"
)

// TestCheck logs in to the embedded servers, and reports a wrong password
// and a refused connection with the step that failed.
func TestCheck(t *testing.T) {
	srv, err := mailserver.Start(mailserver.Config{Users: map[string]string{"host": "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	write := func(imapPass, smtpURL string) string {
		path := filepath.Join(t.TempDir(), "m.toml")
		cfg := fmt.Sprintf(`address = "host@example.org"
referees = ["ref@example.org"]
[imap]
url = "imap://%s"
username = "host"
password = %q
[smtp]
url = %q
username = "host"
password = "pw"
`, srv.IMAPAddr(), imapPass, smtpURL)
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"check", "--config", write("pw", "smtp://"+srv.SMTPAddr())}, nil, &out, &errOut); code != 0 {
		t.Fatalf("check of a good account: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "IMAP imap://") || !strings.Contains(out.String(), ": ok, plain") {
		t.Fatalf("check output:\n%s", out.String())
	}
	out.Reset()
	errOut.Reset()
	code := run([]string{"check", "--config", write("wrong", "smtp://127.0.0.1:1")}, nil, &out, &errOut)
	if code != 1 {
		t.Fatalf("check of a bad account: exit %d", code)
	}
	if !strings.Contains(out.String(), `IMAP`) || !strings.Contains(out.String(), `log in as "host"`) ||
		!strings.Contains(out.String(), "SMTP smtp://127.0.0.1:1 as host: FAILED: connect") {
		t.Fatalf("check output does not say what failed:\n%s", out.String())
	}
}

// TestParseCommand prints the verdict of a message as JSON.
func TestParseCommand(t *testing.T) {
	msg := "From: Alice <alice@example.org>\r\nTo: host+g1-t-abcdefghijklmnop@example.org\r\nSubject: vote\r\n" +
		"Message-ID: <1@example.org>\r\n\r\nVOTE Bob\r\n"
	var out, errOut bytes.Buffer
	code := run([]string{"parse", "--address", "host@example.org"}, strings.NewReader(msg), &out, &errOut)
	if code != 0 {
		t.Fatalf("parse: exit %d: %s", code, errOut.String())
	}
	// Without a database no token is known: the vote is refused, and the
	// output says why.
	for _, want := range []string{`"kind": "thread"`, `"kind": "refused"`, `"unknown-address"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("parse output lacks %s:\n%s", want, out.String())
		}
	}
	out.Reset()
	help := "From: Alice <alice@example.org>\r\nTo: host@example.org\r\nSubject: help\r\n\r\nhelp\r\n"
	if code := run([]string{"parse", "--address", "host@example.org"}, strings.NewReader(help), &out, &errOut); code != 0 {
		t.Fatalf("parse: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{`"kind": "host"`, `"kind": "accepted"`, `"verb": "HELP"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("parse output lacks %s:\n%s", want, out.String())
		}
	}
}

// TestGamesCommands lists, shows, exports and backs up a game on a
// database that a host has open, as a referee would while serve runs.
func TestGamesCommands(t *testing.T) {
	db := filepath.Join(t.TempDir(), "games.db")
	hostGame(t, db, "host@example.org", "ref@example.org", "club")
	var out, errOut bytes.Buffer
	cli := func(args ...string) string {
		t.Helper()
		out.Reset()
		errOut.Reset()
		if code := run(args, nil, &out, &errOut); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	if s := cli("games", "list", "--db", db); !strings.Contains(s, "club") || !strings.Contains(s, "signup") {
		t.Fatalf("games list:\n%s", s)
	}
	s := cli("games", "show", "--db", db, "club")
	for _, want := range []string{"Game club", "Alice", "Carol", "Outbox:"} {
		if !strings.Contains(s, want) {
			t.Fatalf("games show lacks %q:\n%s", want, s)
		}
	}
	dir := t.TempDir()
	cli("games", "export", "--db", db, "--out", dir, "club")
	mbox, err := os.ReadFile(filepath.Join(dir, "club.mbox"))
	if err != nil || len(mailbox.SplitMbox(mbox)) == 0 {
		t.Fatalf("export mbox: %v", err)
	}
	evs, err := os.ReadFile(filepath.Join(dir, "club-events.jsonl"))
	if err != nil || strings.Count(string(evs), "\n") != 4 {
		t.Fatalf("export events (want 4: created and 3 joins): %q %v", evs, err)
	}
	backup := filepath.Join(t.TempDir(), "copy.db")
	cli("games", "backup", "--db", db, backup)
	if s := cli("games", "list", "--db", backup); !strings.Contains(s, "club") {
		t.Fatalf("the backup lacks the game:\n%s", s)
	}
}

// TestParseWithDatabaseAlone: parse --db FILE finds the host's address in
// the message's recipients, from the game address whose game the database
// holds, and reads the message as the host would, its token known; where
// no recipient is a game's address, it says so and what to give.
func TestParseWithDatabaseAlone(t *testing.T) {
	db := filepath.Join(t.TempDir(), "games.db")
	_, h, send := testHost(t, db, host.Config{Address: "mafia@example.org", Referees: []string{"ref@example.org"}})
	send("ref@example.org", "mafia@example.org", "NEW GAME club")
	send("alice@example.org", "mafia+club@example.org", "JOIN Alice")
	s, ok := h.Game("club")
	if !ok || len(s.Players) != 1 {
		t.Fatal("no game with Alice in it")
	}
	token := s.Players[0].Token
	parse := func(msg string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run([]string{"parse", "--db", db}, strings.NewReader(msg), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	for _, tc := range []struct{ name, header, kind string }{
		{"a thread address in To", "To: Alice <mafia+club-t-" + token + "@example.org>\r\n", `"kind": "thread"`},
		{"a sign-up address in Delivered-To, after a list's To", "To: friends@lists.example.net\r\nDelivered-To: mafia+club@example.org\r\n", `"kind": "signup"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := parse("From: Alice <alice@example.org>\r\n" + tc.header +
				"Subject: vote\r\nMessage-ID: <1@example.org>\r\n\r\nVOTE Bob\r\n")
			if code != 0 {
				t.Fatalf("parse --db alone: exit %d: %s", code, errOut)
			}
			if !strings.Contains(errOut, "the host's address is mafia@example.org") {
				t.Errorf("parse does not say which address it took: %q", errOut)
			}
			for _, want := range []string{tc.kind, `"game": "club"`} {
				if !strings.Contains(out, want) {
					t.Errorf("parse output lacks %s:\n%s", want, out)
				}
			}
			if strings.Contains(out, "unknown-address") {
				t.Errorf("the token the database holds is unknown to parse:\n%s", out)
			}
		})
	}
	t.Run("no game's address", func(t *testing.T) {
		code, out, errOut := parse("From: Alice <alice@example.org>\r\nTo: mafia+other-t-abcdefghijklmnop@example.org, bob@example.org\r\n" +
			"Subject: vote\r\n\r\nVOTE Bob\r\n")
		if code != 2 || out != "" {
			t.Fatalf("exit %d, output %q; want 2 and nothing", code, out)
		}
		for _, want := range []string{"no recipient of the message (To, Cc, Delivered-To, X-Original-To) is the address of a game in " + db, "--address", "--config"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("the refusal %q lacks %q", errOut, want)
			}
		}
	})
}

// TestHelpForEveryCommand: -h and --help print the command's usage and
// exit 0, for every command and every games command.
func TestHelpForEveryCommand(t *testing.T) {
	lines := [][]string{{"--help"}, {"-h"}, {"help"}}
	for _, cmd := range [][]string{{"demo"}, {"init"}, {"serve"}, {"check"}, {"parse"}, {"version"}, {"games"},
		{"games", "list"}, {"games", "show"}, {"games", "export"}, {"games", "archive"}, {"games", "backup"}} {
		for _, help := range []string{"--help", "-h"} {
			lines = append(lines, append(append([]string(nil), cmd...), help))
		}
	}
	for _, line := range lines {
		t.Run(strings.Join(line, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := run(line, strings.NewReader(""), &out, &errOut); code != 0 {
				t.Fatalf("exit %d, want 0\n%s%s", code, out.String(), errOut.String())
			}
			said := out.String() + errOut.String()
			if !strings.Contains(said, "Usage") || strings.Contains(said, "help requested") {
				t.Errorf("no usage, or an error, for %v:\n%s", line, said)
			}
		})
	}
}

// TestUsageNamesTheDemoFlags: mafiamail's usage and its package comment
// name every flag demo has, and none it has not.
func TestUsageNamesTheDemoFlags(t *testing.T) {
	var want []string
	demoFlagSet(&demoFlags{}, io.Discard).VisitAll(func(f *flag.Flag) { want = append(want, f.Name) })
	slices.Sort(want)
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(src), "\npackage main")
	for where, text := range map[string]string{"the usage": usage, "the package comment": doc} {
		if got := demoFlagsIn(text); !slices.Equal(got, want) {
			t.Errorf("%s names the demo's flags %v; it has %v", where, got, want)
		}
	}
}

// demoFlagsIn lists the flags named in the demo's entry of a usage text:
// from its "mafiamail demo" line to the next command's.
func demoFlagsIn(text string) []string {
	var entry []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "mafiamail ") {
			in = strings.Contains(line, "mafiamail demo")
		}
		if in {
			entry = append(entry, line)
		}
	}
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:^|[\s\[(])--?([a-z][a-z-]*)`).FindAllStringSubmatch(strings.Join(entry, "\n"), -1) {
		seen[m[1]] = true
	}
	return slices.Sorted(maps.Keys(seen))
}
