package main

import (
	"bytes"
	"io"
	"regexp"
	"testing"
)

// `mafiamail version` names the release and the commit the release build
// stamped, and says "devel" for any other build.
func TestVersion(t *testing.T) {
	for _, tt := range []struct {
		version, commit string
		want            string
	}{
		{"v1.2.3", "0123456789ab", `^mafiamail v1\.2\.3 \(commit 0123456789ab, go1\.\d+[^,]*, \w+/\w+\)\n$`},
		{"v1.2.3", "0123456789ab+dirty", `^mafiamail v1\.2\.3 \(commit 0123456789ab\+dirty, `},
		{"", "", `^mafiamail devel \(commit unknown, `},
	} {
		version, commit = tt.version, tt.commit
		var out bytes.Buffer
		if code := run([]string{"version"}, nil, &out, io.Discard); code != 0 {
			t.Fatalf("version: exit %d", code)
		}
		if !regexp.MustCompile(tt.want).MatchString(out.String()) {
			t.Errorf("version %q commit %q: printed %q, want it to match %s", tt.version, tt.commit, out.String(), tt.want)
		}
	}
	version, commit = "", ""
	if code := run([]string{"version", "extra"}, nil, io.Discard, io.Discard); code != 2 {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}
