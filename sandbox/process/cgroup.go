//go:build linux

package process

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cgroupSet is where per-run groups are created: a v2 directory whose subtree has the
// memory and pids controllers, or the parents in the v1 memory and pids hierarchies.
type cgroupSet struct {
	version int
	v2      string // v2 parent
	// v1 parents, and the groups this process's threads live in (to move back to)
	v1Memory, v1Pids         string
	v1MemoryHome, v1PidsHome string
}

// detectCgroups finds a cgroup hierarchy this process can create run groups in. parent, if
// set, is a delegated cgroup v2 directory to use. The error says why none can be used.
func detectCgroups(parent string) (*cgroupSet, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	var reasons []string
	if v2 := parent; v2 != "" || mounts["cgroup2"] != "" {
		if v2 == "" {
			v2 = filepath.Join(mounts["cgroup2"], own["0"])
		}
		err := prepareV2(v2)
		if err == nil {
			return &cgroupSet{version: 2, v2: v2}, nil
		}
		if parent != "" {
			return nil, err
		}
		reasons = append(reasons, err.Error())
	}
	if mounts["memory"] != "" && mounts["pids"] != "" {
		set := &cgroupSet{version: 1,
			v1MemoryHome: filepath.Join(mounts["memory"], own["memory"]),
			v1PidsHome:   filepath.Join(mounts["pids"], own["pids"]),
		}
		set.v1Memory, set.v1Pids = set.v1MemoryHome, set.v1PidsHome
		err := errors.Join(probeDir(set.v1Memory), probeDir(set.v1Pids))
		if err == nil {
			return set, nil
		}
		reasons = append(reasons, "cgroup v1: "+err.Error())
	} else {
		reasons = append(reasons, "cgroup v1: the memory and pids hierarchies are not both mounted")
	}
	return nil, errors.New(strings.Join(reasons, "; "))
}

// prepareV2 checks that dir offers the memory and pids controllers to its children,
// enabling them if needed, and that a child group can be created.
func prepareV2(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("cgroup v2 at %s: %v", dir, err)
	}
	have := strings.Fields(string(data))
	for _, c := range []string{"memory", "pids"} {
		if !slices.Contains(have, c) {
			return fmt.Errorf("cgroup v2 at %s: the %s controller is not available there", dir, c)
		}
	}
	data, err = os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup v2 at %s: %v", dir, err)
	}
	if enabled := strings.Fields(string(data)); !slices.Contains(enabled, "memory") || !slices.Contains(enabled, "pids") {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory +pids"), 0); err != nil {
			return fmt.Errorf("cgroup v2 at %s: cannot enable memory and pids for child groups (delegate a cgroup whose own processes live in a leaf, e.g. systemd Delegate=yes, and set the cgroup parent): %v", dir, err)
		}
	}
	if err := probeDir(dir); err != nil {
		return fmt.Errorf("cgroup v2 at %s: %v", dir, err)
	}
	return nil
}

// probeDir creates and removes a child group in dir.
func probeDir(dir string) error {
	probe := filepath.Join(dir, "switchyard-probe-"+randomSuffix())
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Errorf("cannot create a child group: %v", err)
	}
	return os.Remove(probe)
}

// cgroupMounts maps "cgroup2" to the v2 mount point and "memory" and "pids" to their v1
// hierarchies' mount points (/proc/self/mountinfo).
func cgroupMounts() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if sep < 5 || sep+1 >= len(fields) {
			continue
		}
		point, fstype := fields[4], fields[sep+1]
		switch fstype {
		case "cgroup2":
			if out["cgroup2"] == "" {
				out["cgroup2"] = point
			}
		case "cgroup":
			if sep+3 < len(fields) {
				for _, opt := range strings.Split(fields[sep+3], ",") {
					if (opt == "memory" || opt == "pids") && out[opt] == "" {
						out[opt] = point
					}
				}
			}
		}
	}
	return out, sc.Err()
}

// ownCgroups maps "0" to this process's v2 group and each v1 controller to its group
// (/proc/self/cgroup).
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out["0"] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// runGroup is one run's cgroup (in both v1 hierarchies for v1).
type runGroup struct {
	set       *cgroupSet
	dirs      []string // v2: one; v1: memory, pids
	v2FD      *os.File
	threadOut bool // v1: the starting thread was moved in and not back
}

// newRunGroup creates a group for one run with the memory and process limits.
func (s *cgroupSet) newRunGroup(memoryBytes int64, processes int) (*runGroup, error) {
	name := "switchyard-run-" + randomSuffix()
	g := &runGroup{set: s}
	write := func(dir, file, value string, optional bool) error {
		err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0)
		if err != nil && !(optional && errors.Is(err, os.ErrNotExist)) {
			return fmt.Errorf("cgroup %s: %s: %v", dir, file, err)
		}
		return nil
	}
	mem, procs := strconv.FormatInt(memoryBytes, 10), strconv.Itoa(processes)
	var err error
	switch s.version {
	case 2:
		dir := filepath.Join(s.v2, name)
		if err = os.Mkdir(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cgroup: %v", err)
		}
		g.dirs = []string{dir}
		err = errors.Join(write(dir, "memory.max", mem, false), write(dir, "memory.swap.max", "0", true),
			write(dir, "pids.max", procs, false))
		if err == nil {
			g.v2FD, err = os.Open(dir)
		}
	case 1:
		for _, parent := range []string{s.v1Memory, s.v1Pids} {
			dir := filepath.Join(parent, name)
			if err = os.Mkdir(dir, 0o755); err != nil {
				break
			}
			g.dirs = append(g.dirs, dir)
		}
		if err == nil {
			err = errors.Join(write(g.dirs[0], "memory.limit_in_bytes", mem, false),
				write(g.dirs[0], "memory.memsw.limit_in_bytes", mem, true),
				write(g.dirs[1], "pids.max", procs, false))
		}
	}
	if err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// prepare arranges for the process started next on this (locked) thread to begin in the
// group: v2 through clone3's CLONE_INTO_CGROUP, v1 by moving the thread in (see started).
func (g *runGroup) prepare(attr *syscall.SysProcAttr) error {
	if g.set.version == 2 {
		attr.UseCgroupFD, attr.CgroupFD = true, int(g.v2FD.Fd())
		return nil
	}
	tid := strconv.Itoa(unix.Gettid())
	g.threadOut = true
	for _, dir := range g.dirs {
		if err := os.WriteFile(filepath.Join(dir, "tasks"), []byte(tid), 0); err != nil {
			return fmt.Errorf("cgroup %s: %v", dir, err)
		}
	}
	return nil
}

// started moves the starting thread back home (v1). It reports false when that failed: the
// caller must then let the thread die (leave it locked) rather than reuse it.
func (g *runGroup) started() bool {
	if g.set.version != 1 || !g.threadOut {
		return true
	}
	tid := []byte(strconv.Itoa(unix.Gettid()))
	for _, home := range []string{g.set.v1MemoryHome, g.set.v1PidsHome} {
		if err := os.WriteFile(filepath.Join(home, "tasks"), tid, 0); err != nil {
			return false
		}
	}
	g.threadOut = false
	return true
}

// oomKilled reports whether the kernel killed a process of the group for memory.
func (g *runGroup) oomKilled() bool {
	file := "memory.events"
	if g.set.version == 1 {
		file = "memory.oom_control"
	}
	data, err := os.ReadFile(filepath.Join(g.dirs[0], file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// remove kills what is left in the group and deletes it.
func (g *runGroup) remove() {
	if g.v2FD != nil {
		g.v2FD.Close()
	}
	for _, dir := range g.dirs {
		if g.set.version == 2 {
			_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		}
		// Exited processes may take a moment to leave the group: retry for up to ~2 s.
		for wait := time.Millisecond; wait < 2*time.Second; wait *= 2 {
			if data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs")); err == nil {
				for _, pid := range strings.Fields(string(data)) {
					if n, err := strconv.Atoi(pid); err == nil {
						_ = syscall.Kill(n, syscall.SIGKILL)
					}
				}
			}
			if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(wait)
		}
	}
}

func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}
