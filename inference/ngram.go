package inference

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// NGramName is the name of the hashed n-gram TF-IDF embedder.
const NGramName = "ngram-tfidf-v1"

// Defaults of NGramConfig.
const (
	DefaultNGramDims = 1 << 18
	DefaultNGramSeed = 0x5eed_1dea_c0ffee
)

// NGramConfig configures the n-gram embedder. The zero value means the defaults: 2^18
// hashed dimensions, word uni- and bigrams, character 3- to 5-grams and shape features.
type NGramConfig struct {
	// Dims is the number of hash buckets (dimensions). 0 means DefaultNGramDims.
	Dims int
	// Seed perturbs the hash function. 0 means DefaultNGramSeed.
	Seed uint64
	// MinChar and MaxChar bound the character n-gram lengths. 0 means 3 and 5.
	MinChar, MaxChar int
	// MaxWord is the longest word n-gram. 0 means 2 (uni- and bigrams).
	MaxWord int
	// NoShape leaves out the shape features: coarse, log-scale buckets
	// of a text's length, word and line counts, share of digits, counts of '$', '(' and
	// '?', and whether it holds a code block. Routers saved before shape features existed
	// load with NoShape set, so they embed exactly as they did.
	NoShape bool
}

func (c NGramConfig) withDefaults() NGramConfig {
	if c.Dims == 0 {
		c.Dims = DefaultNGramDims
	}
	if c.Seed == 0 {
		c.Seed = DefaultNGramSeed
	}
	if c.MinChar == 0 {
		c.MinChar = 3
	}
	if c.MaxChar == 0 {
		c.MaxChar = 5
	}
	if c.MaxWord == 0 {
		c.MaxWord = 2
	}
	return c
}

func (c NGramConfig) validate() error {
	switch {
	case c.Dims < 16 || c.Dims > 1<<24:
		return invalid("ngram.Dims", "must be between 16 and 2^24, got %d", c.Dims)
	case c.MinChar < 1 || c.MaxChar < c.MinChar || c.MaxChar > 10:
		return invalid("ngram.MinChar", "need 1 <= MinChar <= MaxChar <= 10, got %d..%d", c.MinChar, c.MaxChar)
	case c.MaxWord < 1 || c.MaxWord > 4:
		return invalid("ngram.MaxWord", "must be between 1 and 4, got %d", c.MaxWord)
	}
	return nil
}

// NGramEmbedder is the default, pure-Go embedder: hashed word n-grams plus character
// n-grams plus shape features, sublinear term frequency (1+ln tf), smoothed IDF fitted on
// training texts (ln((1+n)/(1+df))+1, as scikit-learn), L2-normalised, sparse.
//
// The shape features carry what the normalisation removes: how long and how formal a
// text is, which predicts how hard a prompt is beyond its words (on llmrouter9 they cut
// the quality heads' cross-validated log loss by 0.6-1%; BENCHMARKS.md).
//
// Create it with NewNGramEmbedder, then Fit it before calling Embed (a saved Model restores
// its fitted embedder). A fitted embedder is immutable and safe for concurrent use.
type NGramEmbedder struct {
	cfg  NGramConfig
	docs int
	// dfIndex/df hold the document frequencies of the buckets seen while fitting, ascending.
	dfIndex []int32
	df      []int32
	idf     []float32 // dense, derived from docs and df
}

// NewNGramEmbedder returns an unfitted n-gram embedder.
func NewNGramEmbedder(cfg NGramConfig) (*NGramEmbedder, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &NGramEmbedder{cfg: cfg}, nil
}

// Name returns NGramName.
func (e *NGramEmbedder) Name() string { return NGramName }

// Dim returns the number of hash buckets.
func (e *NGramEmbedder) Dim() int { return e.cfg.Dims }

// Config returns the embedder's configuration with defaults filled in.
func (e *NGramEmbedder) Config() NGramConfig { return e.cfg }

// Fitted reports whether the IDF has been fitted.
func (e *NGramEmbedder) Fitted() bool { return e.idf != nil }

// Fit fits the IDF on texts.
func (e *NGramEmbedder) Fit(ctx context.Context, texts []string) error {
	tf, err := e.raw(ctx, texts)
	if err != nil {
		return err
	}
	e.fitCounts(tf)
	return nil
}

// Embed returns the TF-IDF vectors of texts. The embedder must be fitted.
func (e *NGramEmbedder) Embed(ctx context.Context, texts []string) ([]Vector, error) {
	if !e.Fitted() {
		return nil, invalid("embedder", "%s is not fitted", NGramName)
	}
	tf, err := e.raw(ctx, texts)
	if err != nil {
		return nil, err
	}
	return e.finish(tf), nil
}

func (e *NGramEmbedder) cacheNamespace() string {
	c := e.cfg
	ns := fmt.Sprintf("%s/tf/d%d-s%x-c%d-%d-w%d", NGramName, c.Dims, c.Seed, c.MinChar, c.MaxChar, c.MaxWord)
	if !c.NoShape {
		ns += "-shape"
	}
	return ns
}

// raw returns sublinear term-frequency vectors (no IDF, not normalised).
func (e *NGramEmbedder) raw(ctx context.Context, texts []string) ([]Vector, error) {
	out := make([]Vector, len(texts))
	var scratch []int32
	for i, t := range texts {
		if i%embedBatchSize == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i], scratch = e.termFrequencies(t, scratch[:0])
	}
	return out, nil
}

// fitCounts fits the IDF from raw term-frequency vectors of the training documents.
func (e *NGramEmbedder) fitCounts(tf []Vector) {
	counts := make([]int32, e.cfg.Dims)
	for _, v := range tf {
		for _, ix := range v.Indices {
			counts[ix]++
		}
	}
	e.docs = len(tf)
	e.dfIndex, e.df = nil, nil
	for ix, c := range counts {
		if c > 0 {
			e.dfIndex = append(e.dfIndex, int32(ix))
			e.df = append(e.df, c)
		}
	}
	e.computeIDF()
}

func (e *NGramEmbedder) computeIDF() {
	n := float64(e.docs)
	idf := make([]float32, e.cfg.Dims)
	unseen := float32(math.Log(1+n) + 1)
	for i := range idf {
		idf[i] = unseen
	}
	for k, ix := range e.dfIndex {
		idf[ix] = float32(math.Log((1+n)/(1+float64(e.df[k]))) + 1)
	}
	e.idf = idf
}

// finish applies the IDF and normalises, in place.
func (e *NGramEmbedder) finish(tf []Vector) []Vector {
	for _, v := range tf {
		for k, ix := range v.Indices {
			v.Values[k] *= e.idf[ix]
		}
		v.normalize()
	}
	return tf
}

// termFrequencies hashes the n-grams of text into a sparse vector of 1+ln(count).
func (e *NGramEmbedder) termFrequencies(text string, buckets []int32) (Vector, []int32) {
	norm, words := normalizeText(text)
	dims := uint64(e.cfg.Dims)
	seed := e.cfg.Seed
	// Word n-grams: words joined by a space, tagged 'w'.
	for n := 1; n <= e.cfg.MaxWord; n++ {
		for i := 0; i+n <= len(words); i++ {
			h := hashInit(seed, 'w', byte(n))
			for j := i; j < i+n; j++ {
				if j > i {
					h = hashByte(h, ' ')
				}
				h = hashString(h, words[j])
			}
			buckets = append(buckets, int32(hashFinish(h)%dims))
		}
	}
	// Character n-grams over the normalised text padded with spaces, tagged 'c'.
	padded := " " + norm + " "
	offs := make([]int, 0, len(padded)+1)
	for i := range padded {
		offs = append(offs, i)
	}
	offs = append(offs, len(padded))
	runes := len(offs) - 1
	for n := e.cfg.MinChar; n <= e.cfg.MaxChar; n++ {
		for i := 0; i+n <= runes; i++ {
			h := hashInit(seed, 'c', byte(n))
			h = hashString(h, padded[offs[i]:offs[i+n]])
			buckets = append(buckets, int32(hashFinish(h)%dims))
		}
	}
	if !e.cfg.NoShape && norm != "" {
		buckets = shapeBuckets(text, words, seed, dims, buckets)
	}
	slices.Sort(buckets)
	var v Vector
	for i := 0; i < len(buckets); {
		j := i
		for j < len(buckets) && buckets[j] == buckets[i] {
			j++
		}
		v.Indices = append(v.Indices, buckets[i])
		v.Values = append(v.Values, float32(1+math.Log(float64(j-i))))
		i = j
	}
	if v.Indices == nil {
		v.Indices = []int32{}
	}
	return v, buckets
}

// normalizeText lowercases text, collapses whitespace and returns it with its words
// (maximal runs of letters, digits and marks).
func normalizeText(text string) (string, []string) {
	var b strings.Builder
	b.Grow(len(text))
	space := false
	for _, r := range text {
		if r == utf8.RuneError || unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(unicode.ToLower(r))
	}
	norm := b.String()
	words := strings.FieldsFunc(norm, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	return norm, words
}

// FNV-1a 64 with the seed and a tag mixed into the offset basis, finished with the
// splitmix64 finalizer for good bucket spread. Fixed forever: changing it changes
// NGramName's meaning.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func hashInit(seed uint64, tag, n byte) uint64 {
	h := uint64(fnvOffset) ^ seed
	h = hashByte(h, tag)
	return hashByte(h, n)
}

func hashByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashFinish(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
