//go:build !linux

package process

import (
	"context"
	"fmt"
	"runtime"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Runner is the process backend. Outside Linux none can be made: [New] always fails.
type Runner struct{}

var _ sandbox.Runner = (*Runner)(nil)

// unsupported is the error New returns here: it matches sandbox.ErrUnavailable and
// ErrUnsupportedOS, and names the wasm backend, which works on every system.
func unsupported() error {
	return fmt.Errorf("%w: process backend: %w (bubblewrap namespaces, seccomp and cgroups), not %s/%s; use the wasm backend (--sandbox wasm or auto)",
		sandbox.ErrUnavailable, ErrUnsupportedOS, runtime.GOOS, runtime.GOARCH)
}

// New always fails outside Linux, with an error matching sandbox.ErrUnavailable and
// ErrUnsupportedOS: there is no isolation here to run user code in.
func New(opts Options) (*Runner, error) { return nil, unsupported() }

// Name implements sandbox.Runner.
func (r *Runner) Name() string { return "process" }

// Limiting implements the Linux Runner's method; outside Linux nothing is bounded because
// nothing runs.
func (r *Runner) Limiting() string { return "unavailable on " + runtime.GOOS }

// Run implements sandbox.Runner. It never runs the job: it fails like New.
func (r *Runner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	return nil, unsupported()
}
