package optimizer

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestJobKeyBudget checks the grant a job key is minted with: only the target model, and a
// call and token budget sized from the rows every run of the loop will process.
func TestJobKeyBudget(t *testing.T) {
	var mu sync.Mutex
	var grants []KeyGrant
	minter := minterFunc(func(g KeyGrant) (*JobKey, error) {
		mu.Lock()
		grants = append(grants, g)
		mu.Unlock()
		return &JobKey{Key: "job-key"}, nil
	})
	e := newEnv(t, &fakeRunner{}, minter, WithAgentBudget(3, 100))
	e.start(t)
	sub, err := e.svc.Submit(context.Background(), "alice", request(e.url, 2))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, e.svc, sub.JobID)
	b, err := ReadBundle(zipFiles(t, bundleFiles(t)))
	if err != nil {
		t.Fatal(err)
	}
	train, test := Split(b.Rows, DefaultSeed)
	mu.Lock()
	defer mu.Unlock()
	if len(grants) != 1 {
		t.Fatalf("%d keys minted, want 1", len(grants))
	}
	g := grants[0]
	// The baseline, per iteration DefaultCandidates minibatches and one confirmation, and the
	// held-out runs.
	mb := min(DefaultMinibatch, (len(train)+1)/2)
	wantCalls := int64(3 * (len(train) + 2*(len(train)+DefaultCandidates*mb) + 2*len(test)))
	if g.Model != "scripted/task" || g.Owner != "alice" || g.MaxCalls != wantCalls || g.MaxTokens != wantCalls*100 {
		t.Fatalf("grant %+v, want MaxCalls %d and MaxTokens %d", g, wantCalls, wantCalls*100)
	}
	// The agent's calls are held to the job's llm_call_timeout_seconds.
	if g.CallTimeout != 10*time.Second {
		t.Errorf("grant call timeout %v, want the job's 10s", g.CallTimeout)
	}
}
