package address

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]string{
		"alice@example.org":            "alice@example.org",
		"Alice.Hart+mafia@Example.ORG": "Alice.Hart+mafia@example.org",
		"o'brien@mail.example.co.uk":   "o'brien@mail.example.co.uk",
		"a_b-c@x-y.example":            "a_b-c@x-y.example",
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := []string{
		// The envelope injection: a quoted local part, read unquoted.
		"victim@example.test> ORCPT=rfc822;x@evil.test",
		`"victim@example.test> ORCPT=rfc822;x"@evil.test`,
		"a b@example.org", "a<b@example.org", "a>@example.org", "a\r\nRCPT TO:<x@y.z>@example.org",
		".alice@example.org", "alice.@example.org", "al..ice@example.org",
		"alice@[127.0.0.1]", "alice@localhost", "alice@-example.org", "alice@exa_mple.org", "alice@example..org",
		"ali\u202ece@example.org", "ali\u00a0ce@example.org", "ali\u200bce@example.org", "alice@exa\u2028mple.org",
		"ali\xffce@example.org", "alice", "@example.org", "alice@",
		"a(comment)@example.org", "a,b@example.org", "a;b@example.org", "a:b@example.org",
	}
	for _, in := range bad {
		if got, err := Parse(in); !errors.Is(err, ErrNotPlain) {
			t.Errorf("Parse(%q) = %q, %v; want refused", in, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("alice@example.org")
	f.Add(`"x> ORCPT=rfc822;y"@evil.test`)
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			return
		}
		for i := 0; i < len(a); i++ {
			if c := a[i]; c <= ' ' || c == 0x7f || c == '<' || c == '>' || c == '"' || c == '\\' {
				t.Fatalf("Parse(%q) accepted %q, which holds %q", s, a, c)
			}
		}
		if b, err := Parse(a); err != nil || b != a {
			t.Fatalf("Parse is not idempotent on %q: %q, %v", a, b, err)
		}
	})
}
