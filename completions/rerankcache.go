package completions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// rerankCache is a rerank request's part in the response cache: the whole ranking is kept
// under one key, as a chat answer is.
type rerankCache struct {
	key    string // "" when the request cannot be cached
	ctl    CacheControl
	bypass bool // no-cache: not looked up
	hit    *cachedRanking
	stored time.Time
}

// cachedRanking is what the cache keeps of a ranking: the model that made it, its results,
// and what the call used and cost.
type cachedRanking struct {
	Model   string         `json:"model"`
	Results []cachedResult `json:"results"`
	Tokens  int            `json:"tokens,omitempty"`
	// Estimated: the tokens were counted locally.
	Estimated bool    `json:"estimated,omitempty"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
}

type cachedResult struct {
	Index int     `json:"i"`
	Score float64 `json:"s"`
}

// rerankCacheKey returns the key of req, or "" when it cannot be cached (no cache, opt-in
// not asked, or no-cache with no-store). The key covers the caller, the namespace, the
// models as resolved and what shapes the ranking (query, documents, top_n,
// max_tokens_per_doc); not return_documents, whose documents come from the request.
func (g *Gateway) rerankCacheKey(scope Scope, req *RerankRequest, preq *providers.RerankRequest, targets []target) string {
	if g.opts.Cache.Driver == nil {
		return ""
	}
	c := req.Cache
	if g.opts.Cache.OptIn && (c == nil || !c.Use) || c != nil && c.NoCache && c.NoStore {
		return ""
	}
	k := struct {
		V               int      `json:"v"`
		Op              string   `json:"op"`
		Owner           string   `json:"owner"`
		Namespace       string   `json:"ns,omitempty"`
		Models          []string `json:"models"`
		Query           string   `json:"query"`
		Documents       []string `json:"documents"`
		TopN            int      `json:"top_n,omitempty"`
		MaxTokensPerDoc int      `json:"max_tokens_per_doc,omitempty"`
	}{V: 1, Op: OperationRerank, Owner: scope.Owner, Models: targetNames(targets), Query: preq.Query, Documents: preq.Documents,
		TopN: preq.TopN, MaxTokensPerDoc: preq.MaxTokensPerDoc}
	if c != nil {
		k.Namespace = c.Namespace
	}
	b, err := json.Marshal(k)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return cacheKeyPrefix(scope.Owner, k.Namespace) + hex.EncodeToString(sum[:])
}

// lookupRanking finds rc's ranking in the cache. A driver failure is a miss (logged).
func (g *Gateway) lookupRanking(ctx context.Context, rc *rerankCache) {
	if rc.key == "" || rc.bypass {
		return
	}
	now := g.opts.Now()
	v, stored, err := g.opts.Cache.Driver.Get(ctx, rc.key, now)
	if err != nil {
		if !errors.Is(err, ErrCacheMiss) {
			g.log.WarnContext(ctx, "completions: reading the response cache", "err", err)
		}
		return
	}
	if rc.ctl.MaxAge > 0 && now.Sub(stored) > time.Duration(rc.ctl.MaxAge*float64(time.Second)) {
		return
	}
	var h cachedRanking
	if err := json.Unmarshal(v, &h); err != nil || !strings.Contains(h.Model, "/") {
		g.log.WarnContext(ctx, "completions: a response cache entry that does not decode", "err", err)
		return
	}
	rc.hit, rc.stored = &h, stored
}

// status is the CacheStatus of a rerank answer (nil when the cache took no part).
func (rc *rerankCache) status(now time.Time) *CacheStatus {
	switch {
	case rc.hit != nil:
		return &CacheStatus{Result: CacheHit, Key: rc.key, AgeSeconds: int64(now.Sub(rc.stored) / time.Second), SavedUSD: rc.hit.CostUSD}
	case rc.key == "":
		return nil
	case rc.bypass:
		return &CacheStatus{Result: CacheBypass, Key: rc.key}
	}
	return &CacheStatus{Result: CacheMiss, Key: rc.key}
}

// storeRanking keeps the ranking model made, in the background (the caller has its answer
// already); Gateway.Close waits for the writes under way.
func (g *Gateway) storeRanking(rc *rerankCache, model string, out *providers.RerankResponse, cost float64) {
	if rc.key == "" || rc.ctl.NoStore {
		return
	}
	h := cachedRanking{Model: model, Results: make([]cachedResult, len(out.Results)), Tokens: out.Usage.Tokens,
		Estimated: out.Usage.Estimated(), CostUSD: cost}
	for i, r := range out.Results {
		h.Results[i] = cachedResult{Index: r.Index, Score: r.RelevanceScore}
	}
	v, err := json.Marshal(h)
	if err != nil || len(v) > g.opts.Cache.MaxEntryBytes {
		return
	}
	g.writeCache(rc.ctl, cacheEntry{key: rc.key, v: v})
}
