package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mafiamail/mafiamail"

// deps lists the packages each package of the module depends on, test
// files left out (go list -deps as the build sees it).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	all := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		all[f[0]] = f[1:]
	}
	if len(all) < 30 {
		t.Fatalf("go list found %d packages of the module", len(all))
	}
	return all
}

// TestBinaryHoldsTheProductOnly keeps test code out of the shipped binary:
// neither the testing package nor the test tools (internal/testkit: real
// mail servers, fault proxies) nor the bench and its relay may be linked
// into mafiamail, nor a copy of the standard library's templates
// (internal/tmplexec). The embedded mail server of demo and serve
// --embedded is product, and allowed.
func TestBinaryHoldsTheProductOnly(t *testing.T) {
	binary, ok := deps(t)[module+"/cmd/mafiamail"]
	if !ok {
		t.Fatal("go list does not list cmd/mafiamail")
	}
	for _, pkg := range binary {
		switch {
		case pkg == "testing", strings.HasPrefix(pkg, "testing/"),
			strings.HasPrefix(pkg, module+"/internal/testkit"),
			strings.HasPrefix(pkg, module+"/internal/tmplexec"),
			strings.HasPrefix(pkg, module+"/cmd/mafiamail-bench"),
			strings.HasPrefix(pkg, module+"/e2e"),
			pkg == module+"/docs":
			t.Errorf("mafiamail links %s", pkg)
		}
	}
}

// TestOneJobPerPackage keeps the packages to their own work: the
// documents are no code the product runs (the rules players are mailed
// are package lang's), the sender and the watcher move mail and know
// nothing of games or of the store (the host hands them what they need
// through adapters), and the MIME writer knows nothing of the rest of the
// module.
func TestOneJobPerPackage(t *testing.T) {
	all := deps(t)
	for pkg, ds := range all {
		testOnly := strings.HasPrefix(pkg, module+"/internal/testkit") || strings.HasPrefix(pkg, module+"/e2e")
		if pkg != module+"/docs" && !testOnly && slices.Contains(ds, module+"/docs") {
			t.Errorf("%s depends on package docs", pkg)
		}
	}
	for pkg, banned := range map[string][]string{
		"mail/sender":   {"engine", "store", "host", "mail/compose"},
		"mail/watcher":  {"engine", "store", "host", "mail/compose"},
		"mail/mimepart": {""},
	} {
		ds, ok := all[module+"/"+pkg]
		if !ok {
			t.Errorf("go list does not list %s", pkg)
			continue
		}
		for _, d := range ds {
			for _, b := range banned {
				if d == module+"/"+b || b == "" && strings.HasPrefix(d, module+"/") {
					t.Errorf("%s depends on %s", pkg, d)
				}
			}
		}
	}
}
