package trainer

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review20bRerunDriver runs every Update function twice, the first run discarded, as
// store.Driver allows ("A driver may run fn more than once"): pgstore after a
// serialization failure, boltstore's group commit after another member failed.
type review20bRerunDriver struct{ *memstore.Driver }

var errReview20bDiscard = errors.New("discarded first run")

func (d review20bRerunDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := d.Driver.Update(ctx, func(tx store.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return errReview20bDiscard
	}); !errors.Is(err, errReview20bDiscard) {
		return err
	}
	return d.Driver.Update(ctx, fn)
}

// TestReview20bUploadDroppedWhenUpdateRunsTwice: the transactions that end or delete a
// job on an upload delete its pieces in the same Update function; a driver that runs the
// function again must not leave them behind (dropUploadTx marked the outer record's upload
// gone in the discarded run, so the kept run deleted nothing).
func TestReview20bUploadDroppedWhenUpdateRunsTwice(t *testing.T) {
	ctx := context.Background()
	st := store.New(review20bRerunDriver{memstore.NewDriver()})
	pieces := func() int {
		es, err := st.List(ctx, store.TrainingUploads, store.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	data := []byte(asJSON(syntheticRecords(60, 5)))

	// DeleteJob of a queued job (the service is not started).
	idle, err := New(st, WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	job, err := idle.SubmitUpload(ctx, "k", Upload{Filename: "r.json", Data: data}, JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pieces() != 1 {
		t.Fatalf("%d pieces stored, want 1", pieces())
	}
	if _, err := idle.DeleteJob(ctx, "k", job.TrainingJobID); err != nil {
		t.Fatal(err)
	}
	if n := pieces(); n != 0 {
		t.Errorf("DeleteJob left %d upload pieces", n)
	}
	idle.Close()

	// A job run to completion.
	s := newService(t, st)
	job, err = s.SubmitUpload(ctx, "k", Upload{Filename: "r.json", Data: data}, JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if done := waitDone(t, s, "k", job.TrainingJobID); done.Status != StateCompleted {
		t.Fatalf("job %s: %s", done.Status, done.ErrorMessage)
	}
	if n := pieces(); n != 0 {
		t.Errorf("the completed job left %d upload pieces", n)
	}
}
