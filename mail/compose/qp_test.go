package compose

import (
	"bytes"
	"mime/quotedprintable"
	"strings"
	"testing"
)

// FuzzQuotedPrintable: writeQuotedPrintable writes what
// mime/quotedprintable's Writer writes, byte for byte.
func FuzzQuotedPrintable(f *testing.F) {
	for _, s := range []string{
		"", "a", " ", "a \r\nb\t\n", "=", "é", "\r\ré\n", "\r \n", "a\n\rb",
		strings.Repeat("x", 74) + " é", strings.Repeat("y", 75) + " \n", strings.Repeat("z", 73) + "==" + strings.Repeat("w", 200),
		"Judy writes:\r\n> quoted  \r\n\r\nVOTE Bob\x00\x7f\xff ", strings.Repeat("ab \t", 60),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		qw := quotedprintable.NewWriter(&want)
		if _, err := qw.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if err := qw.Close(); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		writeQuotedPrintable(&got, s)
		if got.String() != want.String() {
			t.Fatalf("%q:\n got %q\nwant %q", s, got.String(), want.String())
		}
	})
}
