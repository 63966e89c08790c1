package trainer

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// JobStat is one job as telemetry sees it.
type JobStat = jobqueue.JobStat

// JobStats lists every training job in the store with its state (every owner's): what
// metrics count by state, and the run time of the finished ones. It reads the whole
// collection; callers cache it (telemetry scrapes do).
func (s *Service) JobStats(ctx context.Context) ([]JobStat, error) {
	out, err := jobqueue.Stats(ctx, s.store, store.TrainingJobs, func(j *jobRecord) JobStat {
		st := JobStat{ID: j.ID, State: string(j.State)}
		if (j.State == StateCompleted || j.State == StateFailed) && !j.StartedAt.IsZero() && j.CompletedAt.After(j.StartedAt) {
			st.Seconds, st.Finished = j.CompletedAt.Sub(j.StartedAt).Seconds(), j.CompletedAt
		}
		return st
	})
	if err != nil {
		return nil, fmt.Errorf("trainer: job stats: %w", err)
	}
	return out, nil
}
