// Package harness holds what every sandbox backend shares: the Python harness script that
// runs inside the sandbox, the workspace it reads, the framing of its output, the validation
// of its result, and the host-side proxy to the LLM gateway.
//
// A run is two sandboxed processes (see [RunStages]). The agent stage imports agent.py from
// /job and calls run_batch(inputs, api_key); its input holds the rows' inputs and never their
// answers. The score stage runs in a fresh sandbox without agent.py: it imports eval.py and
// calls score(expected, predicted) on the agent stage's predictions. Each writes one result
// frame on stdout. The host treats frames as untrusted data: [Collector] parses the output
// streams and [Decode] validates the result. Scores are taken only from the score stage and
// only from a frame carrying that run's random nonce, which the agent never sees, so nothing
// the agent prints, returns or patches in its own interpreter can set a score.
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

// Stage is one sandboxed process of a run.
type Stage string

// The stages of a run, in order.
const (
	// StageAgent runs run_batch over the inputs and returns predictions and usage.
	StageAgent Stage = "agent"
	// StageScore runs score over the expected and predicted values and returns scores.
	StageScore Stage = "score"
)

// Input is /sandbox/input.json. The API key travels here rather than on a command line,
// where other host users could read it. The agent stage's input has Inputs (never the
// answers), the score stage's Expected, Predicted and Nonce (and no API key).
type Input struct {
	Mode      string        `json:"mode"`
	Stage     Stage         `json:"stage"`
	Inputs    []string      `json:"inputs,omitempty"`
	Expected  []string      `json:"expected,omitempty"`
	Predicted []string      `json:"predicted,omitempty"`
	Nonce     string        `json:"nonce,omitempty"`
	Limits    LimitsInput   `json:"limits"`
	Gateway   *GatewayInput `json:"gateway,omitempty"`
	APIKey    string        `json:"api_key,omitempty"`
	Model     string        `json:"model,omitempty"`
}

// Setup says how to prepare a workspace.
type Setup struct {
	// Mode is ModeProcess or ModeWasm.
	Mode string
	// Stage is StageAgent (the default) or StageScore.
	Stage Stage
	// Predicted are the agent stage's predictions, one per row (score stage).
	Predicted []string
	// Nonce is the score stage's per-run secret its result frame must carry.
	Nonce string
	// Gateway, if not nil, tells the harness how to reach the gateway (agent stage only).
	Gateway *GatewayInput
	// Owner, if not nil, is the host uid and gid the sandbox runs as; the workspace is
	// chowned to it. Either way it is private: directories 0700, files 0600.
	Owner *Owner
}

// Owner is a host uid and gid.
type Owner struct{ UID, GID int }

// Workspace is a job's host-side directory tree: JobDir holds the bundle, SandboxDir the
// harness and its input. Both are meant to be mounted read-only. Backends may add
// directories under Root (and should chown them with Own).
type Workspace struct {
	Root       string
	JobDir     string
	SandboxDir string
	owner      *Owner
}

// Prepare validates the job and writes the workspace of one stage under a new directory in
// parent ("" means os.TempDir()): private to the setup's owner (the sandbox's host user). The
// agent stage's workspace holds the bundle and the rows' inputs, never their answers; the
// score stage's holds the bundle without agent.py, the answers and the predictions. The
// caller removes Root when done.
func Prepare(parent string, job sandbox.Job, setup Setup) (*Workspace, error) {
	if err := job.Validate(); err != nil {
		return nil, err
	}
	limits := job.Limits.WithDefaults()
	root, err := os.MkdirTemp(parent, "switchyard-sandbox-*")
	if err != nil {
		return nil, fmt.Errorf("%w: workspace: %v", sandbox.ErrUnavailable, err)
	}
	ws := &Workspace{Root: root, JobDir: filepath.Join(root, "job"), SandboxDir: filepath.Join(root, "sandbox"), owner: setup.Owner}
	fail := func(err error) (*Workspace, error) {
		os.RemoveAll(root)
		return nil, fmt.Errorf("%w: workspace: %v", sandbox.ErrUnavailable, err)
	}
	for _, dir := range []string{ws.JobDir, ws.SandboxDir} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return fail(err)
		}
	}
	stage := setup.Stage
	if stage == "" {
		stage = StageAgent
	}
	if stage != StageAgent && stage != StageScore {
		return nil, fmt.Errorf("%w: stage %q", sandbox.ErrInvalid, stage)
	}
	if stage == StageScore && len(setup.Predicted) != len(job.Rows) {
		return nil, fmt.Errorf("%w: score stage: %d predictions for %d rows", sandbox.ErrInvalid, len(setup.Predicted), len(job.Rows))
	}
	for name, data := range job.Files {
		if stage == StageScore && name == "agent.py" {
			continue // the agent's code never runs where the scores are made
		}
		// Names are validated clean relative paths, so this stays inside JobDir.
		target := filepath.Join(ws.JobDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return fail(err)
		}
		if err := writeNew(target, data); err != nil {
			return fail(err)
		}
	}
	in := Input{
		Mode:  setup.Mode,
		Stage: stage,
		Limits: LimitsInput{
			CPUSeconds:  int64(math.Ceil(limits.CPUTime.Seconds())),
			MemoryBytes: limits.MemoryBytes,
			FileBytes:   limits.MaxFileBytes,
			Processes:   limits.MaxProcesses,
		},
	}
	switch stage {
	case StageAgent:
		in.APIKey, in.Model, in.Gateway = job.Gateway.APIKey, job.Gateway.Model, setup.Gateway
		in.Inputs = make([]string, len(job.Rows))
		for i, r := range job.Rows {
			in.Inputs[i] = r.Input
		}
	case StageScore:
		in.Nonce, in.Predicted = setup.Nonce, setup.Predicted
		in.Expected = make([]string, len(job.Rows))
		for i, r := range job.Rows {
			in.Expected[i] = r.Answer
		}
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
	if err := ws.Own(root); err != nil {
		return fail(err)
	}
	return ws, nil
}

// Own makes the tree at path private to the workspace's owner, whatever the umask:
// directories 0700, other files 0600, owned by the sandbox's host user if set.
func (w *Workspace) Own(path string) error {
	return filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		if w.owner != nil {
			return os.Lchown(p, w.owner.UID, w.owner.GID)
		}
		return nil
	})
}

// Remove deletes the workspace.
func (w *Workspace) Remove() error { return os.RemoveAll(w.Root) }

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
