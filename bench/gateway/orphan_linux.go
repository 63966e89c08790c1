package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the child die if the load generator is killed (Linux's parent-death
// signal).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
