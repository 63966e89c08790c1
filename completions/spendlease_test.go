package completions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// blockingFake is a fake upstream whose answers wait until release is closed; each call
// says it arrived on entered first. Every answer uses 100 tokens.
type blockingFake struct {
	entered chan struct{}
	release chan struct{}
}

func (f *blockingFake) Name() string               { return "up" }
func (f *blockingFake) SupportsSearch(string) bool { return false }
func (f *blockingFake) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	f.entered <- struct{}{}
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &providers.Response{Text: "ok", Usage: providers.Usage{PromptTokens: 50, CompletionTokens: 50}, FinishReason: "stop", Model: req.Model}, nil
}
func (f *blockingFake) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return nil, errors.New("blockingFake: no streams")
}

// replicaStores returns two stores on one database, as two replicas open it: one memory
// store both use, or, with SWITCHYARD_TEST_POSTGRES, two connections to one schema.
func replicaStores(t *testing.T, name string) (a, b *store.Store) {
	t.Helper()
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	if dsn == "" {
		st := memstore.New()
		return st, st
	}
	schema := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	open := func() *store.Store {
		d, err := pgstore.OpenDriver(context.Background(), dsn, pgstore.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return store.New(d)
	}
	return open(), open()
}

// TestSpendGateHoldsAcrossReplicas: two gateways on one store sharing their limits
// (Options.SharedLimits) admit a burst of a stored budget's requests spread over both as
// one gateway would: with 100 of 1000 tokens used at 100 a request, 9 requests in flight
// at once, not 9 on each. Before anything is spent, a request on one replica waits while
// the other has one in flight. Each request's lease ends with it.
func TestSpendGateHoldsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	sa, sb := replicaStores(t, "spendlease")
	up := &blockingFake{entered: make(chan struct{}, 64), release: make(chan struct{})}
	replica := func(st *store.Store) *Gateway {
		g, err := New(Options{Providers: fakeRegistry{"up": up}, Store: st, SharedLimits: store.NewCounters(st, "limits")})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ga, gb := replica(sa), replica(sb)
	if _, err := CreateSharedBudget(ctx, sa, "key/vk", BudgetLimits{MaxTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	load := func(st *store.Store) *Budget {
		b, err := LoadSharedBudget(ctx, st, "key/vk")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ba, bb := load(sa), load(sb)

	// Nothing spent: a's first request in flight holds b's back.
	first := make(chan error, 1)
	go func() {
		_, err := ga.Complete(ctx, Scope{Budget: ba}, userReq("hi", "up/m"))
		first <- err
	}()
	<-up.entered
	bctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		rel, err := gb.spend.admit(bctx, bb, false)
		if err == nil {
			rel()
		}
		waited <- err
	}()
	cancel()
	if err := <-waited; err == nil {
		t.Fatal("b admitted a request while a's first, with nothing spent yet, was in flight")
	}
	up.release <- struct{}{} // a's first answer: 100 tokens
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	// A burst over both: 900 tokens left at 100 a request.
	const burst = 24
	results := make(chan error, burst)
	var wg sync.WaitGroup
	for i := range burst {
		g, b := ga, ba
		if i%2 == 1 {
			g, b = gb, bb
		}
		wg.Go(func() {
			_, err := g.Complete(ctx, Scope{Budget: b}, userReq("hi", "up/m"))
			results <- err
		})
	}
	admitted, refused := 0, 0
	for admitted+refused < burst {
		select {
		case <-up.entered:
			admitted++
		case err := <-results:
			if !errors.Is(err, ErrBudgetExceeded) {
				t.Fatalf("a request of the burst failed: %v", err)
			}
			refused++
		}
	}
	close(up.release)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Fatalf("an admitted request failed: %v", err)
		}
	}
	if admitted != 9 {
		t.Errorf("%d requests of the burst in flight at once over two replicas (%d refused), want 9: 900 tokens left at 100 a request", admitted, refused)
	}
	if u := ba.Used(ctx); u.Tokens > 1000 {
		t.Errorf("the budget spent %d of 1000 tokens", u.Tokens)
	}
	rec, err := store.GetJSON[sharedBudget](ctx, sa, store.Budgets, "key/vk")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.InFlight) != 0 {
		t.Errorf("leases left after every request ended: %+v", rec.InFlight)
	}
}

// TestSpendLeaseOfAGoneReplicaEnds: a lease counts until its Until only: the requests of a
// replica that died holding them stop holding the budget back then.
func TestSpendLeaseOfAGoneReplicaEnds(t *testing.T) {
	now := time.Now()
	rec := sharedBudget{InFlight: []spendLease{{Process: "gone", N: 5, Until: now.Add(-time.Second)}, {Process: "live", N: 2, Until: now.Add(time.Minute)}}}
	if n := rec.othersInFlight("me", now); n != 2 {
		t.Errorf("others in flight %d, want the live replica's 2", n)
	}
	rec.setLease("me", 1, now.Add(time.Minute), now)
	if len(rec.InFlight) != 2 || rec.InFlight[0].Process != "live" || rec.InFlight[1].Process != "me" {
		t.Errorf("leases after a write %+v: the gone one dropped, mine added", rec.InFlight)
	}
	rec.setLease("me", 0, time.Time{}, now)
	if len(rec.InFlight) != 1 {
		t.Errorf("leases after my last request ended %+v", rec.InFlight)
	}
}
