package completions

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSimilarityThreshold is SemanticCacheOptions.Threshold when it is 0: the value
// LiteLLM's documentation configures its redis-semantic and qdrant-semantic caches with
// (LiteLLM itself requires one to be given).
const DefaultSimilarityThreshold = 0.8

// DefaultSemanticVectors is SemanticCacheOptions.MaxVectors when it is 0.
const DefaultSemanticVectors = 10_000

// DefaultSemanticTotalVectors is SemanticCacheOptions.MaxTotalVectors when it is 0.
const DefaultSemanticTotalVectors = 100_000

// MaxSemanticText bounds the text that is embedded, the last user message (in bytes): a
// request whose last user message is longer is not semantically cached (an embedding
// model takes some 8k tokens, and cutting the text would lose what tells two apart).
const MaxSemanticText = 32 << 10

// SemanticCacheOptions turn on the semantic response cache (LiteLLM's redis-semantic and
// qdrant-semantic caches): a chat request that the exact cache misses is answered from the
// cache when a request of the same scope was answered before whose last user message is
// close enough in meaning — the cosine similarity of their embeddings at least Threshold.
// The scope must match exactly: the caller, namespace, models and parameters, every
// message but the last user one word for word (system prompts and earlier turns: roles,
// names and text), the last user message's name, and the embedding model that made the
// vector (a model group's members never compare their vectors with each other's).
type SemanticCacheOptions struct {
	// Model is the embedding model ("provider/model", a bare catalogued name or a model
	// group), called through the gateway's embeddings path: the call is accounted to the
	// caller as any embeddings request. Empty turns semantic matching off.
	Model string
	// Threshold is the least cosine similarity of a hit, in (0, 1] (LiteLLM's
	// similarity_threshold); 0 means DefaultSimilarityThreshold. A request may say its own
	// (CacheControl.SimilarityThreshold).
	Threshold float64
	// MaxVectors bounds the vectors searched per scope; beyond it the least recently used
	// is dropped from the index (its answer stays for exact hits). 0 means
	// DefaultSemanticVectors.
	MaxVectors int
	// MaxTotalVectors bounds the vectors the index holds across all its scopes; beyond it
	// the least recently used scope gives up its least recently used vector (and is
	// dropped when it has none left). 0 means DefaultSemanticTotalVectors. A scope is made
	// in the index only when a vector is put in it, and one left with no live vector is
	// dropped within a minute or so.
	MaxTotalVectors int
	// Dimensions shortens the vectors where the model allows it (OpenAI's text-embedding-3
	// models): the search reads a quantised copy of every vector of a scope (most only in
	// part), so its time grows with their size (BENCHMARKS.md, "Semantic cache"). 0 keeps
	// the model's size.
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
	vec   []float32 // the last user message's embedding, unit length (nil: not embedded)
	// hit: the similarity of the answer found and its key.
	similarity float64
	hitKey     string
}

// semanticEntry is a vector in the index: the key of the answer it leads to.
type semanticEntry struct {
	answerKey string
	vec       []float32
	code      semanticCode // vec's quantised copy, which the search scans first
	expires   time.Time
	used      atomic.Int64 // tick of the last hit or insert (least recently used goes first)
}

// semanticScope is the index of one scope's vectors. Its fields are guarded by mu; a scope
// taken out of its index (a purge, the sweep, the overall bound) is emptied and detached
// (total nil), so that a lookup still holding it changes nothing.
type semanticScope struct {
	mu      sync.RWMutex
	created time.Time
	loaded  time.Time // when it was last read from a CacheLister (zero: never)
	entries []*semanticEntry
	codes   semanticCodes  // the entries' quantised copies, in the order of entries
	byKey   map[string]int // answer key -> index in entries
	// gone: the answer keys a lookup found missing (deleted, or dropped by the driver) or
	// DeleteCached deleted, with the expiry of the vector that led there: a listed vector
	// of one is taken back only when it expires later (its answer was made again since).
	gone map[string]time.Time
	// used is the tick of the last hit or insert of any of its vectors: beyond the
	// index's overall bound the least recently used scope gives up a vector first.
	used  atomic.Int64
	total *atomic.Int64 // the index's count of vectors (nil outside an index)
}

// semanticIndex is the gateway's in-memory vector index: an exact cosine search of each
// scope's vectors (nearestBounded: what brute force finds, reading mostly a 7-bit copy). A scope is made only when a vector is put in it (a lookup never makes
// one), and the scopes left with no live vector are dropped (sweep).
type semanticIndex struct {
	mu     sync.Mutex
	scopes map[string]*semanticScope
	swept  time.Time
	tick   atomic.Int64
	total  atomic.Int64 // vectors across the scopes
}

// semanticSweepEvery is how often the index drops its expired vectors and the scopes left
// empty (a scope made within it is kept, so that one being filled is not dropped).
const semanticSweepEvery = time.Minute

// get returns the index of the scope of key prefix prefix, nil when there is none.
func (x *semanticIndex) get(prefix string) *semanticScope {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.scopes[prefix]
}

// scope returns the index of the scope of key prefix prefix, made if there is none.
func (x *semanticIndex) scope(prefix string, now time.Time) *semanticScope {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.scopeLocked(prefix, now)
}

// scopeLocked is scope with x.mu held. At most every semanticSweepEvery it first drops
// every scope's expired vectors and the scopes left empty.
func (x *semanticIndex) scopeLocked(prefix string, now time.Time) *semanticScope {
	if x.scopes == nil {
		x.scopes = map[string]*semanticScope{}
	}
	if now.Sub(x.swept) >= semanticSweepEvery {
		x.swept = now
		for p, s := range x.scopes {
			s.mu.Lock()
			s.prune(now)
			if p != prefix && len(s.entries) == 0 && now.Sub(s.created) >= semanticSweepEvery {
				delete(x.scopes, p)
				s.detach()
			}
			s.mu.Unlock()
		}
	}
	s := x.scopes[prefix]
	if s == nil {
		s = &semanticScope{created: now, byKey: map[string]int{}, total: &x.total}
		s.used.Store(x.tick.Add(1))
		x.scopes[prefix] = s
	}
	return s
}

// add puts e in the scope of prefix (made if need be), dropping the least recently used
// vector beyond max in the scope and beyond maxTotal in the index.
func (x *semanticIndex) add(prefix string, e *semanticEntry, now time.Time, max, maxTotal int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.scopeLocked(prefix, now)
	t := x.tick.Add(1)
	e.used.Store(t)
	s.used.Store(t)
	s.add(e, max)
	x.boundLocked(maxTotal)
}

// refreshed merges the vectors listed from the driver for the scope of prefix at now:
// the scope is made only when some were listed; its expired vectors are dropped, a known
// answer's vector is replaced by a listed one that expires later, and a vector of an
// answer found gone is taken back only when it was written again since.
func (x *semanticIndex) refreshed(prefix string, listed []*semanticEntry, now time.Time, max, maxTotal int) *semanticScope {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.scopes[prefix]
	if s == nil && len(listed) == 0 {
		return nil
	}
	s = x.scopeLocked(prefix, now)
	s.mu.Lock()
	s.loaded = now
	s.prune(now)
	for _, e := range listed {
		if at, ok := s.gone[e.answerKey]; ok && !e.expires.After(at) {
			continue
		}
		if i, ok := s.byKey[e.answerKey]; ok {
			if old := s.entries[i]; e.expires.After(old.expires) {
				e.used.Store(old.used.Load())
				s.setAt(i, e)
			}
			continue
		}
		s.addLocked(e, max)
	}
	s.mu.Unlock()
	x.boundLocked(maxTotal)
	return s
}

// boundLocked drops vectors, the least recently used scope's least recently used first,
// until the index holds at most max; a scope left empty is dropped. x.mu is held.
func (x *semanticIndex) boundLocked(max int) {
	for max > 0 && x.total.Load() > int64(max) {
		var lru *semanticScope
		var lruPrefix string
		for p, s := range x.scopes {
			if lru == nil || s.used.Load() < lru.used.Load() {
				lru, lruPrefix = s, p
			}
		}
		if lru == nil {
			return
		}
		lru.mu.Lock()
		if len(lru.entries) > 0 {
			lru.removeAt(lru.oldest())
		}
		if len(lru.entries) == 0 {
			delete(x.scopes, lruPrefix)
			lru.detach()
		}
		lru.mu.Unlock()
	}
}

// purged drops the scopes whose prefix starts with prefix (PurgeCache), or the entry of
// the answer key prefix is (DeleteCached), remembered as gone.
func (x *semanticIndex) purged(prefix string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for p, s := range x.scopes {
		if strings.HasPrefix(p, prefix) {
			delete(x.scopes, p)
			s.mu.Lock()
			s.detach()
			s.mu.Unlock()
			continue
		}
		if len(p) >= 34 && strings.HasPrefix(prefix, p[:34]) { // an answer of this owner and namespace
			s.forget(prefix)
		}
	}
}

// detach empties s, taken out of its index (s.mu held).
func (s *semanticScope) detach() {
	if s.total != nil {
		s.total.Add(-int64(len(s.entries)))
	}
	s.total, s.entries, s.byKey, s.gone = nil, nil, map[string]int{}, nil
	s.codes = semanticCodes{}
}

// prune drops s's vectors and gone answers expired by now (s.mu held).
func (s *semanticScope) prune(now time.Time) {
	for i := len(s.entries) - 1; i >= 0; i-- {
		if !now.Before(s.entries[i].expires) {
			s.removeAt(i)
		}
	}
	for k, at := range s.gone {
		if !now.Before(at) {
			delete(s.gone, k)
		}
	}
}

// nearest returns the entry most similar to vec (unit length) not expired by now, and
// its similarity; nil when there is none.
func (s *semanticScope) nearest(vec []float32, now time.Time) (*semanticEntry, float64) {
	return s.nearestExcept(vec, now, nil, math.Inf(-1))
}

// nearestExcept is nearest among the entries whose answer key is not in skip and whose
// similarity is at least floor (nil when there is none): the brute-force scan's answer,
// found by reading the quantised copies first (nearestBounded).
func (s *semanticScope) nearestExcept(vec []float32, now time.Time, skip map[string]bool, floor float64) (*semanticEntry, float64) {
	var q semanticQuery
	q.prepare(vec)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return nearestBounded(s.entries, &s.codes, &q, floor, now, skip, nil)
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
	s.addLocked(e, max)
}

// addLocked is add with s.mu held.
func (s *semanticScope) addLocked(e *semanticEntry, max int) {
	delete(s.gone, e.answerKey)
	if i, ok := s.byKey[e.answerKey]; ok {
		s.setAt(i, e)
		return
	}
	if len(s.entries) >= max && len(s.entries) > 0 {
		s.removeAt(s.oldest())
	}
	s.byKey[e.answerKey] = len(s.entries)
	s.entries = append(s.entries, e)
	s.codes.push(&e.code)
	if s.total != nil {
		s.total.Add(1)
	}
}

// oldest is the index of the least recently used entry (s.mu held, entries not empty).
func (s *semanticScope) oldest() int {
	oldest := 0
	for i, x := range s.entries {
		if x.used.Load() < s.entries[oldest].used.Load() {
			oldest = i
		}
	}
	return oldest
}

// forget removes the entry of answerKey, whose answer is gone, and remembers it as gone
// until its vector would have expired.
func (s *semanticScope) forget(answerKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.byKey[answerKey]
	if !ok {
		return
	}
	if s.gone == nil {
		s.gone = map[string]time.Time{}
	}
	s.gone[answerKey] = s.entries[i].expires
	s.removeAt(i)
}

// setAt puts e in place of entries[i] (s.mu held).
func (s *semanticScope) setAt(i int, e *semanticEntry) {
	s.entries[i] = e
	s.codes.set(i, &e.code)
}

func (s *semanticScope) removeAt(i int) {
	last := len(s.entries) - 1
	delete(s.byKey, s.entries[i].answerKey)
	if i != last {
		s.entries[i] = s.entries[last]
		s.byKey[s.entries[i].answerKey] = i
	}
	s.codes.moveLast(i)
	s.entries[last] = nil
	s.entries = s.entries[:last]
	if s.total != nil {
		s.total.Add(-1)
	}
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

// semanticText is the text of p's conversation that is embedded — its last user message,
// as a "user: text" line — with that message's index, and whether p can be semantically
// cached: no tools, no images, files or audio, no tool calls or results, a user message
// of no more than MaxSemanticText. Every other message (system prompts, the earlier turns,
// anything after the last user message) is part of the scope instead, matched word for
// word, so that a long shared first turn (a document pasted in) cannot make two different
// final questions look alike, nor a different system prompt ever match.
func semanticText(p *plan) (string, int, bool) {
	if len(p.preq.Tools) > 0 {
		return "", -1, false
	}
	last := -1
	for i, m := range p.preq.Messages {
		if len(m.Parts) > 0 || len(m.ToolCalls) > 0 || m.ToolCallID != "" || m.Role == "tool" {
			return "", -1, false
		}
		if m.Role == "user" {
			last = i
		}
	}
	if last < 0 || strings.TrimSpace(p.preq.Messages[last].Content) == "" {
		return "", -1, false
	}
	text := "user: " + p.preq.Messages[last].Content
	if len(text) > MaxSemanticText {
		return "", -1, false
	}
	return text, last, true
}

// semanticScopeOf is the key prefix of p's scope: a hash of everything the exact key
// covers except the text of the last user message (message last; its role and name stay),
// with the embedding model that made the vector (model, "provider/model": the members of
// a model group embed in spaces of their own) and the dimensions asked.
func (g *Gateway) semanticScopeOf(p *plan, primary, fallback []target, last int, model string) string {
	preq := p.preq
	preq.Messages = slices.Clone(p.preq.Messages)
	preq.Messages[last].Content = ""
	embedder := model + "|" + strconv.Itoa(g.opts.Cache.Semantic.Dimensions)
	key := g.requestKey(p, primary, fallback, preq, embedder)
	if key == "" {
		return ""
	}
	// "<owner>.<namespace>.v<16 of the hash>."
	return key[:34] + "v" + key[34:50] + "."
}

// maxSemanticTries bounds the answers a lookup reads: past one that is gone (and then
// remembered as gone) or older than the request's s-maxage, the next nearest is tried.
const maxSemanticTries = 16

// lookupSemantic looks p up in the semantic index when the exact cache missed: it embeds
// the last user message (an embeddings request of the caller's) and takes the nearest
// answer of the scope at least as similar as the threshold. An embedding or driver
// failure is a miss (logged). The embedding is kept in p for storeAnswer.
func (g *Gateway) lookupSemantic(ctx context.Context, p *plan, primary, fallback []target) {
	c := &p.cache
	o := g.opts.Cache.Semantic
	if o == nil || o.Model == "" || c.key == "" || c.bypass || c.hit != nil || c.ctl.NoSemantic {
		return
	}
	text, last, ok := semanticText(p)
	if !ok {
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
	scope := g.semanticScopeOf(p, primary, fallback, last, er.Model)
	if scope == "" {
		return
	}
	c.sem = &semanticPlan{scope: scope, vec: vec}
	if c.ctl.NoStore && c.ctl.NoCache {
		return
	}
	now := g.opts.Now()
	s := g.loadSemantic(ctx, scope, now)
	if s == nil {
		return
	}
	threshold := o.Threshold
	if c.ctl.SimilarityThreshold != nil {
		threshold = *c.ctl.SimilarityThreshold
	}
	var skip map[string]bool // answers too old for this request, or that do not decode
	for range maxSemanticTries {
		e, sim := s.nearestExcept(vec, now, skip, threshold-1e-6)
		if e == nil || sim < threshold-1e-6 {
			return
		}
		v, stored, err := g.opts.Cache.Driver.Get(ctx, e.answerKey, now)
		if err != nil {
			if !errors.Is(err, ErrCacheMiss) {
				g.log.WarnContext(ctx, "completions: reading the response cache", "err", err)
				return
			}
			s.forget(e.answerKey)
			continue
		}
		if skip == nil {
			skip = map[string]bool{}
		}
		if c.ctl.MaxAge > 0 && now.Sub(stored) > time.Duration(c.ctl.MaxAge*float64(time.Second)) {
			skip[e.answerKey] = true
			continue
		}
		var a cachedAnswer
		if err := json.Unmarshal(v, &a); err != nil || !strings.Contains(a.Model, "/") {
			g.log.WarnContext(ctx, "completions: a response cache entry that does not decode", "err", err)
			skip[e.answerKey] = true
			continue
		}
		t := g.semantic.tick.Add(1)
		e.used.Store(t)
		s.used.Store(t)
		c.hit = &cacheHit{answer: a, stored: stored}
		c.sem.similarity, c.sem.hitKey = math.Min(sim, 1), e.answerKey
		return
	}
}

// loadSemantic returns the index of scope (nil when it has none), read again from the
// driver when it can list its entries (CacheLister) and the scope was not read within the
// refresh interval.
func (g *Gateway) loadSemantic(ctx context.Context, scope string, now time.Time) *semanticScope {
	s := g.semantic.get(scope)
	l, ok := g.opts.Cache.Driver.(CacheLister)
	if !ok {
		return s
	}
	o := g.opts.Cache.Semantic
	if s != nil {
		s.mu.RLock()
		fresh := !s.loaded.IsZero() && now.Sub(s.loaded) < o.Refresh
		s.mu.RUnlock()
		if fresh {
			return s
		}
	}
	entries, err := l.ListPrefix(ctx, scope, now, o.MaxVectors)
	if err != nil {
		g.log.WarnContext(ctx, "completions: reading the semantic cache's vectors", "err", err)
		return s
	}
	listed := make([]*semanticEntry, 0, len(entries))
	for _, e := range entries {
		var sv semanticVector
		if err := json.Unmarshal(e.Value, &sv); err != nil || len(sv.Vector) == 0 || len(sv.Vector)%4 != 0 {
			continue
		}
		listed = append(listed, newSemanticEntry(sv.AnswerKey, decodeVector(sv.Vector), e.Expires))
	}
	return g.semantic.refreshed(scope, listed, now, o.MaxVectors, o.MaxTotalVectors)
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
	e := newSemanticEntry(c.key, c.sem.vec, now.Add(ttl))
	scope, o := c.sem.scope, g.opts.Cache.Semantic
	return cacheEntry{key: semanticVectorKey(scope, c.key), v: v, written: func() {
		g.semantic.add(scope, e, now, o.MaxVectors, o.MaxTotalVectors)
	}}, true
}

// semanticVectorKey is the driver key of the vector of answerKey in scope:
// "<owner>.<namespace>.v<scope>.<request>". The answer records it (cachedAnswer.Vector), so
// that DeleteCached deletes the vector with its answer.
func semanticVectorKey(scope, answerKey string) string { return scope + answerKey[34:] }

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
