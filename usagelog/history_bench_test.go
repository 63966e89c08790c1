package usagelog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// benchRecord is a typical answered chat request with one attempt and two tags.
func benchRecord(i int) completions.RequestRecord {
	r := historyRecord("key_bench", "key:vk_0123456789abcdef", time.Now(), i)
	r.Tags = []string{"feature:search", "team:core"}
	return r
}

// BenchmarkHistoryObserve is what recording a request costs the request itself: the
// request's goroutine only queues it (the writer commits in the background), next to the
// in-memory Recorder's ObserveRequest. The store is bbolt with fsync, as serve runs it.
func BenchmarkHistoryObserve(b *testing.B) {
	ctx := context.Background()
	b.Run("recorder", func(b *testing.B) {
		r := New(Options{})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.ObserveRequest(ctx, benchRecord(i))
		}
	})
	b.Run("history", func(b *testing.B) {
		st, err := boltstore.Open(filepath.Join(b.TempDir(), "switchyard.db"), boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		h := NewHistory(st, HistoryOptions{Queue: 1 << 20})
		defer h.Close(ctx)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.ObserveRequest(ctx, benchRecord(i))
		}
		b.StopTimer()
		if h.Dropped() > 0 {
			b.Fatalf("%d dropped", h.Dropped())
		}
	})
}

// BenchmarkHistoryWrite is the writer's cost per request: requests observed and committed
// in batches (Flush every 256, as a busy server's writer commits), on bbolt with fsync (as
// serve runs it) and on the in-memory store (the writer's CPU alone), in a store whose
// migrations have run (the steady state: the sweep at start and a day later). Requests
// carry an x-request-id and a response id, as through serve; one in ten failed. keys/req
// is the store keys a request writes (its record and its index entries), by an operator
// key (no scope) and by a virtual key (its scope's entries too).
func BenchmarkHistoryWrite(b *testing.B) {
	for _, backend := range []string{"bbolt", "memstore"} {
		for _, c := range []struct{ name, tag string }{{"operator", ""}, {"virtual_key", "key:vk_0123456789abcdef"}} {
			b.Run(backend+"/"+c.name, func(b *testing.B) {
				var drv store.Driver = memstore.NewDriver()
				if backend == "bbolt" {
					bd, err := boltstore.OpenDriver(filepath.Join(b.TempDir(), "switchyard.db"), boltstore.Options{})
					if err != nil {
						b.Fatal(err)
					}
					drv = bd
				}
				benchmarkHistoryWrite(b, drv, c.tag)
			})
		}
	}
}

func benchmarkHistoryWrite(b *testing.B, drv store.Driver, tag string) {
	ctx := context.Background()
	d := newWriteCountingDriver(drv)
	st := store.New(d)
	defer st.Close()
	h := NewHistory(st, HistoryOptions{})
	defer h.Close(ctx)
	now := time.Now()
	for _, at := range []time.Time{now, now.Add(store.MigrationRescanAfter + time.Hour)} {
		if _, err := h.Sweep(ctx, at); err != nil {
			b.Fatal(err)
		}
	}
	d.counts()
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		r := benchRecord(i)
		r.Tag = tag
		r.RequestID, r.ResponseID = fmt.Sprintf("req_%032x", i), fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		if i%10 == 9 {
			r.Outcome, r.Err = completions.RequestFailed, errors.New("every model failed")
		}
		h.ObserveRequest(ctx, r)
		n++
		if i%256 == 255 {
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := h.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(total(d.counts()))/float64(n), "keys/req")
}
