package completions

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkSemanticIndexSearch is what the semantic cache adds to a miss beyond its
// embedding call: the cosine search of a scope's index of n vectors of
// text-embedding-3-small's 1,536 dimensions (or 512, SemanticCacheOptions.Dimensions).
func BenchmarkSemanticIndexSearch(b *testing.B) {
	for _, dim := range []int{1536, 512} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) { benchmarkSemanticIndexSearch(b, dim) })
	}
}

func benchmarkSemanticIndexSearch(b *testing.B, dim int) {
	rng := rand.New(rand.NewPCG(1, 2))
	vector := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return normalize(v)
	}
	now := time.Now()
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("vectors=%d", n), func(b *testing.B) {
			s := &semanticScope{byKey: map[string]int{}}
			for i := range n {
				s.add(newSemanticEntry(fmt.Sprint(i), vector(), now.Add(time.Hour)), DefaultSemanticVectors)
			}
			q := vector()
			// nearest: the most similar whatever it is (only the best so far bounds the
			// scan); miss: a lookup's search at the default threshold that finds none.
			for _, c := range []struct {
				name  string
				floor float64
			}{{"nearest", math.Inf(-1)}, {"miss", DefaultSimilarityThreshold - 1e-6}} {
				b.Run("search="+c.name, func(b *testing.B) {
					for range b.N {
						if e, _ := s.nearestExcept(q, now, nil, c.floor); (e == nil) != (c.name == "miss") {
							b.Fatal("unexpected result")
						}
					}
				})
			}
		})
	}
}
