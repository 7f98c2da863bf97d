//go:build linux

package mailstack

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// verdict records what Start tells a test on a machine without servers.
type verdict struct {
	testing.TB
	fatal, skip string
}

func (v *verdict) Helper()               {}
func (v *verdict) Fatal(args ...any)     { v.fatal = fmt.Sprint(args...) }
func (v *verdict) Skip(args ...any)      { v.skip = fmt.Sprint(args...) }
func (v *verdict) Cleanup(f func())      { panic("Start registered a cleanup without a stack") }
func (v *verdict) Fatalf(string, ...any) { panic("Start failed for another reason") }

// TestWithoutServersCIFailsAndOthersSkip: a CI run must never pass by
// skipping the real-server tests; a developer without the servers skips.
func TestWithoutServersCIFailsAndOthersSkip(t *testing.T) {
	programsFinder = func() (programs, error) { return programs{}, errors.New("dovecot is not installed") }
	defer func() { programsFinder = findPrograms }()

	for _, tc := range []struct {
		ci       string
		wantFail bool
	}{{"true", true}, {"1", true}, {"", false}, {"false", false}, {"0", false}} {
		t.Setenv("CI", tc.ci)
		v := &verdict{TB: t}
		if s := Start(v, Config{}); s != nil {
			t.Fatalf("CI=%q: Start returned a stack", tc.ci)
		}
		got := v.skip
		if tc.wantFail {
			got = v.fatal
		}
		if got == "" || v.fatal != "" && v.skip != "" {
			t.Errorf("CI=%q: fatal %q, skip %q; want only the %s", tc.ci, v.fatal, v.skip, map[bool]string{true: "fatal", false: "skip"}[tc.wantFail])
		}
		if !strings.Contains(got, "dovecot is not installed") || !strings.Contains(got, ".ci/run") {
			t.Errorf("CI=%q: message %q should give the reason and name .ci/run", tc.ci, got)
		}
	}
}
