package reply

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mafiamail/mafiamail/mail/message"
)

func FuzzSplitReply(f *testing.F) {
	files, err := filepath.Glob("../inbound/testdata/*.msg")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		if m, err := message.Parse(raw); err == nil {
			f.Add(m.Text)
		}
	}
	f.Add("VOTE Bob\n\nOn Mon, Mar 3, 2025 at 10:15 AM X <\nx@example.org> wrote:\n> q\n")
	f.Add("a\n-- \nsig\nVon: x\nGesendet: y\n")
	if fs, err := filepath.Glob("testdata/*.txt"); err == nil {
		for _, name := range fs {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		p := Split(text)
		// Nothing is lost: every line lands in one of the parts.
		have := make(map[string]bool)
		for _, l := range strings.Split(p.New+"\n"+p.Quoted+"\n"+p.Signature+"\n"+p.Unsure, "\n") {
			have[strings.TrimRight(l, " \t")] = true
		}
		norm := strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		for _, l := range strings.Split(norm, "\n") {
			if l = strings.TrimRight(l, " \t"); strings.TrimSpace(l) != "" && !have[l] {
				t.Fatalf("line %q is in no part of %+v", l, p)
			}
		}
		// No quoted line is ever new text.
		for _, l := range strings.Split(p.New, "\n") {
			if isQuoteLine(l) {
				t.Fatalf("quoted line %q in the new text", l)
			}
		}
		// Splitting the new text again changes nothing.
		if again := Split(p.New); again.New != p.New {
			t.Fatalf("not stable: %q became %q", p.New, again.New)
		}
	})
}
