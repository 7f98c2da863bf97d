package message

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// corpus returns the raw messages of the inbound corpus, the most realistic
// seeds there are.
func corpus(f *testing.F) [][]byte {
	files, err := filepath.Glob("../inbound/testdata/*.msg")
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func FuzzParseMessage(f *testing.F) {
	for _, raw := range corpus(f) {
		f.Add(raw)
	}
	f.Add([]byte("From: a@b\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: multipart/alternative; boundary=y\r\n\r\n--y\r\n\r\nhi\r\n--y--\r\n--x--\r\n"))
	f.Add([]byte("From: a@b\r\nContent-Type: multipart/report; report-type=delivery-status; boundary=x\r\n\r\n--x\r\nContent-Type: message/delivery-status\r\n\r\nA: b\r\n\r\nFinal-Recipient: rfc822; c@d\r\nAction: failed\r\n--x--\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Parse(raw)
		if m == nil && err == nil {
			t.Fatal("no message and no error")
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		}
		if m == nil {
			return
		}
		if len(m.From) == 0 {
			t.Fatal("a message without a From address")
		}
		if !utf8.ValidString(m.Text) {
			t.Fatalf("text is not UTF-8: %q", m.Text)
		}
		if strings.Contains(m.Text, "\r") {
			t.Fatalf("text keeps a CR: %q", m.Text)
		}
		if h, err := ParseHeader(raw); err != nil || h.MessageID != m.MessageID || h.Subject != m.Subject {
			t.Fatalf("ParseHeader disagrees with Parse: %v %+v", err, h)
		}
	})
}

func FuzzHTMLToText(f *testing.F) {
	f.Add(`<div dir="ltr">VOTE Bob<div class="gmail_quote"><blockquote>VOTE Carol</blockquote></div></div>`)
	f.Add(`<div id="appendonsend"></div><div id="divRplyFwdMsg"><b>From:</b> x</div><pre>a
 b</pre><p>&nbsp;</p><ul><li>x</ul>`)
	f.Add(`<html><head><title>x<body><script>y</script><style>z`)
	f.Fuzz(func(t *testing.T, s string) {
		out := HTMLToText(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input gave invalid UTF-8 output %q", out)
		}
		// Output can only grow by the quote marks and line breaks it adds.
		if len(out) > 16*len(s)+64 {
			t.Fatalf("%d bytes of HTML gave %d bytes of text", len(s), len(out))
		}
	})
}
