package completions

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func review18aVec(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return normalize(v)
}

// TestReview18aSlabShrinksWithItsEntries: a scope that once held many vectors and now
// holds one (expiry, eviction under MaxTotalVectors, answers gone) must not keep a slab
// sized for its peak: the old index kept only a slice of pointers at its peak size (8 bytes
// a vector), the slab keeps a byte a dimension of every vector it ever held at once, so the
// memory is no longer bounded by MaxTotalVectors (a hundred scopes that each once held
// 10,000 vectors of 1,536 dimensions keep 1.5 GB of codes for 100 live vectors).
func TestReview18aSlabShrinksWithItsEntries(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x semanticIndex
	now := time.Now()
	const dim, peak = 1536, 2000
	for i := range peak {
		ttl := time.Minute
		if i == peak-1 {
			ttl = time.Hour // one vector outlives the others
		}
		x.add("a.", newSemanticEntry(fmt.Sprintf("a.%d", i), review18aVec(rng, dim), now.Add(ttl)), now, DefaultSemanticVectors, DefaultSemanticTotalVectors)
	}
	now = now.Add(2 * time.Minute)
	s := x.refreshed("a.", nil, now, DefaultSemanticVectors, DefaultSemanticTotalVectors) // prunes the expired
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.entries) != 1 {
		t.Fatalf("%d entries left, want 1", len(s.entries))
	}
	var held int
	for _, b := range s.codes.blocks {
		held += cap(b) * 8
	}
	// one live row of 1,536 bytes: allow generous slack (64 rows' worth)
	if limit := 64 * dim; held > limit {
		t.Fatalf("the slab of a scope holding 1 vector of %d dimensions keeps %d bytes (its peak of %d vectors); want at most %d", dim, held, peak, limit)
	}
}
