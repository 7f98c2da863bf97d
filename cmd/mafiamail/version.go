package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mafiamail/mafiamail/internal/cli"
)

// version and commit are the release this binary was built as and its
// commit, set by the release build (scripts/release) with -ldflags
// "-X main.version=v1.2.3 -X main.commit=abc123"; empty for any other
// build, which then reports its module version (or "devel") and the
// commit the Go toolchain stamped, if any.
var version, commit string

// buildInfo says what this binary is: its version, the commit it was built
// from (with "+dirty" when the work tree had changes), and the Go release
// and platform it was built for.
func buildInfo() string {
	v, rev, dirty := version, commit, false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version // go install module@version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.modified":
				dirty = dirty || s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if rev == "" {
		rev = "unknown"
	} else if len(rev) > 12 && !strings.Contains(rev, "+") {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	return fmt.Sprintf("mafiamail %s (commit %s, %s, %s/%s)", v, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := cli.Flags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("version takes no arguments")
	}
	fmt.Fprintln(stdout, buildInfo())
	return nil
}
