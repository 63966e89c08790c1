package usagelog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store/boltstore"
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
// in batches (Flush every 256, as a busy server's writer commits), on bbolt with fsync.
func BenchmarkHistoryWrite(b *testing.B) {
	ctx := context.Background()
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "switchyard.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	h := NewHistory(st, HistoryOptions{})
	defer h.Close(ctx)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.ObserveRequest(ctx, benchRecord(i))
		if i%256 == 255 {
			if err := h.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := h.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}
