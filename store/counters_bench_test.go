package store_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/store/pgstore"
)

// BenchmarkCountersAdd is what sharing per-key rates adds to an admitted request.
//
//	go test ./store -run '^$' -bench 'Counters' -count 5
func BenchmarkCountersAdd(b *testing.B) {
	c := store.NewCounters(memstore.New(), "limits")
	now := time.Now()
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("rpm/key/key_%016x", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Add(keys[i%len(keys)], 1, now)
	}
}

// BenchmarkCountersSync is one exchange of a replica with three others, each of the four
// counting 1,000 keys a second: on the in-memory store, or on PostgreSQL when
// SWITCHYARD_TEST_POSTGRES is set (one write and one read over its socket).
func BenchmarkCountersSync(b *testing.B) {
	st := memstore.New()
	if dsn := os.Getenv("SWITCHYARD_TEST_POSTGRES"); dsn != "" {
		var err error
		st, err = pgstore.Open(context.Background(), dsn, pgstore.Options{Schema: fmt.Sprintf("bench_counters_%d_%d", os.Getpid(), time.Now().UnixNano())})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
	}
	ctx := context.Background()
	now := time.Now()
	cs := make([]*store.Counters, 4)
	for i := range cs {
		cs[i] = store.NewCounters(st, "limits")
		cs[i].Subscribe("rpm/", func(string, int64, time.Time) {})
	}
	round := func(at time.Time) {
		for j, c := range cs {
			for k := range 1000 {
				c.Add(fmt.Sprintf("rpm/key/key_%d_%d", j, k), 1, at)
			}
		}
		for _, c := range cs[1:] {
			if err := c.Sync(ctx, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	round(now)
	cs[0].Sync(ctx, now)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		at := now.Add(time.Duration(i+1) * time.Second)
		round(at)
		b.StartTimer()
		if err := cs[0].Sync(ctx, at); err != nil {
			b.Fatal(err)
		}
	}
}
