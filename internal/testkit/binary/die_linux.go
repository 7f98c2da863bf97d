package binary

import (
	"os/exec"
	"syscall"
)

// DieWithParent has the kernel kill cmd's process when the process that
// started it dies, so that a killed test or bench leaves no host running
// behind it.
func DieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
