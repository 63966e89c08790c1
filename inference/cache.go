package inference

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/switchyard-ai/switchyard/store"
)

// EmbeddingCache remembers vectors by embedder namespace and text content hash, so a
// retrain on the same texts does not recompute embeddings. Implementations must be safe
// for concurrent use.
type EmbeddingCache interface {
	// Lookup returns, for each key, the cached vector and whether it was found.
	Lookup(ctx context.Context, namespace string, keys []string) ([]Vector, []bool, error)
	// Save stores vectors under keys, all or nothing.
	Save(ctx context.Context, namespace string, keys []string, vecs []Vector) error
}

// ContentKey is the cache key of a text: the hex SHA-256 of its UTF-8 bytes.
func ContentKey(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// StoreCache is an EmbeddingCache kept in a *store.Store, in the store.EmbeddingCache
// collection under "namespace/content-hash" keys.
type StoreCache struct {
	// Store holds the vectors. It must not be nil.
	Store *store.Store
}

// NewStoreCache returns a cache over s.
func NewStoreCache(s *store.Store) *StoreCache { return &StoreCache{Store: s} }

// Lookup implements EmbeddingCache.
func (c *StoreCache) Lookup(ctx context.Context, namespace string, keys []string) ([]Vector, []bool, error) {
	vecs := make([]Vector, len(keys))
	found := make([]bool, len(keys))
	for i, k := range keys {
		b, err := c.Store.Get(ctx, store.EmbeddingCache, namespace+"/"+k)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("inference: embedding cache lookup: %w", err)
		}
		v, err := decodeVector(b)
		if err != nil {
			continue // a corrupt entry is recomputed and overwritten
		}
		vecs[i], found[i] = v, true
	}
	return vecs, found, nil
}

// Save implements EmbeddingCache; all vectors are written in one transaction.
func (c *StoreCache) Save(ctx context.Context, namespace string, keys []string, vecs []Vector) error {
	if len(keys) != len(vecs) {
		return fmt.Errorf("%w: %d keys for %d vectors", ErrInvalid, len(keys), len(vecs))
	}
	if len(keys) == 0 {
		return nil
	}
	err := c.Store.Update(ctx, func(tx store.Tx) error {
		for i, k := range keys {
			if err := tx.Put(ctx, store.EmbeddingCache, namespace+"/"+k, encodeVector(vecs[i])); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("inference: embedding cache save: %w", err)
	}
	return nil
}

// embedStats counts where embeddings came from.
type embedStats struct {
	computed, cached int
}

// rawCached computes e's raw stage for texts, taking what it can from cache (which may be
// nil) and saving what it computed. Duplicate texts are computed once.
func rawCached(ctx context.Context, e stagedEmbedder, cache EmbeddingCache, texts []string) ([]Vector, embedStats, error) {
	var st embedStats
	out := make([]Vector, len(texts))
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = ContentKey(t)
	}
	ns := e.cacheNamespace()
	found := make([]bool, len(texts))
	if cache != nil {
		vecs, ok, err := cache.Lookup(ctx, ns, keys)
		if err != nil {
			return nil, st, err
		}
		copy(out, vecs)
		copy(found, ok)
	}
	// Compute the missing texts, each distinct text once.
	first := map[string]int{}
	var missTexts, missKeys []string
	for i := range texts {
		if found[i] {
			st.cached++
			continue
		}
		if _, dup := first[keys[i]]; !dup {
			first[keys[i]] = len(missTexts)
			missTexts = append(missTexts, texts[i])
			missKeys = append(missKeys, keys[i])
		}
	}
	if len(missTexts) == 0 {
		return out, st, nil
	}
	var computed []Vector
	for start := 0; start < len(missTexts); start += embedBatchSize {
		if err := ctx.Err(); err != nil {
			return nil, st, err
		}
		end := min(start+embedBatchSize, len(missTexts))
		vs, err := e.raw(ctx, missTexts[start:end])
		if err != nil {
			return nil, st, err
		}
		computed = append(computed, vs...)
	}
	st.computed = len(missTexts)
	if cache != nil {
		if err := cache.Save(ctx, ns, missKeys, computed); err != nil {
			return nil, st, err
		}
	}
	for i := range texts {
		if !found[i] {
			v := computed[first[keys[i]]]
			// Copy so that finishing in place does not alias duplicates.
			out[i] = Vector{Indices: v.Indices, Values: cloneValues(v.Values)}
		}
	}
	return out, st, nil
}

func cloneValues(v []float32) []float32 { return append([]float32(nil), v...) }
