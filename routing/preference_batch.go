package routing

import (
	"context"
	"fmt"

	"github.com/switchyard-ai/switchyard/trainer"
)

// routerBatcher is what TrainerModels also does: answer, for a page of preferences, what
// many router models and training jobs say in one store read each, where the routerMemo
// would otherwise read one model and one job per preference that follows its own.
type routerBatcher interface {
	// checkModels is CheckModel of each of ids at once: per id nil (it can rank) or an
	// error matching ErrNotFound.
	checkModels(ctx context.Context, owner string, ids []string) (map[string]error, error)
	// jobModels is JobModel of each of jobIDs at once, a job whose record is gone looked
	// up in byJob's index of the owner's models.
	jobModels(ctx context.Context, owner string, jobIDs []string, byJob func() (map[string]string, error)) (map[string]memoJobModel, error)
}

func (t trainerModels) checkModels(ctx context.Context, owner string, ids []string) (map[string]error, error) {
	states, err := t.svc.ModelStates(ctx, owner, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]error, len(ids))
	for _, id := range ids {
		switch st, ok := states[id]; {
		case !ok:
			out[id] = fmt.Errorf("%w: router model %s", ErrNotFound, id)
		case st != trainer.ModelActive:
			out[id] = fmt.Errorf("%w: router model %s is %s", ErrNotFound, id, st)
		default:
			out[id] = nil
		}
	}
	return out, nil
}

func (t trainerModels) jobModels(ctx context.Context, owner string, jobIDs []string, byJob func() (map[string]string, error)) (map[string]memoJobModel, error) {
	statuses, err := t.svc.JobStatuses(ctx, owner, jobIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]memoJobModel, len(jobIDs))
	for _, id := range jobIDs {
		st, ok := statuses[id]
		switch {
		case ok && st.Status == trainer.StateCompleted:
			out[id] = memoJobModel{id: st.ModelID}
		case ok:
			out[id] = memoJobModel{} // still training, or failed
		default:
			// Gone: a job deleted after it completed still names the router it trained.
			index, err := byJob()
			if err != nil {
				out[id] = memoJobModel{err: err}
			} else if m := index[id]; m != "" {
				out[id] = memoJobModel{id: m}
			} else {
				out[id] = memoJobModel{err: fmt.Errorf("%w: training job %s", ErrNotFound, id)}
			}
		}
	}
	return out, nil
}

// prefill answers, for the preferences of one listing of owner's, what their training
// jobs and router models say, each read in one go when s's custom models can
// (routerBatcher): the preferences' router status is then told from m without another
// read. A failure is left for the per-preference reads to meet and log.
func (m *routerMemo) prefill(ctx context.Context, s *Selector, owner string, prefs []Preference) {
	b, ok := s.custom.(routerBatcher)
	if !ok || len(prefs) == 0 {
		return
	}
	ro := routerOwner(owner)
	if _, ok := s.custom.(TrainingJobModels); ok {
		var jobs []string
		seen := map[string]bool{}
		for i := range prefs {
			if j := prefs[i].RouterTrainingJobID; prefs[i].RouterModelID == "" && j != "" && !seen[j] {
				seen[j] = true
				jobs = append(jobs, j)
			}
		}
		if len(jobs) > 0 {
			ix, _ := s.custom.(jobModelIndexer)
			byJob := func() (map[string]string, error) {
				if ix == nil {
					return nil, fmt.Errorf("routing: no index of router models by training job")
				}
				if !m.byJobRead {
					m.byJob, m.byJobErr = ix.modelsByJob(ctx, ro)
					m.byJobRead = true
				}
				return m.byJob, m.byJobErr
			}
			got, err := b.jobModels(ctx, ro, jobs, byJob)
			if err != nil {
				return
			}
			if m.jobs == nil {
				m.jobs = make(map[string]memoJobModel, len(got))
			}
			for id, a := range got {
				m.jobs[id] = a
			}
		}
	}
	var ids []string
	seen := map[string]bool{}
	for i := range prefs {
		id, _, err := s.preferenceRouterMemo(ctx, owner, &prefs[i], m)
		if err == nil && id != "" && !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	checks, err := b.checkModels(ctx, ro, ids)
	if err != nil {
		return
	}
	if m.checks == nil {
		m.checks = make(map[string]error, len(checks))
	}
	for id, e := range checks {
		m.checks[id] = e
	}
}
