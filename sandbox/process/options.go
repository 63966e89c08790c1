// Package process is the sandbox backend that runs the harness with the host's python3 under
// bubblewrap (Debian package "bubblewrap").
//
// Each run gets new user, PID, network, IPC, UTS and cgroup namespaces (and may not create
// more user namespaces), an unprivileged uid (65534, also on the host when this process is
// root), no capabilities, a system call filter (amd64: keyrings, BPF, perf, io_uring,
// ptrace, mount and namespace calls fail with EPERM), a cleared environment, a read-only
// root with read-only mounts of the system's /usr (and
// the interpreter's prefix), the bundle (/job) and the harness (/sandbox), a private
// size-capped /tmp, rlimits on CPU, address space, file size and processes, and a wall-clock
// deadline that kills the whole process tree (the PID namespace dies with its first
// process).
//
// Memory and processes are bounded for the run as a whole, not only per process
// ([Runner.Limiting] says which applies here):
//   - cgroup v2 (LimitCgroupV2), where this process's cgroup (or Options.CgroupParent, a
//     delegated directory) offers the memory and pids controllers to child groups: each run
//     starts in a group of its own (clone3 CLONE_INTO_CGROUP; both stages of a run share it) with memory.max =
//     Limits.MemoryBytes, memory.swap.max = 0 and pids.max = Limits.MaxProcesses; the group
//     is killed and removed after the run.
//   - cgroup v1 (LimitCgroupV1), where the memory and pids hierarchies are writable (as
//     root): the same per-run group in both (memory.limit_in_bytes, pids.max).
//   - otherwise one process per run (LimitOneProcess): the system call filter refuses
//     fork, vfork and clone without CLONE_THREAD (threads still work, subprocess and
//     multiprocessing do not), so RLIMIT_AS = Limits.MemoryBytes bounds the run.
//
// A run whose processes together pass the memory limit fails with
// sandbox.ReasonMemoryLimit. RLIMIT_NPROC is applied inside each run's own user namespace,
// where the kernel counts it per namespace: concurrent runs never share a process limit,
// even though they run as the same host uid. The only way out is a Unix socket bound into the sandbox and proxied to the job's
// gateway; the harness forwards 127.0.0.1:<port> to it so plain HTTP clients work.
//
// When bubblewrap cannot create the namespaces, [New] fails with an error matching
// sandbox.ErrUnavailable: this backend never runs code without isolation.
//
// Only Linux has these namespaces and filters: elsewhere (macOS, Windows) the package
// builds, but [New] always fails with an error matching both [ErrUnsupportedOS] and
// sandbox.ErrUnavailable, so a caller falls back to the wasm backend (sandbox/auto does)
// and never runs user code unisolated.
package process

import (
	"errors"
	"log/slog"
)

// ErrUnsupportedOS is matched (with errors.Is) by the error [New] returns on an operating
// system other than Linux, which has none of the isolation this backend is made of
// (bubblewrap's namespaces, seccomp, cgroups). That error matches sandbox.ErrUnavailable
// too.
var ErrUnsupportedOS = errors.New("the process sandbox needs Linux")

// How a run's memory and process count are bounded as a whole (see the package doc).
const (
	// LimitCgroupV2: a cgroup v2 per run (memory.max, memory.swap.max, pids.max).
	LimitCgroupV2 = "cgroup v2"
	// LimitCgroupV1: a cgroup per run in the v1 memory and pids hierarchies
	// (memory.limit_in_bytes, pids.max).
	LimitCgroupV1 = "cgroup v1"
	// LimitOneProcess: no usable cgroup, so a run is one process: the system call filter
	// refuses fork, vfork and clone without CLONE_THREAD, and RLIMIT_AS bounds the process.
	LimitOneProcess = "one process per run"
)

// Values of Options.Cgroups.
const (
	// CgroupsAuto uses cgroup v2, else v1, where this process may create child groups with
	// the memory and pids controllers, and one process per run otherwise.
	CgroupsAuto = "auto"
	// CgroupsOff never uses cgroups: one process per run.
	CgroupsOff = "off"
)

// DefaultMaxCachedVenvs is Options.MaxCachedVenvs's default.
const DefaultMaxCachedVenvs = 64

// Options configure a [Runner]. The zero value is usable.
type Options struct {
	// Bwrap is the bubblewrap binary (default: "bwrap" on PATH).
	Bwrap string
	// Python is the interpreter (default: /usr/bin/python3 if present, else "python3" on
	// PATH). Its installation prefix is mounted read-only into the sandbox, so prefer a system
	// interpreter under /usr over one in a home directory.
	Python string
	// WorkDir is where per-run workspaces are created (default: os.TempDir()). It must be
	// reachable by HostUID.
	WorkDir string
	// CacheDir holds the virtualenvs built for DEPENDENCIES, one per dependency set
	// (default: <os.TempDir()>/switchyard-sandbox-venvs-<uid>).
	CacheDir string
	// MaxCachedVenvs bounds the dependency-set virtualenvs CacheDir keeps (default 64;
	// negative: no bound). Beyond it, building another removes the least recently used ones
	// that no run can still be using (unused for longer than a run may last).
	MaxCachedVenvs int
	// PackageIndex is the package index pip installs DEPENDENCIES from
	// (default: https://pypi.org/simple).
	PackageIndex string
	// HostUID and HostGID are the host ids bubblewrap runs as when this process is root
	// (default 65534, "nobody"), so that even the sandbox's own user namespace maps to an
	// unprivileged host user. Ignored when not running as root.
	HostUID, HostGID int
	// Cgroups is CgroupsAuto ("" too) or CgroupsOff: whether a run's memory and processes
	// are bounded as a whole by a cgroup per run, or the run is held to one process.
	Cgroups string
	// CgroupParent is a delegated cgroup v2 directory to create run groups in (default: this
	// process's own cgroup, which works only where its processes may have children groups).
	CgroupParent string
	// Logger receives debug logs (default: slog.Default()).
	Logger *slog.Logger
}
