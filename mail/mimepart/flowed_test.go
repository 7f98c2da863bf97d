package mimepart

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFlowedRoundTrip(t *testing.T) {
	long := strings.Repeat("word ", 40) + "end."
	addr := "host+" + strings.Repeat("x", 90) + "@example.org"
	cases := []struct {
		name, text string
		delSp      bool
	}{
		{"short lines stay", "Official tally, Day 1\n- Alice: 3 (Bob, Carol, Dave)\n\n-- \nfooter\n", false},
		{"paragraph", long + "\n", false},
		{"quoted paragraph", "> " + long + "\n>\n> short\n>> " + long + "\n", false},
		{"stuffing", " indented line\nFrom the start\n" + strings.Repeat("a ", 38) + "From here on " + long + "\n", false},
		{"double spaces", strings.Repeat("two  spaces ", 12) + "end\n", false},
		{"address kept whole", "Write to " + addr + " and nowhere else, " + long + "\n", false},
		{"long word broken", "see " + strings.Repeat("z", 200) + " then " + long + "\n", true},
		{"unicode", strings.Repeat("Zoë ▸ Mary-Jo O'Neil · ", 8) + "end\n", false},
		{"exactly 78", strings.Repeat("x", 78) + "\n" + strings.Repeat("y ", 39) + "y\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := EncodeFlowed(c.text)
			if f.DelSp != c.delSp {
				t.Errorf("DelSp = %v, want %v", f.DelSp, c.delSp)
			}
			for _, l := range strings.Split(strings.TrimSuffix(f.Text, "\n"), "\n") {
				if n := utf8.RuneCountInString(l); n > FlowedWidth && !strings.Contains(l, addr) {
					t.Errorf("line of %d characters: %q", n, l)
				}
			}
			if got := DecodeFlowed(f.Text, f.DelSp); got != c.text {
				t.Errorf("decoded back:\n%s\nwant:\n%s\nencoded:\n%s", got, c.text, f.Text)
			}
			if !strings.Contains(c.text, addr) {
				return
			}
			if !strings.Contains(f.Text, addr) {
				t.Errorf("the address was broken:\n%s", f.Text)
			}
		})
	}
}

// FuzzFlowed: any text the templates can produce (lines without trailing
// spaces) decodes back to itself, in lines of at most 78 characters but
// for words that must stay whole.
func FuzzFlowed(f *testing.F) {
	f.Add("Official tally, Day 1\n- Alice: 3 (Bob)\n\n-- \nfooter")
	f.Add("> " + strings.Repeat("word ", 30) + "\n>\n> > quoted context\nFrom here " + strings.Repeat("x", 90))
	f.Add(" stuffed\n>>deep " + strings.Repeat("ab  ", 40))
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) || strings.ContainsAny(text, "\r\u0085\u2028\u2029") {
			return
		}
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if l != "-- " {
				l = strings.TrimRight(l, " ")
			}
			// Quote marks are followed by one space, as the templates
			// write them (">>x" and ">> x" are the same quoted line).
			if d := len(l) - len(strings.TrimLeft(l, ">")); d > 0 && d < len(l) && l[d] != ' ' {
				l = l[:d] + " " + l[d:]
			}
			lines[i] = l
		}
		text = strings.Join(lines, "\n") + "\n"
		enc := EncodeFlowed(text)
		if got := DecodeFlowed(enc.Text, enc.DelSp); got != text {
			t.Fatalf("decoded back:\n%q\nwant:\n%q\nencoded:\n%q", got, text, enc.Text)
		}
		for _, l := range strings.Split(strings.TrimSuffix(enc.Text, "\n"), "\n") {
			if utf8.RuneCountInString(l) <= FlowedWidth {
				continue
			}
			long := false
			// Words as format=flowed knows them: between spaces (a tab
			// or a form feed is part of its word).
			for _, w := range strings.Split(l, " ") {
				if utf8.RuneCountInString(w) > FlowedWidth-8 && (unbreakable(w) || !enc.DelSp) {
					long = true
				}
			}
			if !long {
				t.Fatalf("line of %d characters: %q", utf8.RuneCountInString(l), l)
			}
		}
	})
}

// TestFlowAvoids: a Flow never starts a soft line with what its avoid
// function turns down, while EncodeFlowed breaks at the last space that
// fits; both decode back to the same text.
func TestFlowAvoids(t *testing.T) {
	text := strings.Repeat("a ", 37) + "VOTE Mallory " + strings.Repeat("then more words ", 5) + "end\n"
	startsWithVote := func(rest string) bool { return strings.HasPrefix(rest, "VOTE") }
	plain := EncodeFlowed(text)
	if !strings.Contains(plain.Text, "\nVOTE Mallory") {
		t.Fatalf("the test's line does not break before VOTE without avoid:\n%s", plain.Text)
	}
	for _, keep := range []bool{false, true} {
		f := NewFlow(startsWithVote, keep)
		for range 2 { // the second time from what a keeping Flow kept
			got := f.Encode(text)
			if strings.Contains(got.Text, "\nVOTE") {
				t.Errorf("keep=%v: a soft line starts with VOTE:\n%s", keep, got.Text)
			}
			if back := DecodeFlowed(got.Text, got.DelSp); back != text {
				t.Errorf("keep=%v: decoded back:\n%s\nwant:\n%s", keep, back, text)
			}
		}
	}
}
