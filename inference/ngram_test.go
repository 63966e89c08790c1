package inference

import (
	"context"
	"errors"
	"math"
	"testing"
)

func TestNGramEmbedderFeatures(t *testing.T) {
	ctx := context.Background()
	e, err := NewNGramEmbedder(NGramConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != NGramName || e.Dim() != DefaultNGramDims {
		t.Fatalf("Name %q Dim %d", e.Name(), e.Dim())
	}
	if _, err := e.Embed(ctx, []string{"x"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unfitted Embed: %v", err)
	}
	train := []string{"the cat sat", "the dog sat", "a cat ran", "The  CAT\tsat"}
	if err := e.Fit(ctx, train); err != nil {
		t.Fatal(err)
	}
	vs, err := e.Embed(ctx, append(train, "", "zebra"))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs[:4] {
		if !v.Sparse() || math.Abs(v.Norm()-1) > 1e-6 {
			t.Fatalf("vector %d: sparse %v norm %v", i, v.Sparse(), v.Norm())
		}
		for j := 1; j < len(v.Indices); j++ {
			if v.Indices[j] <= v.Indices[j-1] {
				t.Fatalf("vector %d indices not ascending", i)
			}
		}
	}
	// Case and whitespace are normalised: texts 0 and 3 embed identically.
	if !equalVec(vs[0], vs[3]) {
		t.Fatal("case/whitespace normalisation failed")
	}
	// Features: 3 word unigrams + 2 bigrams + char 3..5-grams of " the cat sat " (13 runes):
	// 11+10+9 = 30, at most 35 buckets (fewer if n-grams repeat or collide), plus 8 shape
	// features.
	bare, _ := NewNGramEmbedder(NGramConfig{NoShape: true})
	tf, _ := bare.termFrequencies("the cat sat", nil)
	if n := len(tf.Indices); n < 30 || n > 35 {
		t.Fatalf("%d features for %q without shape features", n, "the cat sat")
	}
	withShape, _ := e.termFrequencies("the cat sat", nil)
	if n := len(withShape.Indices) - len(tf.Indices); n < 6 || n > 8 {
		t.Fatalf("%d shape features for %q, want 8 (6 or 7 when they collide)", n, "the cat sat")
	}
	// Repeated n-grams get sublinear weight 1+ln(count).
	tf2, _ := e.termFrequencies("cat cat cat cat", nil)
	mx := float32(0)
	for _, v := range tf2.Values {
		mx = max(mx, v)
	}
	if math.Abs(float64(mx)-(1+math.Log(4))) > 1e-6 {
		t.Fatalf("max tf %v, want 1+ln 4", mx)
	}
	// The empty text embeds to an empty (zero) vector, not NaN.
	if vs[4].Len() != 0 {
		t.Fatalf("empty text: %v", vs[4])
	}
	// Rarer n-grams weigh more: "dog" appears in one training text, "sat" in three.
	dog := dotVec(vs[1], mustEmbed(t, e, "dog"))
	sat := dotVec(vs[1], mustEmbed(t, e, "sat"))
	if dog <= sat {
		t.Fatalf("idf not applied: dog %v <= sat %v", dog, sat)
	}
}

func TestNGramSeedAndDimsChangeHashing(t *testing.T) {
	a, _ := NewNGramEmbedder(NGramConfig{Seed: 1})
	b, _ := NewNGramEmbedder(NGramConfig{Seed: 2})
	c, _ := NewNGramEmbedder(NGramConfig{Dims: 1 << 10})
	ta, _ := a.termFrequencies("hello world", nil)
	tb, _ := b.termFrequencies("hello world", nil)
	tc, _ := c.termFrequencies("hello world", nil)
	if equalVec(ta, tb) {
		t.Fatal("seed does not change the hashing")
	}
	for _, ix := range tc.Indices {
		if ix >= 1<<10 {
			t.Fatalf("index %d beyond Dims", ix)
		}
	}
	if _, err := NewNGramEmbedder(NGramConfig{Dims: 3}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("tiny dims: %v", err)
	}
	if _, err := NewNGramEmbedder(NGramConfig{MinChar: 5, MaxChar: 3}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("bad char range: %v", err)
	}
}

func TestNGramEmbedStopsOnCancel(t *testing.T) {
	e, _ := NewNGramEmbedder(NGramConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.Fit(ctx, []string{"a", "b"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func mustEmbed(t *testing.T, e Embedder, text string) Vector {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

func equalVec(a, b Vector) bool {
	if len(a.Indices) != len(b.Indices) || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Indices {
		if a.Indices[i] != b.Indices[i] {
			return false
		}
	}
	for i := range a.Values {
		if a.Values[i] != b.Values[i] {
			return false
		}
	}
	return true
}

func dotVec(a, b Vector) float64 {
	m := map[int32]float32{}
	for i, ix := range b.Indices {
		m[ix] = b.Values[i]
	}
	var s float64
	for i, ix := range a.Indices {
		s += float64(a.Values[i] * m[ix])
	}
	return s
}
