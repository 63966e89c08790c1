package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// closeWatchedDriver counts the store calls made after Close.
type closeWatchedDriver struct {
	store.Driver
	calls, afterClose atomic.Int64
	closed            atomic.Bool
	listed            chan struct{}
}

func (d *closeWatchedDriver) List(ctx context.Context, c store.Collection, o store.ListOptions) ([]store.Entry, error) {
	d.calls.Add(1)
	if d.closed.Load() {
		d.afterClose.Add(1)
	}
	select {
	case d.listed <- struct{}{}:
	default:
	}
	return d.Driver.List(ctx, c, o)
}

func (d *closeWatchedDriver) Close() error {
	d.closed.Store(true)
	return d.Driver.Close()
}

// TestStopPollingBeforeStoreClose: serve's deployments poller (--deployments-poll) is
// stopped and waited for by wiring.stopPolling, so the store closed after it sees no call
// of the poller, though serve's own context is still live (an HTTP server that failed).
func TestStopPollingBeforeStoreClose(t *testing.T) {
	d := &closeWatchedDriver{Driver: memstore.NewDriver(), listed: make(chan struct{}, 1)}
	st := store.New(d)
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w := &wiring{store: st, stored: svc}
	w.pollDeployments(context.Background())
	<-d.listed
	<-d.listed // polling
	w.stopPolling()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // many Poll intervals: a poller still running would call
	if n := d.afterClose.Load(); n != 0 {
		t.Errorf("the deployments poller made %d store calls after stopPolling and the store's Close", n)
	}
}
