package trainer

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// review22pListHookDriver runs afterList once, after the first List of the training jobs
// has read them: the point at which Start's recovery holds its listed copies of the jobs
// and has not yet written them back.
type review22pListHookDriver struct {
	*memstore.Driver
	once      sync.Once
	afterList func()
}

func (d *review22pListHookDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	entries, err := d.Driver.List(ctx, c, opts)
	if c == store.TrainingJobs && err == nil && d.afterList != nil {
		d.once.Do(d.afterList)
	}
	return entries, err
}

// A job a previous process left running is deleted (DeleteJob, which takes a job no live
// worker runs at once) while Start is recovering it: Start's re-queue, and its failing of
// a job interrupted MaxAttempts times, must not write the listed record back, bringing a
// deleted job back (queued, and run), and the deleted job is not queued.
func TestReview22pRecoverSkipsJobDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	d := &review22pListHookDriver{Driver: memstore.NewDriver()}
	st := store.New(d)
	crashed := jobRecord{ID: "tj_crashed", Owner: "k", State: StateRunning, Attempts: 1}
	tired := jobRecord{ID: "tj_tired", Owner: "k", State: StateRunning, Attempts: MaxAttempts}
	for _, j := range []jobRecord{crashed, tired} {
		if err := store.PutJSON(ctx, st, store.TrainingJobs, j.ID, j); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(st, WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	d.afterList = func() {
		for _, id := range []string{crashed.ID, tired.ID} {
			if del, err := s.DeleteJob(ctx, "k", id); err != nil || !del.Deleted {
				t.Errorf("delete %s during recovery: %+v, %v", id, del, err)
			}
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.mu.Lock()
	_, queued := s.pending[crashed.ID]
	s.mu.Unlock()
	if queued {
		t.Errorf("the deleted job %s was queued", crashed.ID)
	}
	for _, id := range []string{crashed.ID, tired.ID} {
		if j, err := store.GetJSON[jobRecord](ctx, st, store.TrainingJobs, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("job %s after its delete during recovery: %+v, %v; want it gone", id, j, err)
		}
	}
}
