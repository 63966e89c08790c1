// Package auto picks a sandbox backend: the process backend (bubblewrap) where it works,
// else the wasm backend. Both isolate the code; when neither can run, New fails with
// sandbox.ErrUnavailable carrying both reasons — there is no fallback to running without a
// sandbox.
package auto

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
	"github.com/switchyard-ai/switchyard/sandbox/wasm"
)

// Options configure both candidate backends.
type Options struct {
	// Process configures the process backend (tried first).
	Process process.Options
	// Wasm configures the wasm backend (tried when the process backend is unavailable).
	Wasm wasm.Options
	// Logger receives a line naming the chosen backend (default: slog.Default()).
	Logger *slog.Logger
}

// New returns the process backend if it can run here, else the wasm backend. The wasm
// Runner holds compiled code; callers that are done with it may type-assert
// *wasm.Runner and Close it.
func New(opts Options) (sandbox.Runner, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	p, perr := process.New(opts.Process)
	if perr == nil {
		log.Info("sandbox backend", "backend", p.Name())
		return p, nil
	}
	w, werr := wasm.New(opts.Wasm)
	if werr == nil {
		log.Info("sandbox backend", "backend", w.Name(), "process_unavailable", perr.Error())
		return w, nil
	}
	return nil, fmt.Errorf("%w: no sandbox backend can run here: %w", sandbox.ErrUnavailable, errors.Join(perr, werr))
}
