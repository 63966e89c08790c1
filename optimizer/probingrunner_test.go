package optimizer_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/optimizer"
	"github.com/switchyard-ai/switchyard/sandbox"
)

// fakeSandboxRunner is a test fake of a sandbox backend that answers every job.
type fakeSandboxRunner struct{ runs int }

func (f *fakeSandboxRunner) Name() string { return "fake" }
func (f *fakeSandboxRunner) Run(context.Context, sandbox.Job) (*sandbox.Result, error) {
	f.runs++
	return &sandbox.Result{}, nil
}

// TestProbingRunnerFindsABackendInstalledLater: a sandbox missing at start stayed missing
// until a restart (every job failed, even after the user installed bubblewrap); a job now
// looks again (at most once per Every) and once the backend opens, jobs run in it.
func TestProbingRunnerFindsABackendInstalledLater(t *testing.T) {
	installed := false
	opens := 0
	fake := &fakeSandboxRunner{}
	open := func() (sandbox.Runner, error) {
		opens++
		if !installed {
			return nil, errors.New("process backend: bubblewrap not found (install the Debian package \"bubblewrap\")")
		}
		return fake, nil
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := optimizer.NewProbingRunner(errors.New("at start: bubblewrap not found"), open, time.Nanosecond, quiet)
	_, err := p.Run(context.Background(), sandbox.Job{})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap not found") || !strings.Contains(err.Error(), "again at this job") || p.Name() != "unavailable" {
		t.Fatalf("before the install: %v (%s)", err, p.Name())
	}
	installed = true
	time.Sleep(time.Millisecond) // past Every
	if _, err := p.Run(context.Background(), sandbox.Job{}); err != nil || fake.runs != 1 || p.Name() != "fake" {
		t.Fatalf("after the install: %v, %d runs (%s)", err, fake.runs, p.Name())
	}
	if _, err := p.Run(context.Background(), sandbox.Job{}); err != nil || fake.runs != 2 || opens != 2 {
		t.Fatalf("the opened backend is kept: %v, %d runs, %d opens", err, fake.runs, opens)
	}

	// Within Every, a job does not look again.
	opens = 0
	p = optimizer.NewProbingRunner(errors.New("at start: bubblewrap not found"), open, time.Hour, quiet)
	if _, err := p.Run(context.Background(), sandbox.Job{}); !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "at start") || opens != 0 {
		t.Fatalf("within Every: %v, %d opens", err, opens)
	} else if strings.Contains(err.Error(), "again at this job") {
		// The error said this job had looked again when it had not (within Every).
		t.Fatalf("within Every the error claims a look: %v", err)
	}
}
