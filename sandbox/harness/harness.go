// Package harness holds what every sandbox backend shares: the Python harness script that
// runs inside the sandbox, the workspace it reads, the framing of its output, the validation
// of its result, and the host-side proxy to the LLM gateway.
//
// The harness imports agent.py and eval.py from /job, calls run_batch(inputs, api_key) and
// score(expected, predicted), and writes one result frame on stdout. The host treats that
// frame as untrusted data: [Collector] parses the output streams and [Decode] validates the
// result.
package harness

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/switchyard-ai/switchyard/sandbox"
)

//go:embed harness.py
var script []byte

// Script returns the harness script (a copy).
func Script() []byte { return append([]byte(nil), script...) }

// Paths inside the sandbox. Backends mount the workspace's directories there.
const (
	// GuestJobDir is where the bundle's files are mounted (read-only) and the working directory.
	GuestJobDir = "/job"
	// GuestSandboxDir holds harness.py and input.json (read-only).
	GuestSandboxDir = "/sandbox"
	// GuestScript is the harness script's path inside the sandbox.
	GuestScript = GuestSandboxDir + "/harness.py"
)

// Modes tell the harness which backend it runs under.
const (
	ModeProcess = "process"
	ModeWasm    = "wasm"
)

// GatewayInput tells the harness how to reach the gateway: through a Unix socket (process
// backend) or an HTTP tunnel over stdin/stdout (wasm backend). Path is the base path that
// OPENAI_BASE_URL must end with (e.g. "/v1").
type GatewayInput struct {
	Socket     string `json:"socket,omitempty"`
	TunnelHost string `json:"tunnel_host,omitempty"`
	Path       string `json:"path"`
}

// LimitsInput are the limits the harness applies itself (process backend rlimits).
type LimitsInput struct {
	CPUSeconds  int64 `json:"cpu_seconds"`
	MemoryBytes int64 `json:"memory_bytes"`
	FileBytes   int64 `json:"file_bytes"`
	Processes   int   `json:"processes"`
}

// Input is /sandbox/input.json.
type Input struct {
	Mode    string        `json:"mode"`
	Inputs  []string      `json:"inputs"`
	Answers []string      `json:"answers"`
	Limits  LimitsInput   `json:"limits"`
	Gateway *GatewayInput `json:"gateway,omitempty"`
}

// Workspace is a job's host-side directory tree: JobDir holds the bundle, SandboxDir the
// harness and its input. Both are meant to be mounted read-only.
type Workspace struct {
	Root       string
	JobDir     string
	SandboxDir string
}

// Prepare validates the job and writes its workspace under a new directory in parent
// ("" means os.TempDir()). Directories are 0755 and files 0644 so that an unprivileged
// sandbox user can read them. The caller removes Root when done.
func Prepare(parent string, job sandbox.Job, mode string, gateway *GatewayInput) (*Workspace, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	limits := job.Limits.WithDefaults()
	root, err := os.MkdirTemp(parent, "switchyard-sandbox-*")
	if err != nil {
		return nil, fmt.Errorf("%w: workspace: %v", sandbox.ErrUnavailable, err)
	}
	ws := &Workspace{Root: root, JobDir: filepath.Join(root, "job"), SandboxDir: filepath.Join(root, "sandbox")}
	fail := func(err error) (*Workspace, error) {
		os.RemoveAll(root)
		return nil, fmt.Errorf("%w: workspace: %v", sandbox.ErrUnavailable, err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		return fail(err)
	}
	for _, dir := range []string{ws.JobDir, ws.SandboxDir} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fail(err)
		}
	}
	for name, data := range job.Files {
		// Names are validated clean relative paths, so this stays inside JobDir.
		target := filepath.Join(ws.JobDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return fail(err)
		}
		if err := writeNew(target, data); err != nil {
			return fail(err)
		}
	}
	in := Input{
		Mode:    mode,
		Inputs:  make([]string, len(job.Rows)),
		Answers: make([]string, len(job.Rows)),
		Limits: LimitsInput{
			CPUSeconds:  int64(math.Ceil(limits.CPUTime.Seconds())),
			MemoryBytes: limits.MemoryBytes,
			FileBytes:   limits.MaxFileBytes,
			Processes:   limits.MaxProcesses,
		},
		Gateway: gateway,
	}
	for i, r := range job.Rows {
		in.Inputs[i], in.Answers[i] = r.Input, r.Answer
	}
	data, err := json.Marshal(in)
	if err != nil {
		return fail(err)
	}
	if err := writeNew(filepath.Join(ws.SandboxDir, "input.json"), data); err != nil {
		return fail(err)
	}
	if err := writeNew(filepath.Join(ws.SandboxDir, "harness.py"), script); err != nil {
		return fail(err)
	}
	// Whatever the umask, the sandbox's unprivileged user must be able to read everything.
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o755)
		}
		return os.Chmod(path, 0o644)
	})
	if err != nil {
		return fail(err)
	}
	return ws, nil
}

// Remove deletes the workspace.
func (w *Workspace) Remove() error { return os.RemoveAll(w.Root) }

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
