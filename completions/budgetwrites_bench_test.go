package completions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// budgetWriteCounter is a store driver counting the writes of budget accounts
// (store.Budgets) that reached the store, and the transaction runs (a PostgreSQL
// serialization failure runs one again) of the transactions that wrote one.
type budgetWriteCounter struct {
	store.Driver
	writes, runs atomic.Int64
}

func (d *budgetWriteCounter) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if c == store.Budgets {
		d.writes.Add(1)
		d.runs.Add(1)
	}
	return d.Driver.Put(ctx, c, key, value)
}

func (d *budgetWriteCounter) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	return d.UpdateLocked(ctx, nil, fn)
}

// UpdateLocked forwards the locks to the driver counted (store.RecordLocker), counting
// as Update does.
func (d *budgetWriteCounter) UpdateLocked(ctx context.Context, locks []store.Ref, fn func(tx store.Tx) error) error {
	var puts, runs int64
	err := store.UpdateLocked(ctx, d.Driver, locks, func(tx store.Tx) error {
		puts = 0 // what the last run wrote is what commits
		runs++
		return fn(budgetCountingTx{Tx: tx, puts: &puts})
	})
	if err == nil && puts > 0 {
		d.writes.Add(puts)
		d.runs.Add(runs)
	}
	return err
}

type budgetCountingTx struct {
	store.Tx
	puts *int64
}

func (t budgetCountingTx) Put(ctx context.Context, c store.Collection, key string, value []byte) error {
	if c == store.Budgets {
		*t.puts++
	}
	return t.Tx.Put(ctx, c, key, value)
}

// instantFake is a fake upstream that answers at once with 20 tokens.
type instantFake struct{}

func (instantFake) Name() string               { return "up" }
func (instantFake) SupportsSearch(string) bool { return false }
func (instantFake) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	return &providers.Response{Text: "ok", Usage: providers.Usage{PromptTokens: 12, CompletionTokens: 8}, FinishReason: "stop", Model: req.Model}, nil
}
func (instantFake) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	return nil, errors.New("instantFake: no streams")
}

// budgetReplicas opens two gateways sharing their limits on one store (two connections
// to one fresh schema with SWITCHYARD_TEST_POSTGRES, else one memory store), each store
// behind a budgetWriteCounter.
func budgetReplicas(tb testing.TB, name string) (gs [2]*Gateway, sts [2]*store.Store, counters [2]*budgetWriteCounter) {
	tb.Helper()
	return budgetReplicasRetrying(tb, name, 0)
}

// budgetReplicasRetrying is budgetReplicas whose PostgreSQL stores run a transaction
// again at most retries times after a serialization failure (0: pgstore's default).
func budgetReplicasRetrying(tb testing.TB, name string, retries int) (gs [2]*Gateway, sts [2]*store.Store, counters [2]*budgetWriteCounter) {
	tb.Helper()
	dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES")
	mem := memstore.NewDriver()
	schema := fmt.Sprintf("%s_%d", name, time.Now().UnixNano())
	for i := range gs {
		var d store.Driver = mem
		if dsn != "" {
			pd, err := pgstore.OpenDriver(context.Background(), dsn, pgstore.Options{Schema: schema, MaxRetries: retries})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { pd.Close() })
			d = pd
		}
		counters[i] = &budgetWriteCounter{Driver: d}
		sts[i] = store.New(counters[i])
		g, err := New(Options{Providers: fakeRegistry{"up": instantFake{}}, Store: sts[i], SharedLimits: store.NewCounters(sts[i], "limits")})
		if err != nil {
			tb.Fatal(err)
		}
		gs[i] = g
	}
	return gs, sts, counters
}

// budgetScenario makes, on the stores of budgetReplicas, the Budget each replica's
// requests are scoped to; accounts is how many stored accounts a request draws on.
type budgetScenario struct {
	name     string
	accounts int
	make     func(tb testing.TB, st *store.Store, first bool) *Budget
}

func budgetScenarios() []budgetScenario {
	ctx := context.Background()
	load := func(tb testing.TB, st *store.Store, first bool, id string, l BudgetLimits) *Budget {
		if first {
			if err := PutSharedBudget(ctx, st, id, l); err != nil {
				tb.Fatal(err)
			}
		}
		b, err := LoadSharedBudget(ctx, st, id)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	key := BudgetLimits{MaxTokens: 1 << 50}
	proxy := BudgetLimits{MaxCostUSD: 1e9, CostAboveOnly: true}
	return []budgetScenario{
		{"key", 1, func(tb testing.TB, st *store.Store, first bool) *Budget {
			return load(tb, st, first, "key/vk", key)
		}},
		{"key+proxy", 2, func(tb testing.TB, st *store.Store, first bool) *Budget {
			return load(tb, st, first, "key/vk", key).Within(load(tb, st, first, "proxy", proxy), "proxy", "proxy")
		}},
		{"master+proxy", 1, func(tb testing.TB, st *store.Store, first bool) *Budget {
			return NewBudget(BudgetLimits{}).Within(load(tb, st, first, "proxy", proxy), "proxy", "proxy")
		}},
	}
}

// BenchmarkBudgetedRequestsShared: requests of a budgeted key (its own account; its own
// and the proxy-wide one; the operator's key on the proxy-wide one) spread over two
// replicas sharing their limits, 16 at once, against an upstream that answers at once:
// what the budget accounts' store transactions cost a request. writes/req counts the
// budget records written, runs/req the transaction runs that wrote them (a serialization
// failure on PostgreSQL runs one again), failed/req the requests that failed (a
// transaction still failing after the store's retries). With SWITCHYARD_TEST_POSTGRES on PostgreSQL,
// else on a memory store.
func BenchmarkBudgetedRequestsShared(b *testing.B) {
	for _, sc := range budgetScenarios() {
		b.Run(sc.name, func(b *testing.B) {
			gs, sts, counters := budgetReplicas(b, "benchbudget")
			budgets := [2]*Budget{sc.make(b, sts[0], true), sc.make(b, sts[1], false)}
			// The first answer, alone: until something is spent the gate admits one at a time.
			req := userReq("hi", "up/m")
			req.ephemeral = true
			if _, err := gs[0].Complete(context.Background(), Scope{Budget: budgets[0]}, req); err != nil {
				b.Fatal(err)
			}
			w0, r0 := counters[0].writes.Load()+counters[1].writes.Load(), counters[0].runs.Load()+counters[1].runs.Load()
			var next, failed atomic.Int64
			var lastErr atomic.Value
			b.SetParallelism(8)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)) % 2
				for pb.Next() {
					req := userReq("hi", "up/m")
					req.ephemeral = true
					if _, err := gs[i].Complete(context.Background(), Scope{Budget: budgets[i]}, req); err != nil {
						failed.Add(1) // a store transaction that kept failing: counted, not fatal
						if !errors.Is(err, ErrBudgetExceeded) && !errors.Is(err, store.ErrUnwritable) {
							lastErr.Store(err.Error())
						}
					}
				}
			})
			elapsed := time.Since(start)
			b.StopTimer()
			w, r := counters[0].writes.Load()+counters[1].writes.Load()-w0, counters[0].runs.Load()+counters[1].runs.Load()-r0
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
			b.ReportMetric(float64(w)/float64(b.N), "writes/req")
			b.ReportMetric(float64(r)/float64(b.N), "runs/req")
			b.ReportMetric(float64(failed.Load())/float64(b.N), "failed/req")
			if e := lastErr.Load(); e != nil {
				b.Logf("%d of %d requests failed; the last: %s", failed.Load(), b.N, e)
			}
		})
	}
}
