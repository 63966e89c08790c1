package optimizer

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/sandbox"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// bundleReadsDriver counts the listings of store.OptimizationBundles and the bundle pieces
// they return (a memstore driver underneath).
type bundleReadsDriver struct {
	store.Driver
	mu            sync.Mutex
	lists, pieces int
}

func (d *bundleReadsDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	es, err := d.Driver.List(ctx, c, opts)
	if c == store.OptimizationBundles {
		d.mu.Lock()
		d.lists++
		for _, e := range es {
			if !strings.HasPrefix(e.Key, bundleIndexPrefix) {
				d.pieces++
			}
		}
		d.mu.Unlock()
	}
	return es, err
}

func (d *bundleReadsDriver) counts(reset bool) (lists, pieces int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	lists, pieces = d.lists, d.pieces
	if reset {
		d.lists, d.pieces = 0, 0
	}
	return lists, pieces
}

// TestRestartReadsNoBundleOfAWaitingJob: a restart found the stored bundles by reading one
// piece (up to 1 MiB) of each, those of the jobs still waiting included. It now lists the
// bundles' index once and reads nothing of a waiting job's bundle, while still deleting
// what ended or deleted jobs left behind: bundles with an index entry at every start, and
// those stored before the index (no entry) on the first start of this build.
func TestRestartReadsNoBundleOfAWaitingJob(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, &fakeRunner{}, nil) // its upstream, proposer and bundle URL
	d := &bundleReadsDriver{Driver: memstore.NewDriver()}
	st := store.New(d)
	defer st.Close()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	blocked := &fakeRunner{block: func(sandbox.Job) bool { return true }} // jobs stay running or queued
	service := func(t *testing.T) *Service {
		t.Helper()
		svc, err := New(st, blocked, e.proposer, WithFetcher(&fetch.Fetcher{AllowLocal: true}), WithGateway(e.up.URL+"/v1", StaticKey("job-key")),
			WithPublicURL("https://sy.example"), WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithClock(func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	stop := func(svc *Service) {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		_ = svc.Close(cctx)
	}
	first := service(t) // never started: its jobs wait
	var waiting []string
	for range 3 {
		sub, err := first.Submit(ctx, "alice", request(e.url, 1))
		if err != nil {
			t.Fatal(err)
		}
		waiting = append(waiting, sub.JobID)
	}
	stop(first)
	// Left behind: an ended job's bundle (indexed), and one stored before the index by a
	// job deleted since (no record, no index entry).
	ended := job{ID: "opt_ended", Owner: "alice", Status: StatusCompleted, Bundle: newBundleCopy([]byte("zip")), CreatedAt: now}
	if err := store.PutJSON(ctx, st, store.OptimizationJobs, ended.ID, ended); err != nil {
		t.Fatal(err)
	}
	if err := putBundleTx(ctx, st, ended.ID, []byte("zip")); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, store.OptimizationBundles, bundleKey("opt_legacy", 0), []byte("zip")); err != nil {
		t.Fatal(err)
	}
	wantLeft := func(when string) {
		t.Helper()
		var want []string
		for _, id := range waiting {
			want = append(want, bundleIndexKey(id), bundleKey(id, 0))
		}
		slices.Sort(want)
		if got := storedBundleKeys(t, st); !slices.Equal(got, want) {
			t.Errorf("%s: stored bundle keys %v, want the waiting jobs' %v", when, got, want)
		}
	}

	// The first start of this build also walks the pieces, for bundles without an index entry.
	d.counts(true)
	second := service(t)
	if err := second.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wantLeft("first start")
	stop(second)

	// Later starts list the index once and read no piece.
	d.counts(true)
	third := service(t)
	if err := third.Start(ctx); err != nil {
		t.Fatal(err)
	}
	lists, pieces := d.counts(false)
	wantLeft("second start")
	stop(third)
	if lists != 1 || pieces != 0 {
		t.Errorf("a restart with %d waiting jobs listed the stored bundles %d times and read %d pieces; want the index listed once, no piece", len(waiting), lists, pieces)
	}
}
