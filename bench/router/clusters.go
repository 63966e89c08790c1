package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"github.com/switchyard-ai/switchyard/inference"
)

// clusters is -clusters: for rows without task labels, label the training rows of each
// fold with pseudo-tasks, their cluster among this many (spherical k-means on the n-gram
// TF-IDF vectors), so that Fit learns a task head, a prior and experts over them.
var clusters int

// pseudoTasks returns train with each row's Task set to its cluster ("c0", "c1", …) among
// k, from spherical k-means (k-means++ seeding with a fixed seed, 25 rounds).
func pseudoTasks(ctx context.Context, train []inference.Example, k int, cfg inference.NGramConfig) []inference.Example {
	e, err := inference.NewNGramEmbedder(cfg)
	if err != nil {
		log.Fatal(err)
	}
	texts := make([]string, len(train))
	for i, ex := range train {
		texts[i] = ex.Text
	}
	if err := e.Fit(ctx, texts); err != nil {
		log.Fatal(err)
	}
	xs, err := e.Embed(ctx, texts)
	if err != nil {
		log.Fatal(err)
	}
	dim := e.Dim()
	dot := func(x inference.Vector, c []float64) float64 {
		var s float64
		for j, idx := range x.Indices {
			s += float64(x.Values[j]) * c[idx]
		}
		return s
	}
	rng := rand.New(rand.NewPCG(7, uint64(k)))
	cents := make([][]float64, 0, k)
	add := func(x inference.Vector) {
		c := make([]float64, dim)
		for j, idx := range x.Indices {
			c[idx] = float64(x.Values[j])
		}
		cents = append(cents, c)
	}
	add(xs[rng.IntN(len(xs))])
	best := make([]float64, len(xs)) // similarity to the nearest centroid so far
	for i := range best {
		best[i] = math.Inf(-1)
	}
	for len(cents) < k {
		var total float64
		d := make([]float64, len(xs))
		for i, x := range xs {
			best[i] = math.Max(best[i], dot(x, cents[len(cents)-1]))
			d[i] = math.Max(0, 1-best[i])
			d[i] *= d[i]
			total += d[i]
		}
		r := rng.Float64() * total
		pick := len(xs) - 1
		for i := range d {
			if r -= d[i]; r <= 0 {
				pick = i
				break
			}
		}
		add(xs[pick])
	}
	assign := make([]int, len(xs))
	for round := 0; round < 25; round++ {
		moved := 0
		for i, x := range xs {
			bi, bs := 0, math.Inf(-1)
			for c := range cents {
				if s := dot(x, cents[c]); s > bs {
					bi, bs = c, s
				}
			}
			if bi != assign[i] || round == 0 {
				moved++
			}
			assign[i] = bi
		}
		for c := range cents {
			clear(cents[c])
		}
		for i, x := range xs {
			c := cents[assign[i]]
			for j, idx := range x.Indices {
				c[idx] += float64(x.Values[j])
			}
		}
		for _, c := range cents {
			var n float64
			for _, v := range c {
				n += v * v
			}
			if n = math.Sqrt(n); n > 0 {
				for j := range c {
					c[j] /= n
				}
			}
		}
		if moved == 0 {
			break
		}
	}
	out := make([]inference.Example, len(train))
	for i, ex := range train {
		ex.Task = fmt.Sprintf("c%d", assign[i])
		out[i] = ex
	}
	return out
}
