package optimizer

import (
	"context"
	"errors"

	"github.com/switchyard-ai/switchyard/store"
)

// A run cut short (its worker died, the server restarted or shut down) may leave gateway
// keys valid: the worker that starts the job over, or ends it, reclaims them through the
// minter (KeyReclaimer) so they stop working at once, and counts what was spent with them.

// reclaimKeys ends the keys runs cut short left open — every key in j's record when a run
// starts, since it has minted none yet — counts their spend into j.CutRuns and saves j.
func (s *Service) reclaimKeys(ctx context.Context, j *job) {
	if len(j.OpenKeys) == 0 {
		return
	}
	keys := j.OpenKeys
	j.OpenKeys = nil
	if j.CutRuns == nil {
		j.CutRuns = &CutRunsUsage{}
	}
	for _, k := range keys {
		j.CutRuns.add(s.reclaimKey(ctx, j.ID, k), Usage{})
	}
	s.save(j)
}

// reclaimKey revokes k through the minter and returns the spend to count for it: what the
// gateway metered, or what the run recorded when that is more or the key cannot be read.
func (s *Service) reclaimKey(ctx context.Context, jobID string, k openKey) Usage {
	var recorded Usage
	if k.Recorded != nil {
		recorded = *k.Recorded
	}
	s.mu.Lock()
	rc, ok := s.minter.(KeyReclaimer)
	s.mu.Unlock()
	if !ok {
		return recorded
	}
	u, err := rc.ReclaimKey(ctx, k.Ref)
	switch {
	case errors.Is(err, ErrKeyGone):
		s.log.Debug("optimizer: a cut run's gateway key was already gone", "job", jobID, "model", k.Model)
		return recorded
	case err != nil:
		s.log.Warn("optimizer: reclaiming a cut run's gateway key", "job", jobID, "model", k.Model, "err", err)
		return recorded
	}
	if u.Tokens < recorded.Tokens {
		return recorded
	}
	return u
}

// reclaimEnded reclaims the keys of a job that ended without running again (cancelled while
// re-queued after a run cut short) and records their spend in its CutRuns.
func (s *Service) reclaimEnded(ctx context.Context, j *job) {
	keys := j.OpenKeys
	usage := make([]Usage, len(keys))
	for i, k := range keys {
		usage[i] = s.reclaimKey(ctx, j.ID, k)
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := store.GetJSON[job](ctx, tx, store.OptimizationJobs, j.ID)
		if err != nil {
			return err
		}
		if len(cur.OpenKeys) == 0 {
			return nil
		}
		if cur.CutRuns == nil {
			cur.CutRuns = &CutRunsUsage{}
		}
		for _, u := range usage {
			cur.CutRuns.add(u, Usage{})
		}
		cur.OpenKeys = nil
		*j = cur
		return store.PutJSON(ctx, tx, store.OptimizationJobs, cur.ID, cur)
	})
	if err != nil {
		s.log.Warn("optimizer: record a cancelled job's reclaimed keys", "job", j.ID, "err", err)
	}
}

// reclaimForEnd reclaims the keys of j's dead run before the job is ended with its partial
// results: each key's spend, when more than its model's result recorded, replaces it there.
// It returns the function that applies that to the record being ended.
func (s *Service) reclaimForEnd(ctx context.Context, j *job) func(*job) {
	if len(j.OpenKeys) == 0 {
		return func(*job) {}
	}
	final := map[string]Usage{} // model -> its newest key's spend
	for _, k := range j.OpenKeys {
		final[k.Model] = s.reclaimKey(ctx, j.ID, k)
	}
	return func(cur *job) {
		cur.OpenKeys = nil
		for i := range cur.Results {
			r := &cur.Results[i]
			if u, ok := final[r.Model]; ok && u.Tokens > r.Usage.Task.Tokens {
				r.Usage.Task = u
				r.Tokens = r.Usage.Task.Tokens + r.Usage.Proposer.Tokens
				r.CostUSD = r.Usage.Task.CostUSD + r.Usage.Proposer.CostUSD
			}
		}
	}
}

// keyOpened records in j that a run minted key for model.
func (j *job) keyOpened(key *JobKey, model string) {
	if key.Ref != "" {
		j.OpenKeys = append(j.OpenKeys, openKey{Ref: key.Ref, Model: model})
	}
}

// keyClosed records in j that the run revoked key.
func (j *job) keyClosed(key *JobKey) {
	for i, k := range j.OpenKeys {
		if key.Ref != "" && k.Ref == key.Ref {
			j.OpenKeys = append(j.OpenKeys[:i:i], j.OpenKeys[i+1:]...)
			return
		}
	}
}
