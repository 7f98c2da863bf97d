//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a child's life to
// its parent's; the caller stops its children itself.
func dieWithParent(*exec.Cmd) {}
