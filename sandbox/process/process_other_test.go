//go:build !linux

package process_test

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/sandbox/process"
)

// Outside Linux the process backend reports itself unavailable, saying why, and never
// runs a job (a zero Runner refuses too).
func TestUnavailableOutsideLinux(t *testing.T) {
	r, err := process.New(process.Options{})
	if r != nil || !errors.Is(err, sandbox.ErrUnavailable) || !errors.Is(err, process.ErrUnsupportedOS) {
		t.Fatalf("New = %v, %v; want nil and an error matching ErrUnavailable and ErrUnsupportedOS", r, err)
	}
	if _, err := (&process.Runner{}).Run(context.Background(), sandbox.Job{}); !errors.Is(err, process.ErrUnsupportedOS) {
		t.Fatalf("Run = %v, want ErrUnsupportedOS", err)
	}
}
