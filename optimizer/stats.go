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
	out, err := jobqueue.Stats(ctx, s.store, store.OptimizationJobs, func(j *job) JobStat {
		st := JobStat{ID: j.ID, State: string(j.Status)}
		if j.Status.Terminal() && j.StartedAt != nil && j.FinishedAt != nil && j.FinishedAt.After(*j.StartedAt) {
			st.Seconds, st.Finished = j.FinishedAt.Sub(*j.StartedAt).Seconds(), *j.FinishedAt
		}
		return st
	})
	if err != nil {
		return nil, fmt.Errorf("optimizer: job stats: %w", err)
	}
	return out, nil
}
