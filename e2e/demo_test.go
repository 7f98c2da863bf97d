//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/engine"
	"github.com/mafiamail/mafiamail/internal/testkit/mailbox"
)

var (
	winsLine = regexp.MustCompile(`(?m)^(Town|Mafia) wins (on Day|in Night) (\d+)\.$`)
	roleRow  = regexp.MustCompile(`(?m)^  (Townsperson|Mafia|Inspector|Doctor|Vigilante):\s+(.+)$`)
)

// TestDemo runs `mafiamail demo` for both built-in setups and checks, from
// what it prints, that the game ended with the winner its roles demand
// (W1): the Town with no Mafioso alive, the Mafia outnumbering the rest or
// one against one; that it names the round the game ended in, a day or a
// night, as the game's log has it; and that the seed plays the same game
// again (see sameGame).
func TestDemo(t *testing.T) {
	t.Parallel()
	bin := mafiamail.Path(t)
	for _, c := range []struct {
		setup   string
		players int
	}{{"classic", 11}, {"mafia150", 25}} {
		t.Run(c.setup, func(t *testing.T) {
			text, out := runDemoCommand(t, bin, c.setup, 7)
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
				for _, m := range mailbox.SplitMbox(data) {
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
			log := readEventLog(t, filepath.Join(out, "demo-events.jsonl"))
			if want := lastRound(log); win[2]+" "+win[3] != want {
				t.Errorf("the demo says the game ended %s %s; its log ends %s", win[2], win[3], want)
			}
			// The same seed, another run: the same game, event by event,
			// the same output and the same mail in every mailbox.
			againText, againOut := runDemoCommand(t, bin, c.setup, 7)
			sameGame(t, log, readEventLog(t, filepath.Join(againOut, "demo-events.jsonl")))
			if got, want := progressLines(againText), progressLines(text); got != want {
				t.Errorf("the same seed printed\n%s\nthen\n%s", want, got)
			}
			againBoxes, _ := filepath.Glob(filepath.Join(againOut, "*.mbox"))
			if got, want := mboxCounts(t, againBoxes), mboxCounts(t, boxes); got != want {
				t.Errorf("mail per mailbox with the same seed:\n%s\nthen\n%s", want, got)
			}
			sameMail(t, mailTexts(t, boxes), mailTexts(t, againBoxes))
			if c.setup == "classic" {
				// Another seed, another game: the comparison tells games
				// apart.
				_, other := runDemoCommand(t, bin, c.setup, 8)
				if slices.Equal(eventLines(log), eventLines(readEventLog(t, filepath.Join(other, "demo-events.jsonl")))) {
					t.Error("seeds 7 and 8 played the same game")
				}
			}
		})
	}
}

// runDemoCommand runs `mafiamail demo` of setup with seed and --out, and
// returns what it printed and the folder it wrote.
func runDemoCommand(t *testing.T, bin, setup string, seed int) (string, string) {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(bin, "demo", "--setup", setup, "--seed", fmt.Sprint(seed), "--out", out, "--timeout", "4m")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String(), out
}

// eventLine is an event as a game's repeat must have it: what happened,
// by and to whom, with what words; not when, nor the tokens of addresses.
func eventLine(e engine.Event) string {
	return fmt.Sprintf("%s by=%d slot=%d name=%q addr=%q target=%d null=%v day=%d round=%s verb=%s auto=%v count=%d held=%d "+
		"reason=%q text=%q outcome=%s candidates=%v deaths=%v blocked=%d slots=%v role=%s roles=%v mafiosi=%v known=%d "+
		"result=%q salt=%q commitment=%q winner=%s names=%v",
		e.Type, e.By, e.Slot, e.Name, e.Address, e.Target, e.Null, e.Day, e.Round, e.Verb, e.Auto, e.Count, e.Held,
		e.Reason, e.Text, e.Outcome, e.Candidates, e.Deaths, e.Blocked, e.Slots, e.Role, e.Roles, e.Mafiosi, e.Known,
		e.Result, e.Salt, e.Commitment, e.Winner, e.Names)
}

func eventLines(log []engine.Event) []string {
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = eventLine(e)
	}
	return out
}

// sameGame fails unless the two logs hold the same events in the same
// order, times and tokens apart.
func sameGame(t *testing.T, a, b []engine.Event) {
	t.Helper()
	la, lb := eventLines(a), eventLines(b)
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			t.Fatalf("the same seed played another game: event %d is\n%s\nthen\n%s", i+1, la[i], lb[i])
		}
	}
	if len(la) != len(lb) {
		t.Fatalf("the same seed played another game: %d events, then %d", len(la), len(lb))
	}
}

// readEventLog reads the log demo --out writes.
func readEventLog(t *testing.T, path string) []engine.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var log []engine.Event
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Event json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		e, err := engine.UnmarshalEvent(rec.Event)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		log = append(log, e)
	}
	return log
}

// lastRound names the round the log's game ended in, from the last round
// or night it started: "on Day 4", "in Night 3".
func lastRound(log []engine.Event) string {
	round := ""
	for _, e := range log {
		switch e.Type {
		case engine.EvDayStarted, engine.EvExtraStarted, engine.EvRunoffStarted:
			round = fmt.Sprintf("on Day %d", e.Day)
		case engine.EvNightStarted:
			round = fmt.Sprintf("in Night %d", e.Day)
		case engine.EvGameEnded:
			return round
		}
	}
	return "no end"
}

// progressLines is what a demo prints, but for what a run may differ in:
// the servers' ports and the calendar (the game is played in the coming
// week), and what --out adds.
func progressLines(text string) string {
	ports := regexp.MustCompile(`IMAP \S+, SMTP \S+;`)
	dates := regexp.MustCompile(`(?m)^  \w{3} \d+ \w{3} \d\d:\d\d \w+  `)
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Mailboxes written") || strings.HasPrefix(line, "The game's archive") {
			continue
		}
		out = append(out, dates.ReplaceAllString(ports.ReplaceAllString(line, "IMAP, SMTP;"), "  DATE  "))
	}
	return strings.Join(out, "\n")
}

// mailboxOf is the mailbox of an address: its local part up to the plus.
func mailboxOf(addr string) string {
	local, domain, _ := strings.Cut(strings.ToLower(addr), "@")
	local, _, _ = strings.Cut(local, "+")
	return local + "@" + domain
}

// mboxCounts says how many messages each mailbox received, from the
// mbox files demo --out wrote: one line a mailbox, in order.
func mboxCounts(t *testing.T, files []string) string {
	t.Helper()
	n := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		addr := strings.Replace(strings.TrimSuffix(filepath.Base(f), ".mbox"), "_at_", "@", 1)
		n[mailboxOf(addr)] += len(mailbox.SplitMbox(data))
	}
	return countLines(n)
}

// mailTexts reads the mbox files demo --out wrote: for each mailbox, the
// subject, kind and text of every message, but for what differs from one
// run to the next (dates and times, the tokens of addresses), in order.
func mailTexts(t *testing.T, files []string) map[string][]string {
	t.Helper()
	token := regexp.MustCompile(`[a-z0-9]+-[tpmc]-[a-z2-7]{10,64}`)
	when := regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b[^\n]{0,40}?\d\d:\d\d( [A-Z]{2,5})?`)
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		box := mailboxOf(strings.Replace(strings.TrimSuffix(filepath.Base(f), ".mbox"), "_at_", "@", 1))
		for _, raw := range mailbox.SplitMbox(data) {
			l := mailbox.Parse(raw)
			if l.Header.Len() == 0 {
				t.Fatalf("%s: %v", f, l.Err)
			}
			text := l.Subject + " | " + l.Kind + "\n" + strings.ReplaceAll(l.Text, "\r\n", "\n")
			out[box] = append(out[box], when.ReplaceAllString(token.ReplaceAllString(text, "TOKEN"), "WHEN"))
		}
	}
	for box := range out {
		// Mail to the host's plus-addresses comes in a file each.
		slices.Sort(out[box])
	}
	return out
}

// sameMail fails unless every mailbox holds the same mail in both.
func sameMail(t *testing.T, a, b map[string][]string) {
	t.Helper()
	for box, ms := range a {
		for i, m := range ms {
			if i >= len(b[box]) || b[box][i] != m {
				other := "nothing"
				if i < len(b[box]) {
					other = b[box][i]
				}
				t.Fatalf("%s got other mail with the same seed: message %d is\n%s\nthen\n%s", box, i+1, m, other)
			}
		}
	}
}

func countLines(n map[string]int) string {
	var lines []string
	for box, k := range n {
		lines = append(lines, fmt.Sprintf("%s %d", box, k))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
