package optimizer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// rerunDriver runs every Update function twice, the first run discarded, as store.Driver
// allows ("A driver may run fn more than once"): what pgstore does after a serialization
// failure and boltstore's group commit after another member of the group failed.
type rerunDriver struct{ *memstore.Driver }

var errDiscard = errors.New("discarded first run")

func (d rerunDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := d.Driver.Update(ctx, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errDiscard
	}); !errors.Is(err, errDiscard) {
		return err
	}
	return d.Driver.Update(ctx, fn)
}

// TestReview11DeleteJobCountsArtifactsOnce: DeleteJob counts the deleted artifacts inside its
// Update function (artifacts++), so a driver that runs the function again reports each
// artifact twice in the Deletion answer.
func TestReview11DeleteJobCountsArtifactsOnce(t *testing.T) {
	st := store.New(rerunDriver{memstore.NewDriver()})
	e := newEnv(t, &fakeRunner{}, nil)
	svc, err := New(st, e.runner, e.proposer, WithLogger(e.svc.log))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().UTC()
	j := job{ID: "opt_done", Owner: "alice", Version: "v1", Optimizer: "agentopt", InputURL: e.url,
		TargetModels: []string{"p/a", "p/b"}, NIterations: 1, Status: StatusCompleted, CreatedAt: now, FinishedAt: &now,
		Results: []storedRes{{ModelResult: ModelResult{Model: "p/a"}, ArtifactToken: "0123456789abcdef0123456789abcdef"},
			{ModelResult: ModelResult{Model: "p/b"}, ArtifactToken: "fedcba9876543210fedcba9876543210"}}}
	if err := store.PutJSON(ctx, st, store.OptimizationJobs, j.ID, j); err != nil {
		t.Fatal(err)
	}
	for _, r := range j.Results {
		if err := store.PutJSON(ctx, st, store.Artifacts, artifactKey(r.ArtifactToken), artifact{JobID: j.ID}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := svc.DeleteJob(ctx, "alice", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.Artifacts != 2 {
		t.Fatalf("Deletion.Artifacts = %d, want 2 (the job had two artifacts)", d.Artifacts)
	}
}
