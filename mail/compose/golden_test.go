package compose_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	gomail "github.com/emersion/go-message/mail"

	"github.com/mafiamail/mafiamail/mail/compose"
	"github.com/mafiamail/mafiamail/mail/mimepart"
	"github.com/mafiamail/mafiamail/templates"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// parsed is a composed message read back with go-message.
type parsed struct {
	header gomail.Header
	// fields are the header fields in order, as "Key: decoded value".
	fields []string
	text   string
	html   string
	// textType and htmlType are the parts' media types with parameters.
	textType, htmlType string
	textCTE, htmlCTE   string
	// textFormat and textDelSp are the text part's format and delsp
	// parameters (RFC 3676).
	textFormat, textDelSp string
	topType               string
	parts                 int
	// images are the inline pictures the HTML shows, by Content-ID.
	images map[string][]byte
	// calendar is the iCalendar attachment, and calendarType its media
	// type with its parameters.
	calendar     []byte
	calendarType string
}

// readBack parses raw bytes with go-message's mail reader, as a recipient's
// client would.
func readBack(t *testing.T, raw []byte) parsed {
	t.Helper()
	mr, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("go-message cannot read the message: %v\n%s", err, raw)
	}
	defer mr.Close()
	var p parsed
	p.header = mr.Header
	p.topType, _, _ = mr.Header.ContentType()
	dec := new(mime.WordDecoder)
	fields := mr.Header.Fields()
	for fields.Next() {
		v, err := dec.DecodeHeader(fields.Value())
		if err != nil {
			t.Fatalf("header %s: %v", fields.Key(), err)
		}
		p.fields = append(p.fields, fields.Key()+": "+v)
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read part: %v", err)
		}
		if ah, ok := part.Header.(*gomail.AttachmentHeader); ok {
			typ, params, _ := ah.ContentType()
			if typ != "text/calendar" {
				t.Fatalf("part %d is an attachment of type %s", p.parts, typ)
			}
			if p.calendar, err = io.ReadAll(part.Body); err != nil {
				t.Fatalf("read calendar: %v", err)
			}
			p.calendarType = mime.FormatMediaType(typ, params)
			p.parts++
			continue
		}
		h, ok := part.Header.(*gomail.InlineHeader)
		if !ok {
			t.Fatalf("part %d is not inline", p.parts)
		}
		typ, params, _ := h.ContentType()
		body, err := io.ReadAll(part.Body)
		if err != nil {
			t.Fatalf("read part body: %v", err)
		}
		full := typ + "; charset=" + params["charset"]
		raw := body
		// Quoted-printable carries line ends as CRLF.
		body = bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
		cte := h.Get("Content-Transfer-Encoding")
		switch typ {
		case "text/plain":
			p.text, p.textType, p.textCTE = string(body), full, cte
			p.textFormat, p.textDelSp = params["format"], params["delsp"]
		case "text/html":
			p.html, p.htmlType, p.htmlCTE = string(body), full, cte
		case "image/png":
			if p.images == nil {
				p.images = map[string][]byte{}
			}
			p.images[strings.Trim(h.Get("Content-Id"), "<>")] = raw
		}
		p.parts++
	}
	return p
}

// shownFields are the header fields golden files show: the ones a reader,
// a mail client or a filter looks at. Content-Type's boundary is noise.
var shownFields = []string{"Date", "From", "To", "Reply-To", "Subject", "Message-Id", "In-Reply-To",
	"References", "List-Id", "List-Help", "List-Post", "Precedence", "Auto-Submitted",
	"X-Mafiamail-Game", "X-Mafiamail-Kind", "Content-Language"}

func (p parsed) goldenText() string {
	var b strings.Builder
	for _, f := range p.fields {
		k, _, _ := strings.Cut(f, ":")
		for _, want := range shownFields {
			if strings.EqualFold(k, want) {
				b.WriteString(f + "\n")
			}
		}
	}
	b.WriteString("\n")
	b.WriteString(strings.ReplaceAll(p.text, "\r\n", "\n"))
	return b.String()
}

// goldens collects the messages a scenario names, to compare with (or
// write to) testdata/<setup>/<name>.{txt,html}.golden.
type goldens struct {
	t     *testing.T
	setup string
	msgs  map[string]compose.Outgoing
}

func newGoldens(t *testing.T, setup string) *goldens {
	return &goldens{t: t, setup: setup, msgs: map[string]compose.Outgoing{}}
}

func (g *goldens) add(name string, m compose.Outgoing) {
	g.t.Helper()
	if _, dup := g.msgs[name]; dup {
		g.t.Fatalf("golden %s named twice", name)
	}
	g.msgs[name] = m
}

// check compares every named message with its golden files, or rewrites
// them with -update, and removes golden files no scenario names any more.
func (g *goldens) check() {
	t := g.t
	dir := filepath.Join("testdata", g.setup)
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.golden"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	var names []string
	for n := range g.msgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := readBack(t, g.msgs[n].Raw)
		checkFlowed(t, n, p)
		for ext, got := range map[string]string{"txt": p.goldenText(), "html": strings.ReplaceAll(p.html, "\r\n", "\n")} {
			file := filepath.Join(dir, n+"."+ext+".golden")
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: %v (run go test -update to write it)", file, err)
				continue
			}
			if string(want) != got {
				t.Errorf("%s differs from the composed message (run go test -update if the change is meant):\n%s", file, diff(string(want), got))
			}
		}
	}
	if !*update {
		files, _ := filepath.Glob(filepath.Join(dir, "*.golden"))
		for _, f := range files {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".golden"), ".txt"), ".html")
			if _, ok := g.msgs[base]; !ok {
				t.Errorf("%s belongs to no message of the scenario (run go test -update)", f)
			}
		}
	}
}

// covers checks that the named messages, between them, show every kind of
// news the templates know.
func (g *goldens) covers() {
	seen := map[string]bool{}
	for _, m := range g.msgs {
		for _, k := range m.Contents {
			seen[k] = true
		}
	}
	for _, k := range templates.Kinds() {
		if !seen[k] {
			g.t.Errorf("no %s golden file shows a section of kind %q", g.setup, k)
		}
	}
}

// diff shows the first lines where two texts differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, a, b)
		}
	}
	return "(no line differs)"
}

// checkFlowed checks a text part as a plain-text reader gets it: valid
// format=flowed, no physical line longer than 78 characters, and read back
// by a decoder written apart from the encoder, paragraphs that encode to
// the very same part (so nothing was lost or joined wrongly on the way).
func checkFlowed(t *testing.T, where string, p parsed) {
	t.Helper()
	if p.textFormat != "flowed" {
		t.Errorf("%s: text part format=%q, want flowed", where, p.textFormat)
		return
	}
	delSp := strings.EqualFold(p.textDelSp, "yes")
	for i, l := range strings.Split(strings.TrimSuffix(p.text, "\n"), "\n") {
		if n := utf8.RuneCountInString(l); n > 78 {
			t.Errorf("%s: text line %d has %d characters: %q", where, i+1, n, l)
		}
	}
	decoded := mimepart.DecodeFlowed(p.text, delSp)
	for i, l := range strings.Split(decoded, "\n") {
		if strings.HasSuffix(l, " ") && l != "-- " {
			t.Errorf("%s: decoded paragraph %d ends in a space: %q", where, i+1, l)
		}
	}
	again, againDelSp := compose.EncodeFlowed(decoded)
	if again != p.text || againDelSp != delSp {
		t.Errorf("%s: the text part does not decode to the paragraphs it was made of:\n%s", where, diff(p.text, again))
	}
}
