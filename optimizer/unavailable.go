package optimizer

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// UnavailableRunner is the sandbox.Runner to give New when no sandbox backend works on this
// machine (for example process.New failed with sandbox.ErrUnavailable): the server still
// accepts jobs, and each one ends failed with an error_message saying why no sandbox is
// available, instead of the optimizer being missing altogether.
type UnavailableRunner struct {
	// Err is why no backend could be started.
	Err error
}

// Name implements sandbox.Runner.
func (UnavailableRunner) Name() string { return "unavailable" }

// Run implements sandbox.Runner; it always fails with an error matching
// sandbox.ErrUnavailable.
func (u UnavailableRunner) Run(context.Context, sandbox.Job) (*sandbox.Result, error) {
	return nil, fmt.Errorf("%w: %v", sandbox.ErrUnavailable, u.Err)
}
