package telemetry

import (
	"context"
	"errors"
	"time"

	"github.com/switchyard-ai/switchyard/sandbox"
)

// Sandbox wraps a sandbox runner so that every run is counted and timed
// (switchyard_sandbox_run_duration_seconds by backend and outcome).
func (m *Metrics) Sandbox(r sandbox.Runner) sandbox.Runner { return &timedRunner{r: r, m: m} }

type timedRunner struct {
	r sandbox.Runner
	m *Metrics
}

func (t *timedRunner) Name() string { return t.r.Name() }

func (t *timedRunner) Run(ctx context.Context, job sandbox.Job) (*sandbox.Result, error) {
	start := time.Now()
	res, err := t.r.Run(ctx, job)
	outcome := "ok"
	switch {
	case err == nil:
	case ctx.Err() != nil:
		outcome = "cancelled"
	case errors.Is(err, sandbox.ErrJob):
		outcome = "job_error"
	case errors.Is(err, sandbox.ErrUnavailable):
		outcome = "unavailable"
	default:
		outcome = "error"
	}
	t.m.sandboxRun.WithLabelValues(t.r.Name(), outcome).Observe(time.Since(start).Seconds())
	return res, err
}
