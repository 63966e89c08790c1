package inference

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
)

// fakeDriver is an in-memory store.Driver for these tests (the package must not depend on
// another package's test helpers). Update is all-or-nothing by copying the map.
type fakeDriver struct {
	mu   sync.Mutex
	data map[string][]byte
	puts int
}

func newFakeStore() (*store.Store, *fakeDriver) {
	d := &fakeDriver{data: map[string][]byte{}}
	return store.New(d), d
}

func (d *fakeDriver) Get(_ context.Context, c store.Collection, key string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.data[string(c)+"\x00"+key]
	if !ok {
		return nil, store.ErrNotFound
	}
	return slices.Clone(v), nil
}

func (d *fakeDriver) List(_ context.Context, c store.Collection, opts store.ListOptions) ([]store.Entry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []store.Entry
	for k, v := range d.data {
		col, key, _ := strings.Cut(k, "\x00")
		if col == string(c) && strings.HasPrefix(key, opts.Prefix) && key > opts.After {
			out = append(out, store.Entry{Key: key, Value: slices.Clone(v)})
		}
	}
	slices.SortFunc(out, func(a, b store.Entry) int { return strings.Compare(a.Key, b.Key) })
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

func (d *fakeDriver) Put(_ context.Context, c store.Collection, key string, value []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.data[string(c)+"\x00"+key] = slices.Clone(value)
	d.puts++
	return nil
}

func (d *fakeDriver) Delete(_ context.Context, c store.Collection, key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.data, string(c)+"\x00"+key)
	return nil
}

func (d *fakeDriver) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	tx := &fakeDriver{data: map[string][]byte{}}
	d.mu.Lock()
	for k, v := range d.data {
		tx.data[k] = v
	}
	d.mu.Unlock()
	if err := fn(tx); err != nil {
		return err
	}
	d.mu.Lock()
	d.data = tx.data
	d.puts += tx.puts
	d.mu.Unlock()
	return nil
}

func (d *fakeDriver) Close() error { return nil }

// countingCache wraps a cache and counts hits and misses.
type countingCache struct {
	EmbeddingCache
	hits, misses int
}

func (c *countingCache) Lookup(ctx context.Context, ns string, keys []string) ([]Vector, []bool, error) {
	v, found, err := c.EmbeddingCache.Lookup(ctx, ns, keys)
	for _, f := range found {
		if f {
			c.hits++
		} else {
			c.misses++
		}
	}
	return v, found, err
}

func TestRetrainUsesEmbeddingCache(t *testing.T) {
	ctx := context.Background()
	s, d := newFakeStore()
	cache := &countingCache{EmbeddingCache: NewStoreCache(s)}
	ex := syntheticExamples(45)
	m1, rep1, err := Fit(ctx, ex, FitOptions{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if rep1.ComputedTexts != 45 || rep1.CachedTexts != 0 || cache.misses != 45 {
		t.Fatalf("first fit: computed %d cached %d misses %d", rep1.ComputedTexts, rep1.CachedTexts, cache.misses)
	}
	entries, _ := s.List(ctx, store.EmbeddingCache, store.ListOptions{Prefix: NGramName + "/"})
	if len(entries) != 45 {
		t.Fatalf("%d cache entries, want 45", len(entries))
	}
	m2, rep2, err := Fit(ctx, ex, FitOptions{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.ComputedTexts != 0 || rep2.CachedTexts != 45 || cache.hits != 45 {
		t.Fatalf("retrain: computed %d cached %d hits %d, want 0/45/45", rep2.ComputedTexts, rep2.CachedTexts, cache.hits)
	}
	// Cached embeddings give the very same model.
	b1, _ := m1.MarshalBinary()
	b2, _ := m2.MarshalBinary()
	if string(b1) != string(b2) {
		t.Fatal("a retrain from the cache produced a different model")
	}
	// A retrain on more rows computes only the new texts (duplicates once).
	more := append(slices.Clone(ex), Example{Text: "brand new prompt", Labels: []string{"acme/coder"}},
		Example{Text: "brand new prompt", Labels: []string{"acme/poet"}})
	_, rep3, err := Fit(ctx, more, FitOptions{Cache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if rep3.ComputedTexts != 1 || rep3.CachedTexts != 45 {
		t.Fatalf("incremental: computed %d cached %d, want 1/45", rep3.ComputedTexts, rep3.CachedTexts)
	}
	_ = d
}

func TestStoreCacheRoundTripAndCorruption(t *testing.T) {
	ctx := context.Background()
	s, _ := newFakeStore()
	c := NewStoreCache(s)
	sparse := Vector{Indices: []int32{3, 70000}, Values: []float32{0.6, -0.8}}
	dense := Vector{Values: []float32{1, 2, 3}}
	if err := c.Save(ctx, "ns", []string{"k1", "k2"}, []Vector{sparse, dense}); err != nil {
		t.Fatal(err)
	}
	got, found, err := c.Lookup(ctx, "ns", []string{"k1", "k2", "k3"})
	if err != nil {
		t.Fatal(err)
	}
	if !found[0] || !found[1] || found[2] {
		t.Fatalf("found = %v", found)
	}
	if !slices.Equal(got[0].Indices, sparse.Indices) || !slices.Equal(got[0].Values, sparse.Values) ||
		got[1].Sparse() || !slices.Equal(got[1].Values, dense.Values) {
		t.Fatalf("got %v", got)
	}
	// Another namespace does not see them.
	if _, found, _ := c.Lookup(ctx, "other", []string{"k1"}); found[0] {
		t.Fatal("namespaces leak")
	}
	// A corrupt entry is treated as a miss.
	s.Put(ctx, store.EmbeddingCache, "ns/k1", []byte{1, 200})
	if _, found, _ := c.Lookup(ctx, "ns", []string{"k1"}); found[0] {
		t.Fatal("corrupt entry returned")
	}
	if err := c.Save(ctx, "ns", []string{"a"}, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("mismatched Save: %v", err)
	}
}
