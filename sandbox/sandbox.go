// Package sandbox runs untrusted agent bundles (agent.py + eval.py, see the spec's
// Optimization bundle) in isolation: the code can reach nothing but Switchyard's LLM gateway,
// cannot see the host, and cannot outlive its limits.
//
// A [Runner] is one backend (a bubblewrap-isolated python3 process, or CPython compiled to
// WASI under wazero). Every backend runs the same harness script, and every backend passes
// the conformance suite in sandbox/sandboxtest.
//
// A run is two sandboxed processes of the backend (sandbox/harness.RunStages): the agent's,
// which calls run_batch with the rows' inputs only (the answers never enter it), and the
// scorer's, a fresh sandbox without agent.py or network that calls eval.py's score on the
// answers and the agent's predictions. Scores come from the scorer only, so the agent can
// neither read the answers nor forge its scores.
package sandbox

import (
	"context"
	"errors"
	"time"
)

// Row is one dataset row given to the agent.
type Row struct {
	Input  string `json:"input"`
	Answer string `json:"answer"`
}

// Limits bound one run.
type Limits struct {
	// Timeout is the wall-clock deadline of the whole run; the process tree is killed after it.
	Timeout time.Duration
	// CPUTime caps CPU seconds (0: Timeout).
	CPUTime time.Duration
	// MemoryBytes caps the address space / linear memory (0: backend default).
	MemoryBytes int64
	// MaxProcesses caps processes/threads inside the sandbox (process backend; 0: default).
	MaxProcesses int
	// MaxFileBytes caps any file the code writes (0: default).
	MaxFileBytes int64
	// MaxOutputBytes caps the bytes read from the harness's stdout/stderr (0: default).
	MaxOutputBytes int64
}

// Gateway is the only network destination the agent may reach: Switchyard's
// OpenAI-compatible endpoint. The agent sees OPENAI_BASE_URL, OPENAI_API_KEY and
// SWITCHYARD_MODEL; the backend arranges that OPENAI_BASE_URL leads to BaseURL.
type Gateway struct {
	// BaseURL is the host-side URL of the OpenAI-compatible API, e.g. "http://127.0.0.1:8080/v1".
	BaseURL string
	// APIKey is a per-job key limited to the target model(s) and a budget. Never a provider key.
	APIKey string
	// Model is the target model ("provider/model"), given to the agent as SWITCHYARD_MODEL.
	Model string
}

// Job is one run of a bundle over some rows.
type Job struct {
	// Files holds the bundle's files by relative name (agent.py, eval.py, ...).
	Files map[string][]byte
	// Rows' inputs are passed to run_batch; their answers are passed to score, in a separate
	// sandbox the agent's code never runs in.
	Rows []Row
	// Limits bound the run.
	Limits Limits
	// Gateway is what the agent may call; zero value means no network at all.
	Gateway Gateway
}

// Usage is the agent's own report of its LLM use (run_batch's usage dict).
type Usage struct {
	Tokens int64   `json:"tokens"`
	Cost   float64 `json:"cost"`
}

// Result is the validated outcome of a run. Predictions and Scores have one entry per row.
type Result struct {
	Predictions []string
	Scores      []float64 // each in [0, 1]
	// Feedback is the scorer's text per row when eval.py's score returned (score, feedback)
	// pairs ("" for rows without); nil when it returned plain numbers.
	Feedback []string
	Usage    Usage
	Stdout   string // tail
	Stderr   string // tail
	Duration time.Duration
}

// Mean returns the mean score, 0 for no rows.
func (r *Result) Mean() float64 {
	if len(r.Scores) == 0 {
		return 0
	}
	var s float64
	for _, v := range r.Scores {
		s += v
	}
	return s / float64(len(r.Scores))
}

// Runner is a sandbox backend.
type Runner interface {
	// Run executes the job. A failure of the user's code (exception, bad return values,
	// limits exceeded, escape attempt) is an error matching ErrJob carrying a message that
	// says what happened (a *JobError); a failure of the sandbox itself matches
	// ErrUnavailable, and a malformed job ErrInvalid. With a job error the Result is still
	// returned (without predictions) so callers can show the output tails. Cancelling ctx
	// stops the run and returns an error wrapping ctx.Err().
	Run(ctx context.Context, job Job) (*Result, error)
	// Name names the backend ("process", "wasm").
	Name() string
}

var (
	// ErrJob means the user's code failed or broke a limit; the message says how.
	ErrJob = errors.New("sandbox: job failed")
	// ErrUnavailable means the backend cannot run here (no namespaces, interpreter missing).
	// Backends never fall back to running without isolation.
	ErrUnavailable = errors.New("sandbox: backend unavailable")
	// ErrInvalid means the job itself is malformed (missing agent.py, no rows, ...).
	ErrInvalid = errors.New("sandbox: invalid job")
)
