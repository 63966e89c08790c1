package optimizer

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// jobReadsDriver is a fake store driver (memstore underneath) counting the listings of
// store.OptimizationJobs and the reads of one of its records outside a transaction.
type jobReadsDriver struct {
	*memstore.Driver
	mu          sync.Mutex
	lists, gets int
}

func (d *jobReadsDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	if c == store.OptimizationJobs {
		d.mu.Lock()
		d.lists++
		d.mu.Unlock()
	}
	return d.Driver.List(ctx, c, opts)
}

func (d *jobReadsDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	if c == store.OptimizationJobs {
		d.mu.Lock()
		d.gets++
		d.mu.Unlock()
	}
	return d.Driver.Get(ctx, c, key)
}

func (d *jobReadsDriver) counts() (lists, gets int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lists, d.gets
}

// TestStartReadsTheJobsOnce: Start listed the stored jobs (records included) and then read
// each record again, one Get a job; on a shared queue it listed them twice (to enqueue the
// unfinished, then to reclaim ended jobs' keys) and read each again. It now lists them once
// and reads no record a second time, on the local queue and on a shared one.
func TestStartReadsTheJobsOnce(t *testing.T) {
	for _, shared := range []bool{false, true} {
		name := "local"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := &jobReadsDriver{Driver: memstore.NewDriver()}
			st := store.New(d)
			var opts []Option
			if shared {
				opts = append(opts, WithQueue(minuteQueue{}))
			}
			e := newEnv(t, &fakeRunner{}, nil) // its upstream and proposer
			svc, err := New(st, e.runner, e.proposer, append([]Option{WithFetcher(e.svc.fetcher), WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
				WithPublicURL("https://sy.example"), WithLogger(e.svc.log)}, opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			const jobs = 5
			now := time.Now().UTC()
			for i := range jobs { // ended jobs: no worker reads them after Start
				j := job{ID: fmt.Sprintf("opt_ended%d", i), Owner: "alice", Version: "v1", Optimizer: "agentopt", TargetModels: []string{"scripted/task"},
					NIterations: 1, Status: StatusCompleted, Attempts: 1, CreatedAt: now, StartedAt: &now, FinishedAt: &now}
				if err := store.PutJSON(ctx, st, store.OptimizationJobs, j.ID, j); err != nil {
					t.Fatal(err)
				}
			}
			if err := svc.Start(ctx); err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := svc.Close(cctx); err != nil { // waits for the shared start's reclaiming
				t.Fatal(err)
			}
			if lists, gets := d.counts(); lists != 1 || gets != 0 {
				t.Errorf("a start over %d stored jobs listed them %d times and read %d records again; want one listing, no second read", jobs, lists, gets)
			}
		})
	}
}
