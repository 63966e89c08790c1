package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// cpu is the user+system CPU time the child's process group has used so far: the child's
// and every process of its group's (ownProcessGroup), with what their children that have
// exited and been waited for used. A `go run` child or a wrapper script runs the real
// program as its own child, whose CPU the direct child's figures do not include while it
// runs. Read from /proc (Linux); 0 where there is none. A member that exits before its
// parent waits for it drops out of the sum until then.
func (c *child) cpu() time.Duration {
	return groupCPU(c.cmd.Process.Pid)
}

// ticksPerSecond is USER_HZ, the unit of /proc's CPU times (100 on every Linux port).
const ticksPerSecond = 100

// groupCPU sums the CPU time of the processes of process group pgid, each with its
// waited-for children's.
func groupCPU(pgid int) time.Duration {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var ticks int64
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		st, ok := readProcStat(pid)
		if ok && st.pgrp == pgid {
			ticks += st.utime + st.stime + st.cutime + st.cstime
		}
	}
	return time.Duration(ticks) * time.Second / ticksPerSecond
}

// procStat are the fields of /proc/<pid>/stat cpu reads.
type procStat struct {
	pgrp                         int
	utime, stime, cutime, cstime int64
}

// readProcStat reads /proc/<pid>/stat; false when the process is gone or the file is not
// as proc(5) describes it.
func readProcStat(pid int) (procStat, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	// The fields after the parenthesised command name (which may hold spaces and ')'):
	// state is field 3, pgrp 5, utime 14, stime 15, cutime 16 and cstime 17.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return procStat{}, false
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 15 {
		return procStat{}, false
	}
	var st procStat
	var errs [5]error
	st.pgrp, errs[0] = strconv.Atoi(f[2])
	st.utime, errs[1] = strconv.ParseInt(f[11], 10, 64)
	st.stime, errs[2] = strconv.ParseInt(f[12], 10, 64)
	st.cutime, errs[3] = strconv.ParseInt(f[13], 10, 64)
	st.cstime, errs[4] = strconv.ParseInt(f[14], 10, 64)
	for _, err := range errs {
		if err != nil {
			return procStat{}, false
		}
	}
	return st, true
}
