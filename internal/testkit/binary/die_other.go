//go:build !linux

package binary

import "os/exec"

// DieWithParent does nothing where the kernel cannot tie a child's life to
// its parent's; the caller stops its children itself.
func DieWithParent(*exec.Cmd) {}
