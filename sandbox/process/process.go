//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/harness"
)

// Runner is the process backend. It is safe for concurrent use.
type Runner struct {
	bwrap, python string
	pythonPrefix  string // mounted read-only when outside /usr
	workDir       string
	cacheDir      string
	maxVenvs      int
	index         string
	pipWheel      string // pip's wheel shipped with python (ensurepip), "" if none
	seccomp       []byte // BPF program given to bubblewrap, nil when not available
	seccompNoFork []byte // the same, also refusing new processes (runs without a cgroup)
	cgroups       *cgroupSet
	limiting      string
	cred          *syscall.Credential
	log           *slog.Logger
	// venvLock is held (a token in it) while a virtualenv is built or the cache pruned:
	// a channel, so a run whose context ends stops waiting for another run's build.
	venvLock chan struct{}
}

var _ sandbox.Runner = (*Runner)(nil)

// New checks that bubblewrap and python3 are present and that bubblewrap can create the
// namespaces here (it runs a probe sandbox). Any failure matches sandbox.ErrUnavailable and
// says what is missing.
func New(opts Options) (*Runner, error) {
	r := &Runner{log: opts.Logger, index: opts.PackageIndex, workDir: opts.WorkDir, cacheDir: opts.CacheDir, maxVenvs: opts.MaxCachedVenvs,
		venvLock: make(chan struct{}, 1)}
	if r.maxVenvs == 0 {
		r.maxVenvs = DefaultMaxCachedVenvs
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.index == "" {
		r.index = "https://pypi.org/simple"
	}
	if r.workDir == "" {
		r.workDir = os.TempDir()
	}
	if r.cacheDir == "" {
		r.cacheDir = filepath.Join(os.TempDir(), fmt.Sprintf("switchyard-sandbox-venvs-%d", os.Getuid()))
	}
	var err error
	bw := opts.Bwrap
	if bw == "" {
		bw = "bwrap"
	}
	if r.bwrap, err = exec.LookPath(bw); err != nil {
		return nil, fmt.Errorf("%w: process backend: bubblewrap not found (install the Debian package \"bubblewrap\"): %v", sandbox.ErrUnavailable, err)
	}
	py := opts.Python
	if py == "" {
		py = "/usr/bin/python3"
		if _, err := os.Stat(py); err != nil {
			py = "python3"
		}
	}
	if py, err = exec.LookPath(py); err != nil {
		return nil, fmt.Errorf("%w: process backend: python3 not found (install the Debian package \"python3\"): %v", sandbox.ErrUnavailable, err)
	}
	if r.python, err = filepath.EvalSymlinks(py); err != nil {
		return nil, fmt.Errorf("%w: process backend: python3: %v", sandbox.ErrUnavailable, err)
	}
	out, err := exec.Command(r.python, "-I", "-c", "import sys, sysconfig; print(sys.base_prefix); print(sysconfig.get_path('stdlib'))").Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 {
		return nil, fmt.Errorf("%w: process backend: %s does not run: %v", sandbox.ErrUnavailable, r.python, err)
	}
	if prefix := lines[0]; prefix != "/usr" && !strings.HasPrefix(prefix, "/usr/") {
		r.pythonPrefix = prefix
	}
	r.pipWheel = findPipWheel(lines[1])
	r.seccomp, r.seccompNoFork = seccompFilter(false), seccompFilter(true)
	switch opts.Cgroups {
	case "", CgroupsAuto:
		set, err := detectCgroups(opts.CgroupParent)
		switch {
		case err == nil && set.version == 2:
			r.cgroups, r.limiting = set, LimitCgroupV2
		case err == nil:
			r.cgroups, r.limiting = set, LimitCgroupV1
		case opts.CgroupParent != "":
			return nil, fmt.Errorf("%w: process backend: cgroup parent %s: %v", sandbox.ErrUnavailable, opts.CgroupParent, err)
		default:
			r.log.Info("sandbox: no usable cgroup for whole-run limits", "reason", err.Error())
		}
	case CgroupsOff:
	default:
		return nil, fmt.Errorf("%w: process backend: cgroups must be %q or %q, not %q", sandbox.ErrInvalid, CgroupsAuto, CgroupsOff, opts.Cgroups)
	}
	if r.cgroups == nil {
		r.limiting = LimitOneProcess
		if r.seccompNoFork == nil {
			r.limiting = "per process only (no cgroup, and no system call filter on " + runtime.GOARCH + ")"
		}
	}
	r.log.Info("sandbox: process backend", "run_limits", r.limiting)
	if os.Geteuid() == 0 {
		uid, gid := opts.HostUID, opts.HostGID
		if uid == 0 {
			uid = 65534
		}
		if gid == 0 {
			gid = 65534
		}
		r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.probe(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Name implements sandbox.Runner.
func (r *Runner) Name() string { return "process" }

// Limiting says how a run's memory and processes are bounded as a whole: LimitCgroupV2,
// LimitCgroupV1 or LimitOneProcess (or, on architectures without the system call filter and
// without a cgroup, per process only).
func (r *Runner) Limiting() string { return r.limiting }

// probe runs an empty sandbox with the run's namespace flags and a workspace mount.
func (r *Runner) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp(r.workDir, "switchyard-sandbox-probe-*")
	if err != nil {
		return fmt.Errorf("%w: process backend: work dir: %v", sandbox.ErrUnavailable, err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("%w: process backend: work dir: %v", sandbox.ErrUnavailable, err)
	}
	args := append(r.isolationArgs(sandbox.Limits{MaxFileBytes: 1 << 20}),
		"--ro-bind", dir, harness.GuestJobDir, "--remount-ro", "/", r.python, "-I", "-c", "pass")
	cmd := exec.CommandContext(ctx, r.bwrap, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	closeFilter, err := r.attachSeccomp(cmd, r.seccomp)
	if err != nil {
		return err
	}
	defer closeFilter()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: process backend: bubblewrap cannot create the sandbox here (%v; the work dir %s must be reachable by the sandbox's host uid): %s",
			sandbox.ErrUnavailable, err, r.workDir, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// isolationArgs are the bubblewrap flags every sandbox gets: namespaces, identity, system
// mounts, /proc, /dev and a size-capped /tmp.
func (r *Runner) isolationArgs(l sandbox.Limits) []string {
	args := []string{
		"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup",
		"--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--uid", "65534", "--gid", "65534", "--hostname", "sandbox", "--clearenv",
		"--ro-bind", "/usr", "/usr",
	}
	for _, dir := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(dir)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(dir); err == nil {
				args = append(args, "--symlink", target, dir)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", dir, dir)
		}
	}
	if r.pythonPrefix != "" {
		args = append(args, "--ro-bind", r.pythonPrefix, r.pythonPrefix)
	}
	if r.seccomp != nil {
		args = append(args, "--seccomp", "3") // see attachSeccomp
	}
	return append(args,
		"--proc", "/proc", "--dev", "/dev",
		"--size", strconv.FormatInt(l.MaxFileBytes, 10), "--tmpfs", "/tmp",
		"--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin",
		"--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--setenv", "LANG", "C.UTF-8",
	)
}

// Run implements sandbox.Runner.
func (r *Runner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	start := time.Now()
	if err := job.Validate(); err != nil {
		return nil, err
	}
	limits := job.Limits.WithDefaults()
	deps, err := sandbox.Dependencies(job.Files["agent.py"])
	if err != nil {
		return nil, err
	}
	python, venv := r.python, ""
	if len(deps) > 0 {
		if venv, err = r.venv(ctx, deps); err != nil {
			return &sandbox.Result{Duration: time.Since(start)}, err
		}
		python = "/venv/bin/python3"
	}

	var proxy *harness.GatewayProxy
	if job.Gateway.BaseURL != "" {
		if proxy, err = harness.NewGatewayProxy(job.Gateway, nil, r.log); err != nil {
			return nil, err
		}
	}
	// One group for the run: its two stages run one after the other within it.
	var group *runGroup
	if r.cgroups != nil {
		if group, err = r.cgroups.newRunGroup(limits.MemoryBytes, limits.MaxProcesses); err != nil {
			return nil, fmt.Errorf("%w: process backend: %v", sandbox.ErrUnavailable, err)
		}
		defer group.remove()
	}
	res, err := harness.RunStages(ctx, job, func(ctx context.Context, spec harness.StageSpec) (*sandbox.Result, error) {
		return r.runStage(ctx, job, limits, spec, python, venv, proxy, group)
	})
	if res != nil {
		res.Duration = time.Since(start)
	}
	return res, err
}

// runStage runs one stage of the job in a sandbox of its own. Only the agent stage reaches
// the gateway.
func (r *Runner) runStage(ctx context.Context, job sandbox.Job, limits sandbox.Limits, spec harness.StageSpec,
	python, venv string, proxy *harness.GatewayProxy, group *runGroup) (*sandbox.Result, error) {
	setup := harness.Setup{Mode: harness.ModeProcess, Stage: spec.Stage, Predicted: spec.Predicted, Nonce: spec.Nonce}
	if spec.Stage != harness.StageAgent {
		proxy = nil
	}
	if proxy != nil {
		setup.Gateway = &harness.GatewayInput{Socket: "/gateway/gateway.sock", Path: proxy.BasePath()}
	}
	if r.cred != nil {
		setup.Owner = &harness.Owner{UID: int(r.cred.Uid), GID: int(r.cred.Gid)}
	}
	ws, err := harness.Prepare(r.workDir, job, setup)
	if err != nil {
		return nil, err
	}
	defer ws.Remove()

	args := r.isolationArgs(limits)
	args = append(args,
		"--ro-bind", ws.JobDir, harness.GuestJobDir,
		"--ro-bind", ws.SandboxDir, harness.GuestSandboxDir,
		"--chdir", harness.GuestJobDir,
	)
	if venv != "" {
		args = append(args, "--ro-bind", venv, "/venv")
	}
	if proxy != nil {
		gwDir := filepath.Join(ws.Root, "gateway")
		stop, err := r.serveGateway(ws, gwDir, proxy)
		if err != nil {
			return nil, err
		}
		defer stop()
		args = append(args, "--ro-bind", gwDir, "/gateway")
	}
	// The root is bubblewrap's tmpfs: make it read-only so only /tmp is writable.
	args = append(args, "--remount-ro", "/", python, "-I", "-B", "-u", harness.GuestScript)
	return r.execute(ctx, args, limits, spec, group)
}

// attachSeccomp passes the system call filter to bubblewrap as file descriptor 3 (read by
// --seccomp 3). The returned function closes the parent's copy.
func (r *Runner) attachSeccomp(cmd *exec.Cmd, filter []byte) (func(), error) {
	if filter == nil {
		return func() {}, nil
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: process backend: seccomp pipe: %v", sandbox.ErrUnavailable, err)
	}
	_, err = wr.Write(filter) // a few hundred bytes: fits the pipe buffer
	wr.Close()
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("%w: process backend: seccomp pipe: %v", sandbox.ErrUnavailable, err)
	}
	cmd.ExtraFiles = []*os.File{rd}
	return func() { rd.Close() }, nil
}

// serveGateway listens on gwDir/gateway.sock and proxies to the gateway until stop is called.
func (r *Runner) serveGateway(ws *harness.Workspace, gwDir string, proxy *harness.GatewayProxy) (stop func(), err error) {
	if err := os.Mkdir(gwDir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: gateway socket: %v", sandbox.ErrUnavailable, err)
	}
	sock := filepath.Join(gwDir, "gateway.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, fmt.Errorf("%w: gateway socket: %v", sandbox.ErrUnavailable, err)
	}
	if err := ws.Own(gwDir); err != nil { // the socket must be writable by the sandbox's user
		ln.Close()
		return nil, fmt.Errorf("%w: gateway socket: %v", sandbox.ErrUnavailable, err)
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(r.log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln)
	return func() { srv.Close() }, nil
}

// execute runs bubblewrap with args under the stage's deadline and the job's output cap, in
// the run's cgroup if there is one.
func (r *Runner) execute(ctx context.Context, args []string, limits sandbox.Limits, spec harness.StageSpec, group *runGroup) (*sandbox.Result, error) {
	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()

	cmd := exec.Command(r.bwrap, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: r.cred}
	cmd.WaitDelay = 2 * time.Second
	// Killing bubblewrap kills the sandbox: its first process has PR_SET_PDEATHSIG
	// (--die-with-parent), and the kernel kills every process of a PID namespace whose first
	// process dies. os.Process.Kill is safe after the process was reaped.
	var killOnce sync.Once
	kill := func() {
		killOnce.Do(func() {
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
		})
	}
	collector := harness.NewCollector(limits.MaxOutputBytes, kill, nil)
	cmd.Stdout, cmd.Stderr = collector.Stdout(), collector.Stderr()

	filter := r.seccomp
	if r.cgroups == nil {
		filter = r.seccompNoFork // no cgroup: one process per run
	}
	closeFilter, err := r.attachSeccomp(cmd, filter)
	if err != nil {
		return nil, err
	}
	defer closeFilter()

	// Pdeathsig is tied to the thread that started the child: keep it alive until Wait. The
	// thread may also have been moved into the run's cgroup to start the child there; if it
	// cannot be moved back it stays locked, so that it dies with this goroutine.
	runtime.LockOSThread()
	threadClean := true
	defer func() {
		if threadClean {
			runtime.UnlockOSThread()
		}
	}()
	if group != nil {
		if err := group.prepare(cmd.SysProcAttr); err != nil {
			threadClean = group.started()
			return nil, fmt.Errorf("%w: process backend: %v", sandbox.ErrUnavailable, err)
		}
	}
	startErr := cmd.Start()
	if group != nil {
		threadClean = group.started()
	}
	if startErr != nil {
		return nil, fmt.Errorf("%w: process backend: start bubblewrap: %v", sandbox.ErrUnavailable, startErr)
	}
	done := make(chan struct{})
	var deadlineHit atomic.Bool
	watchdog := make(chan struct{})
	go func() {
		defer close(watchdog)
		select {
		case <-runCtx.Done():
			deadlineHit.Store(ctx.Err() == nil)
			kill()
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	<-watchdog
	cancel()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: run cancelled: %w", err)
	}

	out := harness.Outcome{Limits: limits, DeadlineExceeded: deadlineHit.Load(), MemoryExceeded: group != nil && group.oomKilled()}
	var exitErr *exec.ExitError
	if errors.As(waitErr, &exitErr) {
		code := exitErr.ExitCode()
		switch {
		case code == 128+int(syscall.SIGXCPU):
			out.CPUExceeded = true
			out.Exit = "killed by SIGXCPU"
		case code > 128:
			out.Exit = fmt.Sprintf("killed by signal %d", code-128)
		case code >= 0:
			out.Exit = fmt.Sprintf("exit status %d", code)
		default:
			out.Exit = exitErr.String()
		}
	}
	r.log.Debug("sandbox run finished", "backend", "process", "exit", out.Exit, "deadline", out.DeadlineExceeded)
	return collector.Finish(spec.Expect, out)
}
