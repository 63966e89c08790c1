package completions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/switchyard-ai/switchyard/providers"
)

// CacheDriver keeps cached answers: opaque values under opaque keys until they expire.
// MemoryCache (per process) and StoreCache (a store.Store, shared by replicas) implement
// it; package completions/cachetest is the conformance suite a driver must pass.
// Implementations are safe for concurrent use.
type CacheDriver interface {
	// Get returns the value stored under key and when it was stored, or an error matching
	// ErrCacheMiss when there is none or it expired by now.
	Get(ctx context.Context, key string, now time.Time) (value []byte, stored time.Time, err error)
	// Put stores value under key, replacing what was there, until expires. The driver keeps
	// its own copy. A driver may drop the value (a bound on its size): a later Get misses.
	Put(ctx context.Context, key string, value []byte, stored, expires time.Time) error
	// DeletePrefix deletes every entry whose key starts with prefix (a whole key: that
	// entry) and returns how many it deleted, expired ones included.
	DeletePrefix(ctx context.Context, prefix string) (int, error)
}

// ErrCacheMiss is a CacheDriver's answer for a key it does not hold (and DeleteCached's; the
// server answers it 404).
var ErrCacheMiss = errors.New("completions: not in the response cache")

// CacheOptions turn on the response cache: a request answered once is answered again from
// the cache, without an upstream call, when the same caller sends it again.
type CacheOptions struct {
	// Driver keeps the answers; nil turns the cache off.
	Driver CacheDriver
	// TTL is how long an answer is kept when the request does not say (CacheControl.TTL);
	// default one hour.
	TTL time.Duration
	// OptIn caches only the requests that ask for it (CacheControl.Use, LiteLLM's
	// "default_off" mode); by default every request that can be cached is.
	OptIn bool
	// MaxEntryBytes bounds one cached answer (default 1 MiB); a larger one is not kept.
	MaxEntryBytes int
	// Semantic, with a Model, also answers from the cache the requests close in meaning to
	// one answered before (see SemanticCacheOptions); nil keeps to exact matches.
	Semantic *SemanticCacheOptions
}

// CacheControl is a request's say over the response cache, in LiteLLM's words (its
// "cache" object: the OpenAI SDKs send it in extra_body); the HTTP surfaces also read a
// Cache-Control header (no-cache, no-store, max-age=N).
type CacheControl struct {
	// NoCache answers the request upstream even when the cache has it (the new answer is
	// still kept, unless NoStore).
	NoCache bool `json:"no-cache,omitempty"`
	// NoStore keeps the answer out of the cache.
	NoStore bool `json:"no-store,omitempty"`
	// TTL is how many seconds to keep this answer (the server's default when 0).
	TTL float64 `json:"ttl,omitempty" jsonschema:"minimum=0,maximum=31536000"`
	// MaxAge accepts a cached answer only when it is at most this many seconds old (any
	// age when 0; LiteLLM's s-maxage).
	MaxAge float64 `json:"s-maxage,omitempty" jsonschema:"minimum=0,maximum=31536000"`
	// Namespace keeps this request's answers apart from the caller's others (for example
	// one per evaluation run).
	Namespace string `json:"namespace,omitempty" jsonschema:"maxLength=256"`
	// Use asks for the cache when the server caches only on request (CacheOptions.OptIn).
	Use bool `json:"use-cache,omitempty"`
	// SimilarityThreshold is this request's least cosine similarity of a semantic hit
	// (the server's CacheOptions.Semantic.Threshold when absent; LiteLLM's name).
	SimilarityThreshold *float64 `json:"similarity_threshold,omitempty" jsonschema:"minimum=0,maximum=1"`
	// NoSemantic keeps this request to exact matches: it is neither looked up nor kept
	// by meaning.
	NoSemantic bool `json:"no-semantic,omitempty"`
}

// MaxCacheSeconds bounds CacheControl's TTL and MaxAge (a year).
const MaxCacheSeconds = 365 * 24 * 3600

// check validates c; field is the name of the request's cache object.
func (c *CacheControl) check(field string) error {
	if c == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"ttl", c.TTL}, {"s-maxage", c.MaxAge}} {
		if !(f.v >= 0 && f.v <= MaxCacheSeconds) {
			return invalid(field+"."+f.name, "must be between 0 and %d seconds, got %v", MaxCacheSeconds, f.v)
		}
	}
	if t := c.SimilarityThreshold; t != nil && !(*t >= 0 && *t <= 1) {
		return invalid(field+".similarity_threshold", "must be between 0 and 1, got %v", *t)
	}
	if len(c.Namespace) > 256 {
		return invalid(field+".namespace", "at most 256 characters, got %d", len(c.Namespace))
	}
	return nil
}

// Cache results of CacheStatus.
const (
	// CacheHit: the answer came from the cache; no model was called.
	CacheHit = "hit"
	// CacheMiss: the cache did not have it; the answer is kept for the next time (unless the
	// request said no-store or the answer could not be kept).
	CacheMiss = "miss"
	// CacheBypass: the request was cacheable but said no-cache; its answer is kept unless
	// it also said no-store.
	CacheBypass = "bypass"
)

// CacheStatus says how the response cache took part in an answer (Response.Cache); nil
// when it did not (no cache, or a request that cannot be cached).
type CacheStatus struct {
	Result string `json:"result"`
	// Result is CacheHit, CacheMiss or CacheBypass (and CachePartial for embeddings).
	// Key identifies the cached answer (a hash of the caller, the namespace, the models and
	// everything in the request that shapes the answer); absent for embeddings, whose
	// inputs are cached one by one.
	Key string `json:"key,omitempty"`
	// Hits is how many of an embeddings request's inputs came from the cache.
	Hits int `json:"hits,omitempty"`
	// AgeSeconds is how long ago a hit's answer was made.
	AgeSeconds int64 `json:"age_seconds,omitempty"`
	// SavedUSD is what the answer cost when it was made (a hit's saving; its own costs are 0).
	SavedUSD float64 `json:"saved_usd,omitempty"`
	// Semantic says a hit was found by meaning (the semantic cache), not by the exact
	// request; Key is then the answer's, made for the request it was similar to.
	Semantic bool `json:"semantic,omitempty"`
	// Similarity is a semantic hit's cosine similarity to the request it was made for
	// (of their last user messages' embeddings).
	Similarity float64 `json:"similarity,omitempty"`
}

// cachedAnswer is what the cache keeps of an answer: enough to give it again in any of the
// gateway's shapes, whole or streamed.
type cachedAnswer struct {
	Model        string                     `json:"model"` // provider/model that answered
	Text         string                     `json:"text,omitempty"`
	ToolCalls    []providers.ToolCall       `json:"tool_calls,omitempty"`
	Refusal      string                     `json:"refusal,omitempty"`
	FinishReason string                     `json:"finish_reason,omitempty"`
	StopSequence string                     `json:"stop_sequence,omitempty"`
	Reasoning    []providers.ReasoningBlock `json:"reasoning,omitempty"`
	Sources      []providers.Source         `json:"sources,omitempty"`
	// CodeExecution and URLContextMetadata: Gemini's code execution parts and URL context
	// metadata (see providers.Response).
	CodeExecution      []providers.CodeExecutionPart `json:"code_execution,omitempty"`
	URLContextMetadata json.RawMessage               `json:"url_context_metadata,omitempty"`
	// SystemFingerprint and ServiceTier are the answering upstream's system_fingerprint and
	// service_tier (see providers.Response); absent, as in entries kept before they were,
	// when it sent none.
	SystemFingerprint string          `json:"system_fingerprint,omitempty"`
	ServiceTier       string          `json:"service_tier,omitempty"`
	Usage             providers.Usage `json:"usage"`
	Estimated         bool            `json:"estimated,omitempty"`
	CostUSD           float64         `json:"cost_usd,omitempty"`
	// Logprobs are the answer's log probabilities, kept when the request asked for them;
	// a request that asks has a key of its own (its providers.Request says so), so an
	// answer kept without them never answers it, nor one kept with them a request that did
	// not ask.
	Logprobs *providers.Logprobs `json:"logprobs,omitempty"`
	// Vector is the key of the semantic cache's vector of this answer, when it has one:
	// DeleteCached deletes it too.
	Vector string `json:"vector,omitempty"`
}

// cacheHit is a plan's answer found in the cache.
type cacheHit struct {
	answer cachedAnswer
	stored time.Time
}

// cachePlan is what a plan knows of the cache: its key, the request's say, and the hit.
type cachePlan struct {
	key    string
	ctl    CacheControl
	bypass bool // no-cache: not looked up
	hit    *cacheHit
	// capped: the budget lowered the request's max tokens to what it has left, so the
	// answer (perhaps cut short) is not kept under the request's key.
	capped bool
	// sem is the semantic cache's part (nil when it took none).
	sem *semanticPlan
}

// PurgeCache deletes the cached answers of owner (a Scope's Owner): those of namespace
// when it is not nil ("" is the answers asked for without one), else all of them. It
// returns how many it deleted; with no cache, 0.
func (g *Gateway) PurgeCache(ctx context.Context, owner string, namespace *string) (int, error) {
	d := g.CacheDriver()
	if d == nil {
		return 0, nil
	}
	prefix := cacheOwnerPrefix(owner)
	if namespace != nil {
		prefix = cacheKeyPrefix(owner, *namespace)
	}
	g.cacheWrites.purged(prefix, g.opts.Now())
	g.semantic.purged(prefix)
	n, err := d.DeletePrefix(ctx, prefix)
	if err != nil {
		return n, fmt.Errorf("completions: purging the response cache: %w", err)
	}
	return n, nil
}

// DeleteCached deletes the cached answer (or embeddings input) under key, the
// X-Switchyard-Cache-Key an answer of owner's reported, with the semantic cache's vector
// of it (so that no replica finds it again). A key that is not one of owner's, or not
// cached (any more), is ErrCacheMiss.
func (g *Gateway) DeleteCached(ctx context.Context, owner, key string) error {
	d := g.CacheDriver()
	if d == nil || !strings.HasPrefix(key, cacheOwnerPrefix(owner)) || strings.Count(key, ".") != 2 || len(key) != cacheKeyLen {
		return fmt.Errorf("%w: no cached answer of this key under %q", ErrCacheMiss, key)
	}
	now := g.opts.Now()
	vector := ""
	if v, _, err := d.Get(ctx, key, now); err == nil {
		var a cachedAnswer
		if json.Unmarshal(v, &a) == nil && a.Vector != key && strings.HasPrefix(a.Vector, key[:34]+"v") &&
			strings.HasSuffix(a.Vector, key[33:]) {
			vector = a.Vector // "<owner>.<namespace>.v<scope>.<request>"
		}
	}
	g.cacheWrites.purged(key, now)
	g.semantic.purged(key)
	if vector != "" {
		g.cacheWrites.purged(vector, now)
		if _, err := d.DeletePrefix(ctx, vector); err != nil {
			return fmt.Errorf("completions: deleting a cached answer's vector: %w", err)
		}
	}
	n, err := d.DeletePrefix(ctx, key)
	if err != nil {
		return fmt.Errorf("completions: deleting a cached answer: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("%w: no cached answer of this key under %q", ErrCacheMiss, key)
	}
	return nil
}

// cacheKeyLen is the length of every cache key: 16 + 1 + 16 + 1 + 64 hexadecimal digits
// and dots.
const cacheKeyLen = 98

// CacheDriver returns the driver of the gateway's response cache (nil when it is off).
func (g *Gateway) CacheDriver() CacheDriver {
	if g == nil {
		return nil
	}
	return g.opts.Cache.Driver
}

// cacheKey returns the key of p's request, or "" when it cannot be cached: no cache, an
// opt-in cache the request did not ask, several choices (each would be the same answer),
// or a web search (its point is a fresh answer). The key covers the caller (Owner: a
// virtual key shares its issuer's answers), the namespace, the models as resolved (before
// ranking: the same request finds its answer whichever model ranked first) and the request
// the models are sent, with any stored history.
func (g *Gateway) cacheKey(p *plan, primary, fallback []target) string {
	req := p.req
	if g.opts.Cache.Driver == nil || req.choices > 1 || req.Search || req.searchIfAvailable {
		return ""
	}
	if g.opts.Cache.OptIn && (req.Cache == nil || !req.Cache.Use) {
		return ""
	}
	if req.Cache != nil && req.Cache.NoCache && req.Cache.NoStore {
		return ""
	}
	return g.requestKey(p, primary, fallback, p.preq, "")
}

// requestKey is the cache key of p sending preq to primary and fallback; semantic, the
// embedding model, is set for the semantic cache's scope keys (which leave out the text of
// the messages).
func (g *Gateway) requestKey(p *plan, primary, fallback []target, preq providers.Request, semantic string) string {
	req := p.req
	type keyed struct {
		V         int      `json:"v"`
		Owner     string   `json:"owner"`
		Namespace string   `json:"ns,omitempty"`
		Models    []string `json:"models"`
		Fallback  []string `json:"fallback,omitempty"`
		Group     string   `json:"group,omitempty"`
		// ContentFilterFallback: whether a content filter's refusal stands or the next
		// model answers changes the answer.
		ContentFilterFallback bool `json:"cf_fallback,omitempty"`
		// ShowsReasoning: whether reasoning a model sends unasked is kept (the chat
		// surface) or left out (the others) changes what the answer holds.
		ShowsReasoning bool              `json:"shows_reasoning,omitempty"`
		Request        providers.Request `json:"request"`
		Semantic       string            `json:"semantic,omitempty"`
	}
	k := keyed{V: 1, Owner: p.scope.Owner, Models: targetNames(primary), Fallback: targetNames(fallback), Group: req.groupName,
		ContentFilterFallback: req.FallbackOnContentFilter, ShowsReasoning: req.Thinking == nil && req.unaskedReasoning, Request: preq,
		Semantic: semantic}
	if req.Cache != nil {
		k.Namespace = req.Cache.Namespace
	}
	b, err := json.Marshal(k)
	if err != nil {
		g.log.Warn("completions: a request's cache key", "err", err)
		return ""
	}
	sum := sha256.Sum256(b)
	return cacheKeyPrefix(p.scope.Owner, k.Namespace) + hex.EncodeToString(sum[:])
}

// Cache keys are "<owner>.<namespace>.<request>": hashes of the owner (8 bytes), of the
// namespace (8 bytes) and of everything that shapes the answer, so that PurgeCache finds
// an owner's answers, or one namespace's, by prefix, and a key says nothing of who made it.

// cacheOwnerPrefix is what the keys of owner's answers start with.
func cacheOwnerPrefix(owner string) string {
	o := sha256.Sum256([]byte("owner\x00" + owner))
	return hex.EncodeToString(o[:8]) + "."
}

// cacheKeyPrefix is what the keys of owner's answers in namespace start with.
func cacheKeyPrefix(owner, namespace string) string {
	n := sha256.Sum256([]byte("namespace\x00" + namespace))
	return cacheOwnerPrefix(owner) + hex.EncodeToString(n[:8]) + "."
}

// lookupCache finds p's answer in the cache (cacheKey set p.cache.key). A driver failure is
// a miss (logged): the cache never stands between a caller and an answer.
func (g *Gateway) lookupCache(ctx context.Context, p *plan) {
	c := &p.cache
	if c.key == "" || c.bypass {
		return
	}
	now := g.opts.Now()
	v, stored, err := g.opts.Cache.Driver.Get(ctx, c.key, now)
	if err != nil {
		if !errors.Is(err, ErrCacheMiss) {
			g.log.WarnContext(ctx, "completions: reading the response cache", "err", err)
		}
		return
	}
	if c.ctl.MaxAge > 0 && now.Sub(stored) > time.Duration(c.ctl.MaxAge*float64(time.Second)) {
		return
	}
	var a cachedAnswer
	if err := json.Unmarshal(v, &a); err != nil || !strings.Contains(a.Model, "/") {
		g.log.WarnContext(ctx, "completions: a response cache entry that does not decode", "err", err)
		return
	}
	c.hit = &cacheHit{answer: a, stored: stored}
}

// hitTarget is the target that "answers" a cache hit: the model that made the answer, with
// a provider that replays it.
func (h *cacheHit) target() target {
	provider, model, _ := strings.Cut(h.answer.Model, "/")
	return target{name: h.answer.Model, provider: provider, model: model, p: replayProvider{a: &h.answer}}
}

// status is the CacheStatus of p's answer (nil when the cache took no part).
func (c *cachePlan) status(now time.Time) *CacheStatus {
	switch {
	case c.hit != nil && c.sem != nil && c.sem.hitKey != "":
		return &CacheStatus{Result: CacheHit, Key: c.sem.hitKey, AgeSeconds: int64(now.Sub(c.hit.stored) / time.Second), SavedUSD: c.hit.answer.CostUSD,
			Semantic: true, Similarity: math.Round(c.sem.similarity*1e4) / 1e4}
	case c.hit != nil:
		return &CacheStatus{Result: CacheHit, Key: c.key, AgeSeconds: int64(now.Sub(c.hit.stored) / time.Second), SavedUSD: c.hit.answer.CostUSD}
	case c.key == "":
		return nil
	case c.bypass:
		return &CacheStatus{Result: CacheBypass, Key: c.key}
	}
	return &CacheStatus{Result: CacheMiss, Key: c.key}
}

// storeAnswer keeps resp, the answer of p, in the cache, in the background (the caller has
// its answer already); Gateway.Close waits for the writes under way.
func (g *Gateway) storeAnswer(p *plan, resp *Response, estimated bool) {
	c := &p.cache
	if c.key == "" || c.hit != nil || c.ctl.NoStore || c.capped || resp.FinishReason == "content_filter" {
		return
	}
	a := cachedAnswer{Model: resp.Provider + "/" + resp.Model, Text: resp.Text(), ToolCalls: resp.ToolCalls, Refusal: resp.Refusal,
		FinishReason: resp.FinishReason, StopSequence: resp.StopSequence, Reasoning: resp.Reasoning, Sources: resp.Sources,
		CodeExecution: resp.CodeExecution, URLContextMetadata: resp.URLContextMetadata,
		SystemFingerprint: resp.SystemFingerprint, ServiceTier: resp.ServiceTier,
		Usage: resp.Usage.providerUsage(), Estimated: estimated, CostUSD: resp.Usage.Costs.Spent(), Logprobs: resp.Logprobs}
	vector, semantic := g.storeSemantic(p, g.cacheTTL(c.ctl))
	if semantic {
		a.Vector = vector.key
	}
	v, err := json.Marshal(a)
	if err != nil || len(v) > g.opts.Cache.MaxEntryBytes {
		return
	}
	entries := []cacheEntry{{key: c.key, v: v}}
	if semantic {
		entries = append(entries, vector) // after its answer (see storeSemantic)
	}
	g.writeCache(c.ctl, entries...)
}

// cacheTTL is how long an entry is kept: what ctl asks, else the gateway's TTL.
func (g *Gateway) cacheTTL(ctl CacheControl) time.Duration {
	if ctl.TTL > 0 {
		return time.Duration(ctl.TTL * float64(time.Second))
	}
	return g.opts.Cache.TTL
}

// cacheEntry is a value for the response cache and its key.
type cacheEntry struct {
	key string
	v   []byte
	// written, when set, is called once the value is in the driver (not when a purge
	// kept it out or the write failed).
	written func()
}

// writeCache keeps entries in the cache, in the background (the caller has its answer
// already), for the TTL ctl asks or the gateway's; Gateway.Close waits for the writes under
// way. A write that fails is logged and ends the rest.
func (g *Gateway) writeCache(ctl CacheControl, entries ...cacheEntry) {
	ttl := g.cacheTTL(ctl)
	now := g.opts.Now()
	if len(entries) == 0 || !g.cacheWrites.start() {
		return // nothing to keep, or closed
	}
	go func() {
		defer g.cacheWrites.done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, e := range entries {
			put, err := g.cacheWrites.put(ctx, g.opts.Cache.Driver, e.key, e.v, now, now.Add(ttl))
			if err != nil {
				g.log.Warn("completions: writing the response cache", "err", err)
				return
			}
			if put && e.written != nil {
				e.written()
			}
		}
	}()
}

// maxCacheWrites bounds the cache writes under way: beyond it (a store slower than the
// answers coming in) an answer is not kept rather than a goroutine more held for it.
const maxCacheWrites = 256

// CombinedCache is the CacheStatus of an answer made of several (a legacy completion's
// prompts, each a request of its own): hit when every one was, bypass when every one
// was, partial when some were hits, else miss; what the hits saved added up, the oldest
// hit's age, the key only when there is one answer. nil when the cache took part in none.
func CombinedCache(rs []*Response) *CacheStatus {
	if len(rs) == 1 {
		return rs[0].Cache
	}
	out := &CacheStatus{}
	hits, bypasses, seen := 0, 0, false
	for _, r := range rs {
		c := r.Cache
		if c == nil {
			continue
		}
		seen = true
		switch c.Result {
		case CacheHit:
			hits++
			out.SavedUSD += c.SavedUSD
			out.AgeSeconds = max(out.AgeSeconds, c.AgeSeconds)
		case CacheBypass:
			bypasses++
		}
	}
	switch {
	case !seen:
		return nil
	case hits == len(rs):
		out.Result = CacheHit
	case hits > 0:
		out.Result, out.Hits = CachePartial, hits
	case bypasses == len(rs):
		out.Result = CacheBypass
	default:
		out.Result = CacheMiss
	}
	return out
}

// cacheWriters counts the cache writes under way; after close none starts. It also keeps
// the purges of the last minutes, so that an answer made before a purge but written after
// it is not kept.
type cacheWriters struct {
	mu       sync.Mutex
	wg       sync.WaitGroup
	closed   bool
	inflight int

	// purge is held by a write from its check of purges to the end of its Put, and by a
	// purge while it records itself: a purge's deletion comes after every write that
	// checked before it, and every write after it sees it.
	purge    sync.RWMutex
	purgedAt map[string]time.Time // key prefix -> when it was last purged (a minute kept)
}

// purgeMemory is how long a purge is remembered: longer than a write can wait (30 s).
const purgeMemory = time.Minute

// purged records a purge of the keys starting with prefix, at now.
func (w *cacheWriters) purged(prefix string, now time.Time) {
	w.purge.Lock()
	defer w.purge.Unlock()
	if w.purgedAt == nil {
		w.purgedAt = map[string]time.Time{}
	}
	for p, at := range w.purgedAt {
		if now.Sub(at) > purgeMemory {
			delete(w.purgedAt, p)
		}
	}
	w.purgedAt[prefix] = now
}

// put writes an entry made at stored unless a purge of its key came after it; it says
// whether it wrote it.
func (w *cacheWriters) put(ctx context.Context, d CacheDriver, key string, value []byte, stored, expires time.Time) (bool, error) {
	w.purge.RLock()
	defer w.purge.RUnlock()
	for p, at := range w.purgedAt {
		if !at.Before(stored) && strings.HasPrefix(key, p) {
			return false, nil // purged since it was made
		}
	}
	return true, d.Put(ctx, key, value, stored, expires)
}

func (w *cacheWriters) start() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.inflight >= maxCacheWrites {
		return false
	}
	w.inflight++
	w.wg.Add(1)
	return true
}

func (w *cacheWriters) done() {
	w.mu.Lock()
	w.inflight--
	w.mu.Unlock()
	w.wg.Done()
}

// close stops new writes and waits for those under way, at most until ctx ends.
func (w *cacheWriters) close(ctx context.Context) error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// providerUsage is u's token counts in the providers' terms.
func (u Usage) providerUsage() providers.Usage {
	return providers.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, ReasoningTokens: u.ReasoningTokens,
		CachedTokens: u.CachedTokens, CacheCreationTokens: u.CacheCreationTokens, CacheCreation1hTokens: u.CacheCreation1hTokens,
		WebSearches: u.WebSearches, PromptAudioTokens: u.PromptAudioTokens,
		CompletionAudioTokens: u.CompletionAudioTokens}
}

// replayProvider gives a cached answer as a provider would: whole, or as a stream of
// fragments (the sources, the reasoning, the text in pieces, the refusal, the tool calls,
// then the usage and finish reason), so that every surface writes it as it writes a
// model's answer.
type replayProvider struct {
	a    *cachedAnswer
	name string // "" for "cache"
}

func (r replayProvider) Name() string {
	if r.name != "" {
		return r.name
	}
	return "cache"
}

func (r replayProvider) Complete(ctx context.Context, _ *providers.Request) (*providers.Response, error) {
	a := r.a
	return &providers.Response{Text: a.Text, ToolCalls: a.ToolCalls, Refusal: a.Refusal, Usage: a.Usage, FinishReason: a.FinishReason,
		StopSequence: a.StopSequence, Sources: a.Sources, Reasoning: a.Reasoning, CodeExecution: a.CodeExecution, URLContextMetadata: a.URLContextMetadata,
		SystemFingerprint: a.SystemFingerprint, ServiceTier: a.ServiceTier, Logprobs: a.Logprobs}, nil
}

func (r replayProvider) Stream(ctx context.Context, _ *providers.Request) (providers.Stream, error) {
	return &replayStream{chunks: r.a.chunks(), usage: r.a.Usage}, nil
}

// replayPiece is the most text one replayed fragment carries: a client shows a cached
// answer as it shows a streamed one, in pieces, but without waiting between them.
const replayPiece = 64

// chunks are the stream fragments of a, each with a's system_fingerprint and service_tier
// when it has them (as an OpenAI-compatible upstream's chunks carry them).
func (a *cachedAnswer) chunks() []providers.Chunk {
	out := a.fragments()
	for i := range out {
		out[i].SystemFingerprint, out[i].ServiceTier = a.SystemFingerprint, a.ServiceTier
	}
	return out
}

// fragments are the stream fragments of a's content, usage and finish reason.
func (a *cachedAnswer) fragments() []providers.Chunk {
	var out []providers.Chunk
	if len(a.Sources) > 0 {
		out = append(out, providers.Chunk{Sources: a.Sources})
	}
	for i, b := range a.Reasoning {
		if b.Text != "" {
			out = append(out, providers.Chunk{Reasoning: &providers.ReasoningDelta{Index: i, Text: b.Text}})
		}
		if b.Signature != "" {
			out = append(out, providers.Chunk{Reasoning: &providers.ReasoningDelta{Index: i, Signature: b.Signature}})
		}
		if b.Redacted != "" {
			out = append(out, providers.Chunk{Reasoning: &providers.ReasoningDelta{Index: i, Redacted: b.Redacted}})
		}
		if b.Encrypted != "" {
			out = append(out, providers.Chunk{Reasoning: &providers.ReasoningDelta{Index: i, Encrypted: b.Encrypted, EncryptedBy: b.EncryptedBy}})
		}
	}
	if lp := a.Logprobs; lp != nil && len(lp.Content) > 0 {
		out = append(out, a.tokenFragments()...)
	} else {
		for text := a.Text; text != ""; {
			n := textPiece(text, replayPiece)
			out = append(out, providers.Chunk{Text: text[:n]})
			text = text[n:]
		}
	}
	if a.Refusal != "" {
		c := providers.Chunk{Refusal: a.Refusal}
		if lp := a.Logprobs; lp != nil && len(lp.Refusal) > 0 {
			c.Logprobs = &providers.Logprobs{Refusal: lp.Refusal}
		}
		out = append(out, c)
	}
	for i, c := range a.ToolCalls {
		out = append(out, providers.Chunk{ToolCalls: []providers.ToolCallDelta{{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments, ThoughtSignature: c.ThoughtSignature}}})
	}
	u := a.Usage
	return append(out, providers.Chunk{Usage: &u, FinishReason: a.FinishReason, StopSequence: a.StopSequence})
}

// tokenFragments are the text fragments of an answer kept with log probabilities: a
// fragment per token, with its log probability, while the tokens spell the text (as the
// upstream streamed them); the rest of the text, if they do not, in one last fragment.
func (a *cachedAnswer) tokenFragments() []providers.Chunk {
	out := make([]providers.Chunk, 0, len(a.Logprobs.Content)+1)
	text := a.Text
	for i, t := range a.Logprobs.Content {
		lp := &providers.Logprobs{Content: a.Logprobs.Content[i : i+1 : i+1]}
		if t.Token == "" || !strings.HasPrefix(text, t.Token) {
			// The tokens do not spell the text (a server's own rendering): the rest of the
			// text carries the rest of the tokens.
			out = append(out, providers.Chunk{Text: text, Logprobs: &providers.Logprobs{Content: a.Logprobs.Content[i:]}})
			return out
		}
		out = append(out, providers.Chunk{Text: t.Token, Logprobs: lp})
		text = text[len(t.Token):]
	}
	if text != "" {
		out = append(out, providers.Chunk{Text: text})
	}
	return out
}

// textPiece is the length of the first piece of s: up to max bytes, ending after a space
// when there is one in its second half, never inside a UTF-8 sequence.
func textPiece(s string, max int) int {
	if len(s) <= max {
		return len(s)
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 { // a rune longer than max (not in valid UTF-8)
		return max
	}
	if sp := strings.LastIndexByte(s[:n], ' '); sp >= n/2 {
		return sp + 1
	}
	return n
}

// replayStream yields a cached answer's fragments.
type replayStream struct {
	chunks []providers.Chunk
	next   int
	usage  providers.Usage
}

// PromptUsage implements providers.PromptUsageReporter: the cached answer's prompt tokens
// are known at its start, as a live Claude stream's are (the Messages surface's
// message_start carries them).
func (s *replayStream) PromptUsage() (providers.Usage, bool) {
	return providers.Usage{PromptTokens: s.usage.PromptTokens, CachedTokens: s.usage.CachedTokens,
		CacheCreationTokens: s.usage.CacheCreationTokens, CacheCreation1hTokens: s.usage.CacheCreation1hTokens}, true
}

func (s *replayStream) Recv() (providers.Chunk, error) {
	if s.next >= len(s.chunks) {
		return providers.Chunk{}, io.EOF
	}
	s.next++
	return s.chunks[s.next-1], nil
}

func (s *replayStream) Close() error {
	s.next = len(s.chunks)
	return nil
}

// String describes s for logs: "hit <key>, 12s old".
func (s *CacheStatus) String() string {
	if s == nil {
		return ""
	}
	out := s.Result + " " + s.Key
	if s.Result == CacheHit {
		out += ", " + strconv.FormatInt(s.AgeSeconds, 10) + "s old"
	}
	return out
}
