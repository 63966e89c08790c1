package batch

import (
	"context"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/jobqueue"
	"github.com/switchyard-ai/switchyard/store"
)

// JobStats lists every batch in the store (every owner's) as a job for the metrics
// (telemetry.Metrics.Jobs): a batch validating is "queued", in progress "running", the other
// states as OpenAI names them; an ended batch with how long it ran.
func (s *Service) JobStats(ctx context.Context) ([]jobqueue.JobStat, error) {
	out, err := jobqueue.Stats(ctx, s.st, store.Batches, (*record).stat)
	if err != nil {
		return nil, fmt.Errorf("batch: job stats: %w", err)
	}
	return out, nil
}

// stat is the batch as JobStats reports it.
func (r *record) stat() jobqueue.JobStat {
	st := jobqueue.JobStat{ID: r.ID, State: string(r.Status)}
	switch r.Status {
	case StatusValidating:
		st.State = "queued"
	case StatusInProgress:
		st.State = "running"
	}
	var end time.Time
	for _, t := range []time.Time{r.CompletedAt, r.FailedAt, r.ExpiredAt, r.CancelledAt} {
		if !t.IsZero() {
			end = t
		}
	}
	if r.Status.terminal() && !r.InProgressAt.IsZero() && end.After(r.InProgressAt) {
		st.Seconds, st.Finished = end.Sub(r.InProgressAt).Seconds(), end
	}
	return st
}
