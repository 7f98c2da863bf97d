package inbound

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"
)

func FuzzInspect(f *testing.F) {
	files, err := filepath.Glob("testdata/*.msg")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r := Inspect(raw, testConfig, testDirectory)
		checkInvariants(t, r)
		if _, err := r.JSON(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzAuthenticationResults: whatever comments and quotes a field holds, a
// dmarc=fail written after it is never hidden — the field with it appended
// never passes — and reading never panics.
func FuzzAuthenticationResults(f *testing.F) {
	for _, v := range []string{
		"mx.example.org; dmarc=pass header.from=example.net",
		"mx.example.org; dkim=pass (good; signature) header.d=example.net",
		"mx.example.org; spf=pass (unbalanced smtp.mailfrom=a@example.net",
		`mx.example.org; spf=fail smtp.mailfrom="x;dmarc=pass header.from=example.net;"@evil.example`,
		`mx.example.org; dkim=pass (a \( b) header.d=example.net`,
		"mx.example.org; spf=pass smtp.mailfrom=a@example.net",
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsAny(v, "\r\n") {
			return // one field value; folding is the header reader's
		}
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), "mx.example.org") {
			v = "mx.example.org; " + v // a field of the trusted id, or nothing is tested
		}
		read := func(value string) AuthResult {
			var h mail.Header
			h.Add("Authentication-Results", value)
			return CheckAuthentication(h, "mx.example.org", "someone@example.net")
		}
		read(v)
		if got := read(v + "; dmarc=fail header.from=example.net"); got.Passed() {
			t.Fatalf("a dmarc=fail after %q was hidden: %+v", v, got)
		}
	})
}
