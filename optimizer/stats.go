package optimizer

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// JobStat is one job as telemetry sees it.
type JobStat = jobqueue.JobStat

// JobStats lists every optimization job in the store with its status (every owner's):
// what metrics count by state, and the run time of the finished ones. It reads the whole
// collection; callers cache it (telemetry scrapes do).
func (s *Service) JobStats(ctx context.Context) ([]JobStat, error) {
	out, err := jobqueue.Stats(ctx, s.store, store.OptimizationJobs, (*job).stat)
	if err != nil {
		return nil, fmt.Errorf("optimizer: job stats: %w", err)
	}
	return out, nil
}

// stat is the job as JobStats reports it: its state, and its run time once it ended.
func (j *job) stat() JobStat {
	st := JobStat{ID: j.ID, State: string(j.Status)}
	if j.Status.Terminal() && j.StartedAt != nil && j.FinishedAt != nil && j.FinishedAt.After(*j.StartedAt) {
		st.Seconds, st.Finished = j.FinishedAt.Sub(*j.StartedAt).Seconds(), *j.FinishedAt
	}
	return st
}

// WithJobEnded makes the service call fn when a job it ran ends (completed, interrupted
// or failed) with its state and run time, after the job's final state is stored: once per
// job, in the process that ran it, not for jobs a restart or another worker found dead.
// Telemetry's Metrics.JobEnded is such a function. fn must not block.
func WithJobEnded(fn func(JobStat)) Option { return func(s *Service) { s.onEnd = fn } }

// ended reports j's end to the WithJobEnded function.
func (s *Service) ended(j *job) {
	if s.onEnd != nil {
		s.onEnd(j.stat())
	}
}
