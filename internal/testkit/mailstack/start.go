package mailstack

import (
	"fmt"
	"os"
	"strings"
)

// TB is the part of testing.TB that Start uses. The package does not import
// testing, so that a program such as the bench links it without the test
// framework.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
	Cleanup(func())
}

// Start is Launch for a test: it closes the stack when tb's test ends,
// logging the end of both servers' logs first if the test failed. Where
// the servers are not installed, or the test does not run as root, Start
// skips the test, unless the environment variable CI is set: then it fails
// the test, because CI must run these tests rather than skip them.
func Start(tb TB, opts Config) *Stack {
	tb.Helper()
	if !require(tb) {
		return nil // not reached with a real testing.TB
	}
	s, err := Launch(opts)
	if err != nil {
		tb.Fatalf("%v", err)
		return nil
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			if logs := s.LogTails(40); logs != "" {
				tb.Logf("mailstack: %s", logs)
			}
		}
		if err := s.Close(); err != nil {
			tb.Errorf("%v", err)
		}
	})
	return s
}

// Require skips tb where no stack can start here, or fails it when the
// environment variable CI is set, as Start does. It is for tests whose
// stacks are started by the code under test, with Launch.
func Require(tb TB) {
	tb.Helper()
	require(tb)
}

func require(tb TB) bool {
	tb.Helper()
	if err := Available(); err != nil {
		msg := fmt.Sprintf("mailstack: no real mail servers: %v (.ci/run installs the Debian packages dovecot-imapd, dovecot-lmtpd and postfix, as root)", err)
		if inCI() {
			tb.Fatal(msg)
		} else {
			tb.Skip(msg)
		}
		return false
	}
	return true
}

// inCI reports whether the environment says this is a CI run, where a
// missing mail server is a broken machine rather than a reason to skip.
func inCI() bool {
	v := strings.TrimSpace(os.Getenv("CI"))
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}
