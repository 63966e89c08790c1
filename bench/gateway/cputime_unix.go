//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time the whole process (load generator, gateway and mock)
// has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
