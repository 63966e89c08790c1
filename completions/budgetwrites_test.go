package completions

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestBudgetedRequestWritesEachAccountTwice: with the replicas sharing their limits, a
// request of a budgeted key writes each stored account it draws on twice, as before the
// leases of the requests in flight were kept in the accounts: its call reserved (with its
// lease), its answer charged (its lease ended) — the key's own account, the key's and the
// proxy-wide one, the proxy-wide one of the operator's key. While a request is in flight
// its lease is in the record; none is left after.
func TestBudgetedRequestWritesEachAccountTwice(t *testing.T) {
	ctx := context.Background()
	for _, sc := range budgetScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			gs, sts, counters := budgetReplicas(t, "budgetwrites")
			budgets := [2]*Budget{sc.make(t, sts[0], true), sc.make(t, sts[1], false)}
			before := counters[0].writes.Load() + counters[1].writes.Load()
			const n = 6
			for i := range n {
				req := userReq("hi", "up/m")
				req.ephemeral = true
				if _, err := gs[i%2].Complete(ctx, Scope{Budget: budgets[i%2]}, req); err != nil {
					t.Fatal(err)
				}
			}
			writes := counters[0].writes.Load() + counters[1].writes.Load() - before
			if want := int64(2 * sc.accounts * n); writes != want {
				t.Errorf("%d requests wrote the budget records %d times, want %d: %d accounts written twice a request", n, writes, want, sc.accounts)
			}
			for _, id := range []string{"key/vk", "proxy"} {
				rec, err := store.GetJSON[sharedBudget](ctx, sts[0], store.Budgets, id)
				if err == nil && len(rec.InFlight) != 0 {
					t.Errorf("%s: leases left after every request ended: %+v", id, rec.InFlight)
				}
			}
		})
	}
}

// TestBudgetLeaseInFlightIsStored: a request admitted on one replica holds its lease in
// the stored account, with its call, until its answer is charged.
func TestBudgetLeaseInFlightIsStored(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	up := &blockingFake{entered: make(chan struct{}, 4), release: make(chan struct{})}
	g, err := New(Options{Providers: fakeRegistry{"up": up}, Store: st, SharedLimits: store.NewCounters(st, "limits")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := CreateSharedBudget(ctx, st, "key/vk", BudgetLimits{MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.Complete(ctx, Scope{Budget: b}, userReq("hi", "up/m"))
		done <- err
	}()
	<-up.entered
	rec, err := store.GetJSON[sharedBudget](ctx, st, store.Budgets, "key/vk")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.InFlight) != 1 || rec.InFlight[0].N != 1 || rec.Used.Calls != 1 {
		t.Errorf("record while a request is in flight: calls %d, leases %+v; want 1 call and a lease of 1", rec.Used.Calls, rec.InFlight)
	}
	close(up.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec, _ = store.GetJSON[sharedBudget](ctx, st, store.Budgets, "key/vk")
	if len(rec.InFlight) != 0 || rec.Used.Tokens != 100 {
		t.Errorf("record after the answer: tokens %d, leases %+v", rec.Used.Tokens, rec.InFlight)
	}
}

// cancelOnCommitDriver calls onCommit once, after the first transaction that writes a
// budget record committed, and then answers that transaction with its context's error
// if it ended meanwhile: a commit that succeeded while the request's context ended.
type cancelOnCommitDriver struct {
	store.Driver
	armed    atomic.Bool
	onCommit func()
}

func (d *cancelOnCommitDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	var wrote bool
	err := d.Driver.Update(ctx, func(tx store.Tx) error {
		var puts int64
		err := fn(budgetCountingTx{Tx: tx, puts: &puts})
		wrote = puts > 0
		return err
	})
	if err == nil && wrote && d.armed.CompareAndSwap(true, false) {
		d.onCommit()
		return ctx.Err()
	}
	return err
}

// TestBudgetLeaseNotLeftWhenTheContextEndsAtItsCommit: the transaction that lets a
// request in commits just as the request's context ends. The request fails, and its lease
// does not stay in the account, holding back the other replicas' requests until its
// deadline and a minute more.
func TestBudgetLeaseNotLeftWhenTheContextEndsAtItsCommit(t *testing.T) {
	ctx := context.Background()
	d := &cancelOnCommitDriver{Driver: memstore.NewDriver()}
	st := store.New(d)
	g, err := New(Options{Providers: fakeRegistry{"up": instantFake{}}, Store: st, SharedLimits: store.NewCounters(st, "limits")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := CreateSharedBudget(ctx, st, "key/vk", BudgetLimits{MaxTokens: 100000})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	d.onCommit = func() { once.Do(cancel) }
	d.armed.Store(true)
	_, err = g.Complete(rctx, Scope{Budget: b}, userReq("hi", "up/m"))
	if err == nil {
		t.Log("the request was answered though its context ended")
	} else if !errors.Is(err, context.Canceled) {
		t.Logf("the request failed: %v", err)
	}
	rec, err := store.GetJSON[sharedBudget](ctx, st, store.Budgets, "key/vk")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.InFlight) != 0 {
		t.Errorf("a lease left in the account after the request ended: %+v", rec.InFlight)
	}
}
