package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/internal/testkit/binary"
)

// mafiamail is the command, built once for the tests that run it as a user
// would.
var mafiamail = binary.New("github.com/mafiamail/mafiamail/cmd/mafiamail")

func TestMain(m *testing.M) { binary.RunTests(m, mafiamail) }

var (
	winsLine = regexp.MustCompile(`(?m)^(Town|Mafia) wins on day (\d+)\.$`)
	roleRow  = regexp.MustCompile(`(?m)^  (Townsperson|Mafia|Inspector|Doctor|Vigilante):\s+(.+)$`)
)

// TestDemo runs `mafiamail demo` for both built-in setups and checks, from
// what it prints, that the game ended with the winner its roles demand
// (W1): the Town with no Mafioso alive, the Mafia outnumbering the rest or
// one against one.
func TestDemo(t *testing.T) {
	bin := mafiamail.Path(t)
	for _, c := range []struct {
		setup   string
		players int
	}{{"classic", 11}, {"mafia150", 25}} {
		t.Run(c.setup, func(t *testing.T) {
			if c.setup != "classic" && !integration {
				t.Skip("the 25-player demo runs with -tags integration (.ci/run)")
			}
			out := t.TempDir()
			cmd := exec.Command(bin, "demo", "--setup", c.setup, "--seed", "7", "--out", out, "--timeout", "4m")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("demo: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			text := stdout.String()
			win := winsLine.FindStringSubmatch(text)
			if win == nil {
				t.Fatalf("no winner in the output:\n%s", text)
			}
			mafia, others, seats := 0, 0, 0
			for _, row := range roleRow.FindAllStringSubmatch(text, -1) {
				for _, name := range strings.Split(row[2], ", ") {
					seats++
					if strings.HasSuffix(name, "†") {
						continue
					}
					if row[1] == "Mafia" {
						mafia++
					} else {
						others++
					}
				}
			}
			if seats != c.players {
				t.Fatalf("%d seats in the outcome, want %d:\n%s", seats, c.players, text)
			}
			switch win[1] {
			case "Town":
				if mafia != 0 {
					t.Fatalf("Town won with %d Mafia alive", mafia)
				}
			case "Mafia":
				if !(mafia > others || mafia == 1 && others == 1) {
					t.Fatalf("Mafia won with %d Mafia and %d others alive", mafia, others)
				}
			}
			// The archive is written beside the mailboxes, and opens with
			// a page per day.
			if _, err := os.Stat(filepath.Join(out, "archive", "index.html")); err != nil {
				t.Errorf("no archive: %v", err)
			}
			if _, err := os.Stat(filepath.Join(out, "archive", "day-1.html")); err != nil {
				t.Errorf("no Day 1 in the archive: %v", err)
			}
			// The mailboxes can be opened: every message in them parses,
			// and every player got a role message.
			boxes, _ := filepath.Glob(filepath.Join(out, "*.mbox"))
			roles := 0
			for _, box := range boxes {
				data, err := os.ReadFile(box)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range splitMbox(data) {
					r, err := mail.CreateReader(bytes.NewReader(m))
					if err != nil {
						t.Fatalf("%s: a message does not parse: %v", filepath.Base(box), err)
					}
					if r.Header.Get("X-Mafiamail-Kind") == "role" {
						roles++
					}
					r.Close()
				}
			}
			if roles != c.players {
				t.Fatalf("%d role messages in the mailboxes, want %d", roles, c.players)
			}
		})
	}
}

// splitMbox splits an mboxrd file into its messages, unquoting >From lines.
func splitMbox(data []byte) [][]byte {
	var out [][]byte
	var cur []byte
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("From ")) {
			if cur != nil {
				out = append(out, cur)
			}
			cur = []byte{}
			continue
		}
		if bytes.HasPrefix(bytes.TrimLeft(line, ">"), []byte("From ")) {
			line = line[1:]
		}
		cur = append(cur, line...)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
