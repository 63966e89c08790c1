package completions

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkSemanticIndexSearch is what the semantic cache adds to a miss beyond its
// embedding call: the brute-force cosine search of a scope's index of n vectors of
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
				s.add(&semanticEntry{answerKey: fmt.Sprint(i), vec: vector(), expires: now.Add(time.Hour)}, DefaultSemanticVectors)
			}
			q := vector()
			b.ResetTimer()
			for range b.N {
				if e, _ := s.nearest(q, now); e == nil {
					b.Fatal("nothing found")
				}
			}
		})
	}
}
