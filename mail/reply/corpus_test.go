package reply

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The corpus: testdata/NNN-language-client-family.txt is a reply as the
// client writes it, .result beside it the author's text that must come out
// of it (New), and .unsure, where there is one, what must be set apart as
// unplaceable. Every other line must be quoted or signature.

// corpusFamilies are the shapes the corpus must cover at least five times
// each, over the ordinary ones (top, inline, header, original, forward,
// signature).
var corpusFamilies = []string{
	"header-spelling", "header-date-first", "lone-from",
	"attr-nospace", "attr-nocolon", "attr-dashed", "attr-sent", "attr-mailto", "attr-datefirst",
	"below-mobile", "lost-marker", "sent-from-prose", "same-line",
	// Author lines that begin like a header or an attribution and are not.
	"prose",
}

type fixture struct {
	name, lang, client, family string
	text, want, unsure         string
}

func readCorpus(t testing.TB) []fixture {
	t.Helper()
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	var fs []fixture
	for _, f := range files {
		base := strings.TrimSuffix(f, ".txt")
		name := filepath.Base(base)
		parts := strings.SplitN(name, "-", 4)
		if len(parts) != 4 {
			t.Fatalf("%s: want NNN-language-client-family", name)
		}
		read := func(path string, must bool) string {
			b, err := os.ReadFile(path)
			if err != nil {
				if !must && os.IsNotExist(err) {
					return ""
				}
				t.Fatal(err)
			}
			return string(b)
		}
		fs = append(fs, fixture{
			name: name, lang: parts[1], client: parts[2], family: parts[3],
			text:   read(f, true),
			want:   strings.TrimRight(read(base+".result", true), "\n"),
			unsure: strings.TrimRight(read(base+".unsure", false), "\n"),
		})
	}
	return fs
}

func TestCorpus(t *testing.T) {
	fs := readCorpus(t)
	if len(fs) < 300 {
		t.Errorf("the corpus has %d replies; it must keep at least 300", len(fs))
	}
	perLang, perFamily := map[string]int{}, map[string]int{}
	for _, f := range fs {
		perLang[f.lang]++
		perFamily[f.family]++
		t.Run(f.name, func(t *testing.T) {
			p := Split(f.text)
			if p.New != f.want {
				t.Errorf("New =\n%s\nwant\n%s\n(cut %q, unsure %q)", p.New, f.want, p.Cut, p.Unsure)
			}
			if p.Unsure != f.unsure {
				t.Errorf("Unsure = %q, want %q", p.Unsure, f.unsure)
			}
			// Every line is somewhere, and the quoted template's own
			// command never reaches the author's text.
			all := p.New + "\n" + p.Quoted + "\n" + p.Signature + "\n" + p.Unsure
			for _, l := range strings.Split(f.text, "\n") {
				if strings.TrimSpace(l) != "" && !strings.Contains(all, strings.TrimRight(l, " ")) {
					t.Errorf("line %q is in no part", l)
				}
			}
			if strings.Contains(p.New, "VOTE Name") || strings.Contains(p.New, "VOTE Carol\n\nTally") {
				t.Errorf("a quoted command is in the author's text: %q", p.New)
			}
		})
	}
	// Every language of the table has ten replies or more.
	langs := map[string]bool{}
	for _, p := range tablePatterns() {
		langs[p.Lang] = true
	}
	for l := range langs {
		if perLang[l] < 10 {
			t.Errorf("language %s has %d replies in the corpus; at least 10 wanted", l, perLang[l])
		}
	}
	for _, fam := range corpusFamilies {
		if perFamily[fam] < 5 {
			t.Errorf("family %s has %d replies in the corpus; at least 5 wanted", fam, perFamily[fam])
		}
	}
	if testing.Verbose() {
		report := func(what string, m map[string]int) {
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%d", k, m[k])
			}
			t.Logf("%s:%s", what, b.String())
		}
		report("replies per language", perLang)
		report("replies per family", perFamily)
	}
}
