package main

import (
	"syscall"
	"time"
)

// cpuTime is the user+system CPU time the whole process (load generator, gateway and mock)
// has used so far.
func cpuTime() time.Duration {
	var created, exited, kernel, user syscall.Filetime
	self, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(self, &created, &exited, &kernel, &user) != nil {
		return 0
	}
	// A FILETIME here is a duration in 100 ns units (Filetime.Nanoseconds would count
	// from 1601).
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration(ticks(kernel)+ticks(user)) * 100
}
