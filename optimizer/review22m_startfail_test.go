package optimizer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// errListJobs is the store failure listFailDriver injects.
var errListJobs = errors.New("injected: listing optimization jobs failed")

// listFailDriver fails, while armed, every listing of the optimization jobs: Start's
// reload of the stored jobs.
type listFailDriver struct {
	store.Driver
	armed atomic.Bool
}

func (d *listFailDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == store.OptimizationJobs && d.armed.Load() {
		return nil, errListJobs
	}
	return d.Driver.List(ctx, c, opts)
}

// TestReview22mSubmitAfterFailedStartIsRefused: when Start failed reloading the stored
// jobs no worker runs, yet Submit accepted jobs (202) that would never run; it now answers
// ErrClosed (503), as the trainer's does (its Start cancels its context on failure), and
// stores nothing.
func TestReview22mSubmitAfterFailedStartIsRefused(t *testing.T) {
	e := newEnv(t, &fakeRunner{}, nil)
	d := &listFailDriver{Driver: memstore.NewDriver()}
	st := store.New(d)
	svc, err := New(st, e.runner, e.proposer,
		WithFetcher(&fetch.Fetcher{AllowLocal: true}),
		WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
		WithPublicURL("https://sy.example"),
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(context.Background()) })
	d.armed.Store(true)
	if err := svc.Start(context.Background()); !errors.Is(err, errListJobs) {
		t.Fatalf("Start with the store failing: %v, want the store's error", err)
	}
	d.armed.Store(false)
	sub, err := svc.Submit(context.Background(), "alice", request(e.url, 1))
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after a failed Start: %+v, %v; want ErrClosed", sub, err)
	}
	list, err := svc.ListJobs(context.Background(), "alice", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 0 {
		t.Errorf("a refused submission left jobs: %+v", list.Data)
	}
}
