//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// ownProcessGroup does nothing here: without Unix process groups a child's own children
// are not reached by stopping it (Windows cannot send it an interrupt either, so stop
// kills it at once).
func ownProcessGroup(cmd *exec.Cmd) {}

// interruptGroup asks the child p to stop (an error where that cannot be sent).
func interruptGroup(p *os.Process) error {
	return p.Signal(os.Interrupt)
}

// killGroup kills the child p.
func killGroup(p *os.Process) error {
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

// groupAlive is false: there is no group to outlive the child.
func groupAlive(p *os.Process) bool { return false }
