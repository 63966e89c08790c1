package routing_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// countingDriver counts the reads made through it, by collection (a memstore driver
// underneath): a GetMany of several records counts as one read, as it is one query on
// PostgreSQL.
type countingDriver struct {
	store.Driver
	mu       sync.Mutex
	lists    map[store.Collection]int
	gets     map[store.Collection]int
	getManys map[store.Collection]int
}

func (d *countingDriver) GetMany(ctx context.Context, c store.Collection, keys []string) (map[string][]byte, error) {
	d.mu.Lock()
	d.getManys[c]++
	d.mu.Unlock()
	return store.GetMany(ctx, d.Driver, c, keys)
}

// reads is the Gets and GetManys made of c since the last reset.
func (d *countingDriver) reads(c store.Collection) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gets[c] + d.getManys[c]
}

func (d *countingDriver) List(ctx context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	d.mu.Lock()
	d.lists[c]++
	d.mu.Unlock()
	return d.Driver.List(ctx, c, opts)
}

func (d *countingDriver) Get(ctx context.Context, c store.Collection, key string) ([]byte, error) {
	d.mu.Lock()
	d.gets[c]++
	d.mu.Unlock()
	return d.Driver.Get(ctx, c, key)
}

func (d *countingDriver) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lists, d.gets, d.getManys = map[store.Collection]int{}, map[store.Collection]int{}, map[store.Collection]int{}
}

func (d *countingDriver) counts() (lists, jobGets int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.lists {
		lists += n
	}
	return lists, d.gets[store.TrainingJobs] + d.getManys[store.TrainingJobs]
}

// TestListPreferencesReadsRoutersOnce: listing preferences tells each one's router status
// (router_fallback) reading the page's training jobs in one go however many preferences
// follow them, and paging the owner's router models at most once for all the preferences whose
// training job is gone, not once per preference: the store reads of a listing do not grow
// with the preferences that follow jobs that are gone.
func TestListPreferencesReadsRoutersOnce(t *testing.T) {
	ctx := context.Background()
	d := &countingDriver{Driver: memstore.NewDriver()}
	d.reset()
	st := store.New(d)
	defer st.Close()
	svc, err := trainer.New(st, trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	sel := routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc), Logger: slog.New(slog.DiscardHandler)})
	bind := func(owner, job string) {
		t.Helper()
		if _, err := sel.BindTrainingJob(ctx, owner, "", "", job); err != nil {
			t.Fatal(err)
		}
	}
	listReads := func(owner string, want int) (lists, jobGets int) {
		t.Helper()
		d.reset()
		list, err := sel.ListPreferences(ctx, owner, store.ListFilter{})
		if err != nil {
			t.Fatal(err)
		}
		lists, jobGets = d.counts()
		if len(list.Data) != want {
			t.Fatalf("%s: listed %d preferences, want %d", owner, len(list.Data), want)
		}
		for _, p := range list.Data {
			if p.RouterFallback != routing.FallbackTrainingJobDeleted {
				t.Errorf("%s: %s router_fallback %q, want training_job_deleted (its job never trained a router)", owner, p.ID, p.RouterFallback)
			}
		}
		return lists, jobGets
	}
	// one preference whose training job is gone
	bind("alice", "tj_gone_alice")
	oneLists, oneGets := listReads("alice", 1)
	// eight, following six jobs that are gone (three share one)
	for i := range 6 {
		bind("bob", fmt.Sprintf("tj_gone_%d", i))
	}
	bind("bob", "tj_gone_0")
	bind("bob", "tj_gone_0")
	manyLists, manyGets := listReads("bob", 8)
	if manyLists > oneLists {
		t.Errorf("listing 8 preferences of jobs that are gone made %d store listings, 1 preference %d: the router models were paged per preference", manyLists, oneLists)
	}
	if oneGets != 1 || manyGets != 1 {
		t.Errorf("training job reads: %d for 1 preference (want 1), %d for 8 preferences of 6 jobs (want 1: the page's jobs are read together)", oneGets, manyGets)
	}
}
