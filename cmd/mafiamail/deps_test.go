package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryHoldsTheProductOnly keeps test code out of the shipped binary:
// neither the testing package nor the test tools (internal/testkit: real
// mail servers, fault proxies) nor the bench and its relay may be linked
// into mafiamail. The embedded mail server of demo and serve --embedded is
// product, and allowed.
func TestBinaryHoldsTheProductOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/mafiamail/mafiamail/"
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == "testing", strings.HasPrefix(pkg, "testing/"),
			strings.HasPrefix(pkg, module+"internal/testkit"),
			strings.HasPrefix(pkg, module+"cmd/mafiamail-bench"),
			strings.HasPrefix(pkg, module+"e2e"):
			t.Errorf("mafiamail links %s", pkg)
		}
	}
}
