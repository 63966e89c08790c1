package completions

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// TestBudgetedRequestsWaitOnTheHotAccount: budgeted requests 16 at once over two
// replicas sharing their limits (on PostgreSQL with SWITCHYARD_TEST_POSTGRES: every
// request writes the same account records, the proxy-wide one those of every key), the
// store allowed one run again after a serialization failure. The accounts' writers wait
// for each other (Store.UpdateLocked) instead of aborting each other, so no request
// fails (with the store's default 20 runs again about 1 in 2,000–4,000 still failed with
// a 500; with one, most would), every answer's tokens are charged exactly once, and no
// lease of a request in flight is left in an account.
func TestBudgetedRequestsWaitOnTheHotAccount(t *testing.T) {
	ctx := context.Background()
	for _, sc := range budgetScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			gs, sts, counters := budgetReplicasRetrying(t, "budgethot", 1)
			budgets := [2]*Budget{sc.make(t, sts[0], true), sc.make(t, sts[1], false)}
			// The first answer alone: until something is spent the gate admits one at a time.
			req := userReq("hi", "up/m")
			req.ephemeral = true
			if _, err := gs[0].Complete(ctx, Scope{Budget: budgets[0]}, req); err != nil {
				t.Fatal(err)
			}
			w0, r0 := counters[0].writes.Load()+counters[1].writes.Load(), counters[0].runs.Load()+counters[1].runs.Load()
			const goroutines, each = 16, 25
			var failed atomic.Int64
			var lastErr atomic.Value
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						req := userReq("hi", "up/m")
						req.ephemeral = true
						if _, err := gs[g%2].Complete(ctx, Scope{Budget: budgets[g%2]}, req); err != nil {
							failed.Add(1)
							lastErr.Store(err)
						}
					}
				}()
			}
			wg.Wait()
			if n := failed.Load(); n > 0 {
				t.Errorf("%d of %d requests failed; the last: %v", n, goroutines*each, lastErr.Load())
			}
			answered := int64(goroutines*each+1) - failed.Load()
			ids := map[string][]string{"key": {"key/vk"}, "key+proxy": {"key/vk", "proxy"}, "master+proxy": {"proxy"}}[sc.name]
			for _, id := range ids {
				rec, err := store.GetJSON[sharedBudget](ctx, sts[0], store.Budgets, id)
				if err != nil {
					t.Fatal(err)
				}
				if want := 20 * int64(goroutines*each+1); rec.Used.Tokens != want {
					t.Errorf("%s: %d tokens charged for %d answers, want %d", id, rec.Used.Tokens, answered, want)
				}
				if len(rec.InFlight) != 0 {
					t.Errorf("%s: leases left after every request ended: %+v", id, rec.InFlight)
				}
			}
			w, r := counters[0].writes.Load()+counters[1].writes.Load()-w0, counters[0].runs.Load()+counters[1].runs.Load()-r0
			t.Logf("%d requests: %d budget writes in %d transaction runs", goroutines*each, w, r)
		})
	}
}
