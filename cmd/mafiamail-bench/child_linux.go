package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd's process when the process that
// started it dies, so that a killed bench or test leaves no host or relay
// running behind it.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
