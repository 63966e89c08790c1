package completions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// DefaultSimilarityThreshold is SemanticCacheOptions.Threshold when it is 0: the value
// LiteLLM's documentation configures its redis-semantic and qdrant-semantic caches with
// (LiteLLM itself requires one to be given).
const DefaultSimilarityThreshold = 0.8

// DefaultSemanticVectors is SemanticCacheOptions.MaxVectors when it is 0.
const DefaultSemanticVectors = 10_000

// MaxSemanticText bounds the text of a conversation that is embedded (in bytes): a longer
// conversation is not semantically cached (an embedding model takes some 8k tokens, and
// cutting the text would lose what tells two conversations apart).
const MaxSemanticText = 32 << 10

// SemanticCacheOptions turn on the semantic response cache (LiteLLM's redis-semantic and
// qdrant-semantic caches): a chat request that the exact cache misses is answered from the
// cache when a request of the same caller, namespace, models, system prompts, roles and
// parameters was answered before whose conversation text is close enough in meaning —
// the cosine similarity of their embeddings at least Threshold.
type SemanticCacheOptions struct {
	// Model is the embedding model ("provider/model", a bare catalogued name or a model
	// group), called through the gateway's embeddings path: the call is accounted to the
	// caller as any embeddings request. Empty turns semantic matching off.
	Model string
	// Threshold is the least cosine similarity of a hit, in (0, 1] (LiteLLM's
	// similarity_threshold); 0 means DefaultSimilarityThreshold. A request may say its own
	// (CacheControl.SimilarityThreshold).
	Threshold float64
	// MaxVectors bounds the vectors searched per scope (caller, namespace, models,
	// parameters and system prompts); beyond it the least recently used is dropped from the
	// index (its answer stays for exact hits). 0 means DefaultSemanticVectors.
	MaxVectors int
	// Dimensions shortens the vectors where the model allows it (OpenAI's text-embedding-3
	// models): the search reads every vector of a scope, so its time is proportional to
	// their size (BENCHMARKS.md, "Semantic cache"). 0 keeps the model's size.
	Dimensions int
	// Refresh is how often a scope's index is read again from a driver that can list its
	// entries (CacheLister: StoreCache), to find the vectors other replicas added; 0 means a
	// minute. A scope is always read at its first use, so a restart finds its vectors.
	Refresh time.Duration
}

// CacheEntry is an entry of a CacheDriver, as CacheLister lists it.
type CacheEntry struct {
	Key             string
	Value           []byte
	Stored, Expires time.Time
}

// CacheLister is a CacheDriver that can list its entries by key prefix; the semantic
// cache reads its vectors back from one after a restart or another replica's writes.
// StoreCache implements it; cachetest checks it.
type CacheLister interface {
	// ListPrefix returns up to limit entries whose key starts with prefix and that have not
	// expired by now, in no promised order.
	ListPrefix(ctx context.Context, prefix string, now time.Time, limit int) ([]CacheEntry, error)
}

// semanticPlan is what a plan knows of the semantic cache.
type semanticPlan struct {
	scope string    // the index's key prefix: "<owner>.<namespace>.v<scope hash>."
	vec   []float32 // the conversation's embedding, unit length (nil: not embedded)
	// hit: the similarity of the answer found and its key.
	similarity float64
	hitKey     string
}

// semanticEntry is a vector in the index: the key of the answer it leads to.
type semanticEntry struct {
	answerKey string
	vec       []float32
	expires   time.Time
	used      atomic.Int64 // tick of the last hit or insert (least recently used goes first)
}

// semanticScope is the index of one scope's vectors.
type semanticScope struct {
	mu      sync.RWMutex
	loaded  time.Time
	latest  time.Time // the latest expiry of its entries: past it the scope is dropped
	entries []*semanticEntry
	byKey   map[string]int // answer key -> index in entries
}

// semanticIndex is the gateway's in-memory vector index: brute-force cosine over each
// scope's vectors.
type semanticIndex struct {
	mu     sync.Mutex
	scopes map[string]*semanticScope
	tick   atomic.Int64
}

// scope returns the index of the scope of key prefix prefix. Making a new one drops the
// scopes whose every vector expired by now, so that the index holds no more than the
// live scopes' vectors.
func (x *semanticIndex) scope(prefix string, now time.Time) *semanticScope {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.scopes == nil {
		x.scopes = map[string]*semanticScope{}
	}
	s := x.scopes[prefix]
	if s == nil {
		for p, old := range x.scopes {
			old.mu.RLock()
			gone := !old.loaded.IsZero() || len(old.entries) > 0
			gone = gone && !now.Before(old.latest) && now.Sub(old.loaded) > time.Minute
			old.mu.RUnlock()
			if gone {
				delete(x.scopes, p)
			}
		}
		s = &semanticScope{byKey: map[string]int{}}
		x.scopes[prefix] = s
	}
	return s
}

// purged drops the scopes whose prefix starts with prefix (PurgeCache), or the entry of
// the answer key prefix is (DeleteCached).
func (x *semanticIndex) purged(prefix string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for p, s := range x.scopes {
		if strings.HasPrefix(p, prefix) {
			delete(x.scopes, p)
			continue
		}
		if len(p) >= 34 && strings.HasPrefix(prefix, p[:34]) { // an answer of this owner and namespace
			s.remove(prefix)
		}
	}
}

// nearest returns the entry most similar to vec (unit length) not expired by now, and
// its similarity; nil when there is none.
func (s *semanticScope) nearest(vec []float32, now time.Time) (*semanticEntry, float64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var best *semanticEntry
	bestSim := math.Inf(-1)
	for _, e := range s.entries {
		if len(e.vec) != len(vec) || !now.Before(e.expires) {
			continue
		}
		if sim := dot(e.vec, vec); sim > bestSim {
			best, bestSim = e, sim
		}
	}
	return best, bestSim
}

// dot is the dot product of two vectors of the same length (b at least as long as a),
// eight lanes at a time without bounds checks.
func dot(a, b []float32) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(a) >= 8 && len(b) >= 8 {
		s0 += a[0] * b[0]
		s1 += a[1] * b[1]
		s2 += a[2] * b[2]
		s3 += a[3] * b[3]
		s4 += a[4] * b[4]
		s5 += a[5] * b[5]
		s6 += a[6] * b[6]
		s7 += a[7] * b[7]
		a, b = a[8:], b[8:]
	}
	for i := range a {
		s0 += a[i] * b[i]
	}
	return float64((s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7))
}

// add puts e in the index (replacing the entry of the same answer), dropping the least
// recently used beyond max.
func (s *semanticScope) add(e *semanticEntry, max int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.expires.After(s.latest) {
		s.latest = e.expires
	}
	if i, ok := s.byKey[e.answerKey]; ok {
		s.entries[i] = e
		return
	}
	if len(s.entries) >= max {
		oldest := 0
		for i, x := range s.entries {
			if x.used.Load() < s.entries[oldest].used.Load() {
				oldest = i
			}
		}
		s.removeAt(oldest)
	}
	s.byKey[e.answerKey] = len(s.entries)
	s.entries = append(s.entries, e)
}

func (s *semanticScope) remove(answerKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byKey[answerKey]; ok {
		s.removeAt(i)
	}
}

func (s *semanticScope) removeAt(i int) {
	last := len(s.entries) - 1
	delete(s.byKey, s.entries[i].answerKey)
	if i != last {
		s.entries[i] = s.entries[last]
		s.byKey[s.entries[i].answerKey] = i
	}
	s.entries[last] = nil
	s.entries = s.entries[:last]
}

// semanticVector is the value of a vector's cache entry.
type semanticVector struct {
	AnswerKey string `json:"k"`
	Vector    []byte `json:"v"` // little-endian float32s, unit length
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// normalize returns v scaled to unit length, or nil when it is zero or not finite.
func normalize(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(float64(f) / n)
	}
	return out
}

// semanticText is the text of p's conversation that is embedded — its messages other than
// system (and developer) ones, in order, one "role: text" line each — and whether p can be
// semantically cached: no tools, no images, files or audio, no tool calls or results, no
// more than MaxSemanticText. The system prompts are part of the scope instead, so that a
// different system prompt never matches.
func semanticText(p *plan) (string, bool) {
	if len(p.preq.Tools) > 0 {
		return "", false
	}
	var b strings.Builder
	for _, m := range p.preq.Messages {
		if len(m.Parts) > 0 || len(m.ToolCalls) > 0 || m.ToolCallID != "" || m.Role == "tool" {
			return "", false
		}
		if m.Role == "system" || m.Role == "developer" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(m.Content)
	}
	if b.Len() == 0 || b.Len() > MaxSemanticText {
		return "", false
	}
	return b.String(), true
}

// semanticScopeOf is the key prefix of p's scope: a hash of everything the exact key
// covers except the text of the messages other than system ones (their roles stay), with
// the embedding model.
func (g *Gateway) semanticScopeOf(p *plan, primary, fallback []target) string {
	preq := p.preq
	preq.Messages = make([]providers.Message, len(p.preq.Messages))
	for i, m := range p.preq.Messages {
		if m.Role == "system" || m.Role == "developer" {
			preq.Messages[i] = m
		} else {
			preq.Messages[i] = providers.Message{Role: m.Role}
		}
	}
	key := g.requestKey(p, primary, fallback, preq, g.opts.Cache.Semantic.Model)
	if key == "" {
		return ""
	}
	// "<owner>.<namespace>.v<16 of the hash>."
	return key[:34] + "v" + key[34:50] + "."
}

// lookupSemantic looks p up in the semantic index when the exact cache missed: it embeds
// the conversation (an embeddings request of the caller's) and takes the nearest answer of
// the scope at least as similar as the threshold. An embedding or driver failure is a miss
// (logged). The embedding is kept in p for storeAnswer.
func (g *Gateway) lookupSemantic(ctx context.Context, p *plan, primary, fallback []target) {
	c := &p.cache
	o := g.opts.Cache.Semantic
	if o == nil || o.Model == "" || c.key == "" || c.bypass || c.hit != nil || c.ctl.NoSemantic {
		return
	}
	text, ok := semanticText(p)
	if !ok {
		return
	}
	scope := g.semanticScopeOf(p, primary, fallback)
	if scope == "" {
		return
	}
	ereq := &EmbeddingsRequest{Model: o.Model, Input: EmbeddingInput{Texts: []string{text}}, Tags: p.req.Tags,
		Cache: &CacheControl{Namespace: c.ctl.Namespace}}
	if o.Dimensions > 0 {
		ereq.Dimensions = &o.Dimensions
	}
	er, err := g.Embed(ctx, p.scope, ereq)
	if err != nil || len(er.Data) != 1 {
		g.log.WarnContext(ctx, "completions: embedding a request for the semantic cache; answered as a miss", "model", o.Model, "err", err)
		return
	}
	vec := normalize(er.Data[0].Embedding.Values)
	if vec == nil {
		return
	}
	c.sem = &semanticPlan{scope: scope, vec: vec}
	if c.ctl.NoStore && c.ctl.NoCache {
		return
	}
	now := g.opts.Now()
	s := g.semantic.scope(scope, now)
	g.loadSemantic(ctx, s, scope, now)
	threshold := o.Threshold
	if c.ctl.SimilarityThreshold != nil {
		threshold = *c.ctl.SimilarityThreshold
	}
	for range 3 { // an entry whose answer is gone is dropped and the next nearest tried
		e, sim := s.nearest(vec, now)
		if e == nil || sim < threshold-1e-6 {
			return
		}
		v, stored, err := g.opts.Cache.Driver.Get(ctx, e.answerKey, now)
		if err != nil {
			if !errors.Is(err, ErrCacheMiss) {
				g.log.WarnContext(ctx, "completions: reading the response cache", "err", err)
				return
			}
			s.remove(e.answerKey)
			continue
		}
		if c.ctl.MaxAge > 0 && now.Sub(stored) > time.Duration(c.ctl.MaxAge*float64(time.Second)) {
			return
		}
		var a cachedAnswer
		if err := json.Unmarshal(v, &a); err != nil || !strings.Contains(a.Model, "/") {
			g.log.WarnContext(ctx, "completions: a response cache entry that does not decode", "err", err)
			return
		}
		e.used.Store(g.semantic.tick.Add(1))
		c.hit = &cacheHit{answer: a, stored: stored}
		c.sem.similarity, c.sem.hitKey = math.Min(sim, 1), e.answerKey
		return
	}
}

// loadSemantic reads scope's vectors from the driver when it can list them (CacheLister)
// and the scope was not read within the refresh interval.
func (g *Gateway) loadSemantic(ctx context.Context, s *semanticScope, scope string, now time.Time) {
	l, ok := g.opts.Cache.Driver.(CacheLister)
	if !ok {
		return
	}
	o := g.opts.Cache.Semantic
	s.mu.RLock()
	fresh := !s.loaded.IsZero() && now.Sub(s.loaded) < o.Refresh
	s.mu.RUnlock()
	if fresh {
		return
	}
	entries, err := l.ListPrefix(ctx, scope, now, o.MaxVectors)
	if err != nil {
		g.log.WarnContext(ctx, "completions: reading the semantic cache's vectors", "err", err)
		return
	}
	s.mu.Lock()
	s.loaded = now
	s.mu.Unlock()
	for _, e := range entries {
		var sv semanticVector
		if err := json.Unmarshal(e.Value, &sv); err != nil || len(sv.Vector) == 0 || len(sv.Vector)%4 != 0 {
			continue
		}
		s.mu.RLock()
		_, known := s.byKey[sv.AnswerKey]
		s.mu.RUnlock()
		if known {
			continue
		}
		s.add(&semanticEntry{answerKey: sv.AnswerKey, vec: decodeVector(sv.Vector), expires: e.Expires}, o.MaxVectors)
	}
}

// storeSemantic is the vector entry of p's answer; ok is false when there is none. The
// vector enters the index once it is written, after the answer (an entry written before
// its answer would be dropped by a lookup that found the answer missing).
func (g *Gateway) storeSemantic(p *plan, ttl time.Duration) (cacheEntry, bool) {
	c := &p.cache
	if c.sem == nil || c.sem.vec == nil {
		return cacheEntry{}, false
	}
	v, err := json.Marshal(semanticVector{AnswerKey: c.key, Vector: encodeVector(c.sem.vec)})
	if err != nil {
		return cacheEntry{}, false
	}
	now := g.opts.Now()
	e := &semanticEntry{answerKey: c.key, vec: c.sem.vec, expires: now.Add(ttl)}
	scope, max := c.sem.scope, g.opts.Cache.Semantic.MaxVectors
	return cacheEntry{key: scope + c.key[34:], v: v, written: func() {
		e.used.Store(g.semantic.tick.Add(1))
		g.semantic.scope(scope, now).add(e, max)
	}}, true
}

// ErrSemanticCacheOptions is what New's error matches when CacheOptions.Semantic is wrong
// (a threshold out of range, a model that is no embedding model).
var ErrSemanticCacheOptions = errors.New("completions: semantic cache options")

// checkSemantic fills in o's defaults and checks its model, for New.
func (g *Gateway) checkSemantic() error {
	o := g.opts.Cache.Semantic
	if o == nil || o.Model == "" {
		return nil
	}
	if !(o.Threshold >= 0 && o.Threshold <= 1) {
		return fmt.Errorf("%w: Threshold must be between 0 and 1, got %v", ErrSemanticCacheOptions, o.Threshold)
	}
	if o.Dimensions < 0 {
		return fmt.Errorf("%w: Dimensions must not be negative, got %d", ErrSemanticCacheOptions, o.Dimensions)
	}
	if _, err := g.embeddingTargets(o.Model); err != nil {
		return fmt.Errorf("%w: Model: %w", ErrSemanticCacheOptions, err)
	}
	return nil
}
