package deployments

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// watchedDriver counts the store calls a Service makes; when block is set, a List waits
// until its context ends (a Sync under way when serve shuts down).
type watchedDriver struct {
	store.Driver
	mu      sync.Mutex
	calls   int
	block   bool
	entered chan struct{} // receives once per blocked List
}

func (d *watchedDriver) List(ctx context.Context, c store.Collection, o store.ListOptions) ([]store.Entry, error) {
	d.mu.Lock()
	d.calls++
	block := d.block
	d.mu.Unlock()
	if block {
		select {
		case d.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return d.Driver.List(ctx, c, o)
}

func (d *watchedDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

// TestRunStopsOnCancel: Run returns once its context ends, also while a Sync is waiting
// on the store, and makes no store call after it returned (so serve may close the store
// then); with its context ended before it starts it makes none at all.
func TestRunStopsOnCancel(t *testing.T) {
	d := &watchedDriver{Driver: memstore.NewDriver(), entered: make(chan struct{}, 1)}
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := New(Options{Store: store.New(d), Gateway: g, Registry: reg, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}

	ended, cancelEnded := context.WithCancel(context.Background())
	cancelEnded()
	svc.Run(ended)
	if n := d.count(); n != 0 {
		t.Errorf("Run with its context ended made %d store calls, want none", n)
	}

	d.mu.Lock()
	d.block = true
	d.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); svc.Run(ctx) }()
	<-d.entered // a Sync is under way, waiting on the store
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard, not a timing
		t.Fatal("Run did not return after its context ended")
	}
	after := d.count()
	time.Sleep(20 * time.Millisecond) // many Poll intervals: a Run still ticking would call
	if n := d.count(); n != after {
		t.Errorf("%d store calls after Run returned, want none", n-after)
	}
}
