package optimizer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// reclaimingMinter is a test KeyReclaimer: its keys are refs "ref-N" whose spend is
// scripted, and it records what was minted, revoked and reclaimed.
type reclaimingMinter struct {
	mu        sync.Mutex
	n         int
	spent     map[string]Usage // ref -> what the gateway metered for it
	revoked   []string
	reclaimed []string
}

func (m *reclaimingMinter) MintKey(_ context.Context, g KeyGrant) (*JobKey, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.n++
	ref := fmt.Sprintf("ref-%d", m.n)
	return &JobKey{Key: "job-key", Ref: ref, Revoke: func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.revoked = append(m.revoked, ref)
	}}, nil
}

func (m *reclaimingMinter) ReclaimKey(_ context.Context, ref string) (Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reclaimed = append(m.reclaimed, ref)
	u, ok := m.spent[ref]
	if !ok {
		return Usage{}, fmt.Errorf("%w: %s", ErrKeyGone, ref)
	}
	delete(m.spent, ref)
	return u, nil
}

// TestCutRunsKeysReclaimed: a job whose run was cut short (left "running" by a crash, with
// a gateway key still open) starts over; the key is reclaimed through the minter, the cut
// run's spend — the key's metered spend where it is more than the run recorded, the
// recorded figure where the key is gone, and its proposer's — is reported as cut_runs, and
// the new run's own key is revoked and leaves no trace in the record.
func TestCutRunsKeysReclaimed(t *testing.T) {
	m := &reclaimingMinter{spent: map[string]Usage{"old-1": {Tokens: 900, CostUSD: 0.9}}}
	e := newEnv(t, &fakeRunner{}, m)
	now := time.Now().UTC()
	crashed := job{ID: "opt_crashed", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task", "scripted/other"}, NIterations: 1, OverallTimeout: Duration(time.Minute),
		LLMCallTimeout: Duration(time.Minute), SandboxTimeout: Duration(time.Minute), Status: StatusRunning,
		Attempts: 1, CreatedAt: now, StartedAt: &now,
		Results: []storedRes{
			// Finished before the crash: its key was revoked, its figures are final.
			{ModelResult: ModelResult{Model: "scripted/task", Usage: ResultUsage{Task: Usage{Tokens: 100, CostUSD: 0.1}, Proposer: Usage{Tokens: 10, CostUSD: 0.01}}}},
			// In progress: its key is open and has spent more than last recorded.
			{ModelResult: ModelResult{Model: "scripted/other", Usage: ResultUsage{Task: Usage{Tokens: 500, CostUSD: 0.5}, Proposer: Usage{Tokens: 20, CostUSD: 0.02}}}},
		},
		OpenKeys: []openKey{{Ref: "old-1", Model: "scripted/other"}}}
	// A second crashed job whose open key is already gone: its recorded figure counts.
	gone := crashed
	gone.ID = "opt_gone"
	gone.OpenKeys = []openKey{{Ref: "old-gone", Model: "scripted/other"}}
	gone.Results = append([]storedRes(nil), crashed.Results...)
	for _, j := range []job{crashed, gone} {
		if err := store.PutJSON(context.Background(), e.st, store.OptimizationJobs, j.ID, j); err != nil {
			t.Fatal(err)
		}
	}
	e.start(t)
	for id, wantTask := range map[string]Usage{"opt_crashed": {Tokens: 1000, CostUSD: 1.0}, "opt_gone": {Tokens: 600, CostUSD: 0.6}} {
		if st := waitFor(t, e.svc, id); st.Status != StatusCompleted {
			t.Fatalf("%s: %+v", id, st)
		}
		res, err := e.svc.Results(context.Background(), "alice", id)
		if err != nil {
			t.Fatal(err)
		}
		c := res.CutRuns
		if c == nil || c.Runs != 1 || c.Task.Tokens != wantTask.Tokens || c.Proposer.Tokens != 30 || c.Tokens != wantTask.Tokens+30 {
			t.Errorf("%s: cut_runs = %+v, want 1 run, task %d tokens, proposer 30", id, c, wantTask.Tokens)
		}
		if len(res.Results) != 2 || !res.Results[0].Complete || !res.Results[1].Complete {
			t.Errorf("%s: the new run's results %+v", id, res.Results)
		}
		j, err := store.GetJSON[job](context.Background(), e.st, store.OptimizationJobs, id)
		if err != nil || len(j.OpenKeys) != 0 {
			t.Errorf("%s: keys left open in the record: %+v (%v)", id, j.OpenKeys, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := strings.Join(m.reclaimed, ","); got != "old-1,old-gone" && got != "old-gone,old-1" {
		t.Errorf("reclaimed %q, want the two cut runs' keys", got)
	}
	if m.n != 4 || len(m.revoked) != 4 {
		t.Errorf("minted %d keys and revoked %d, want the new runs' 4 both", m.n, len(m.revoked))
	}
}

// TestDeadRunKeysReclaimedWhenTheJobEnds: a job given up on (its worker died too often)
// ends with its partial results, its open key revoked and the key's spend in the model's
// figures.
func TestDeadRunKeysReclaimedWhenTheJobEnds(t *testing.T) {
	m := &reclaimingMinter{spent: map[string]Usage{"old-1": {Tokens: 700, CostUSD: 0.7}}}
	e := newEnv(t, &fakeRunner{}, m)
	now := time.Now().UTC()
	j := job{ID: "opt_gaveup", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, OverallTimeout: Duration(time.Minute),
		LLMCallTimeout: Duration(time.Minute), SandboxTimeout: Duration(time.Minute), Status: StatusRunning,
		Attempts: MaxAttempts, CreatedAt: now, StartedAt: &now,
		Results: []storedRes{{ModelResult: ModelResult{Model: "scripted/task",
			Tokens: 510, CostUSD: 0.51, Usage: ResultUsage{Task: Usage{Tokens: 500, CostUSD: 0.5}, Proposer: Usage{Tokens: 10, CostUSD: 0.01}}}}},
		OpenKeys: []openKey{{Ref: "old-1", Model: "scripted/task"}}}
	if err := store.PutJSON(context.Background(), e.st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	e.start(t)
	if st := waitFor(t, e.svc, j.ID); st.Status != StatusFailed {
		t.Fatalf("status %+v", st)
	}
	res, _ := e.svc.Results(context.Background(), "alice", j.ID)
	if r := res.Results[0]; r.Usage.Task.Tokens != 700 || r.Tokens != 710 || res.CutRuns != nil {
		t.Errorf("result %+v, cut_runs %+v: want the key's 700 task tokens in the result", r, res.CutRuns)
	}
	stored, _ := store.GetJSON[job](context.Background(), e.st, store.OptimizationJobs, j.ID)
	if len(stored.OpenKeys) != 0 || len(m.reclaimed) != 1 {
		t.Errorf("open keys %+v, reclaimed %v", stored.OpenKeys, m.reclaimed)
	}
}

// TestReclaimedWhenCancelledOrDeletedBeforeRestart: a job re-queued after a run cut short
// and cancelled (or deleted) before it runs again has the cut run's key reclaimed there, and
// a cancelled job reports its spend as cut_runs.
func TestReclaimedWhenCancelledOrDeletedBeforeRestart(t *testing.T) {
	m := &reclaimingMinter{spent: map[string]Usage{"old-1": {Tokens: 900, CostUSD: 0.9}, "old-2": {Tokens: 10, CostUSD: 0.01}}}
	e := newEnv(t, &fakeRunner{}, m)
	now := time.Now().UTC()
	queued := job{ID: "opt_requeued", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"scripted/task"}, NIterations: 1, OverallTimeout: Duration(time.Minute),
		LLMCallTimeout: Duration(time.Minute), SandboxTimeout: Duration(time.Minute), Status: StatusQueued,
		Attempts: 1, CreatedAt: now, CutRuns: &CutRunsUsage{Runs: 1, Proposer: Usage{Tokens: 20}, Tokens: 20},
		OpenKeys: []openKey{{Ref: "old-1", Model: "scripted/task", Recorded: &Usage{Tokens: 500}}}}
	deleted := queued
	deleted.ID, deleted.OpenKeys = "opt_deleted", []openKey{{Ref: "old-2", Model: "scripted/task"}}
	for _, j := range []job{queued, deleted} {
		if err := store.PutJSON(context.Background(), e.st, store.OptimizationJobs, j.ID, j); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.Cancel(context.Background(), "alice", queued.ID); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.Results(context.Background(), "alice", queued.ID)
	if err != nil || res.CutRuns == nil || res.CutRuns.Task.Tokens != 900 || res.CutRuns.Tokens != 920 {
		t.Fatalf("cancelled job: %+v, %v: want the key's 900 task tokens in cut_runs", res, err)
	}
	if _, err := e.svc.DeleteJob(context.Background(), "alice", deleted.ID); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if got := strings.Join(m.reclaimed, ","); got != "old-1,old-2" {
		t.Errorf("reclaimed %q, want old-1 then old-2", got)
	}
}
