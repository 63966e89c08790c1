//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a process group of its own, so that a
// signal to the group reaches what it starts too: `go run` and wrapper scripts run the
// real program as their child, which a signal to the direct child alone leaves running.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// interruptGroup sends SIGINT to the process group p leads (ownProcessGroup).
func interruptGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGINT)
}

// killGroup kills what is left of the process group p leads; none left is no error.
func killGroup(p *os.Process) error {
	return signalGroup(p, syscall.SIGKILL)
}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// groupAlive reports whether a process of the group p led is still there.
func groupAlive(p *os.Process) bool {
	return syscall.Kill(-p.Pid, 0) == nil
}
