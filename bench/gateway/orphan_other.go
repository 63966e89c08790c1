//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing: only Linux has a parent-death signal, so elsewhere a killed
// load generator leaves its children to stop (they are stopped on every normal exit).
func dieWithParent(cmd *exec.Cmd) {}
