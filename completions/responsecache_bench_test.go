package completions

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/boltstore"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// What the response cache costs a request it cannot answer (a miss: the key's hash and a
// write in the background) and what a hit costs, against the gateway without a cache, on
// an in-memory provider that answers at once (benchGateway's).
func cacheBenchGateway(b *testing.B, d CacheDriver) *Gateway {
	p := newFake("openai").on("gpt-4o-mini", step{text: "Paris is the capital of France and its largest city.", usage: providers.Usage{PromptTokens: 12, CompletionTokens: 10}})
	g, err := New(Options{Providers: fakeRegistry{"openai": p}, Prices: providers.DefaultCatalog(), Store: memstore.New(), Cache: CacheOptions{Driver: d}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close(context.Background()) })
	return g
}

func boltCache(b *testing.B) CacheDriver {
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "cache.db"), boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return NewStoreCache(st)
}

// benchUnique sends a different question each time (every request a miss where cached).
func benchUnique(b *testing.B, g *Gateway) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if _, err := g.Complete(ctx, Scope{Owner: "k"}, chat("What is the capital of France? #"+strconv.Itoa(i), "openai/gpt-4o-mini")); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	g.cacheWrites.wg.Wait()
}

func BenchmarkCompleteUncached(b *testing.B) { benchUnique(b, cacheBenchGateway(b, nil)) }
func BenchmarkCompleteCacheMissMemory(b *testing.B) {
	benchUnique(b, cacheBenchGateway(b, &MemoryCache{}))
}
func BenchmarkCompleteCacheMissBolt(b *testing.B) { benchUnique(b, cacheBenchGateway(b, boltCache(b))) }

// benchHit asks the same question again and again (every request after the first a hit).
func benchHit(b *testing.B, g *Gateway, stream bool) {
	ctx := context.Background()
	ask := func() *CacheStatus {
		req := chat("What is the capital of France?", "openai/gpt-4o-mini")
		if !stream {
			r, err := g.Complete(ctx, Scope{Owner: "k"}, req)
			if err != nil {
				b.Fatal(err)
			}
			return r.Cache
		}
		st, err := g.Stream(ctx, Scope{Owner: "k"}, req)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		for {
			if _, err := st.Recv(); errors.Is(err, io.EOF) {
				return st.Response().Cache
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	ask()
	g.cacheWrites.wg.Wait()
	if c := ask(); c == nil || c.Result != CacheHit {
		b.Fatalf("not a hit: %+v", c)
	}
	b.ReportAllocs()
	for b.Loop() {
		ask()
	}
}

func BenchmarkCompleteCacheHitMemory(b *testing.B) {
	benchHit(b, cacheBenchGateway(b, &MemoryCache{}), false)
}
func BenchmarkCompleteCacheHitBolt(b *testing.B) {
	benchHit(b, cacheBenchGateway(b, boltCache(b)), false)
}
func BenchmarkStreamCacheHitMemory(b *testing.B) {
	benchHit(b, cacheBenchGateway(b, &MemoryCache{}), true)
}
