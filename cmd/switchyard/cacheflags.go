package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/store"
)

// cacheFlags are serve's response cache flags (completions.CacheOptions).
type cacheFlags struct {
	// Backend is --cache: off, memory or store.
	Backend  string
	TTL      time.Duration
	MemoryMB int
	OptIn    bool
	// SemanticModel and SimilarityThreshold are the semantic cache's
	// (completions.SemanticCacheOptions).
	SemanticModel       string
	SimilarityThreshold float64
}

func (f *cacheFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Backend, "cache", "off", "response cache of the gateway: off; memory (this process, lost at restart); store (the --store database: shared by replicas on PostgreSQL, kept across restarts). A request answered once is answered again from it, with no model called, when the same key sends it again (requests may say no-cache, no-store, ttl, s-maxage, namespace)")
	fs.DurationVar(&f.TTL, "cache-ttl", time.Hour, "how long a cached answer is kept when the request does not say (its cache.ttl)")
	fs.IntVar(&f.MemoryMB, "cache-memory-mb", completions.DefaultMemoryCacheBytes>>20, "bound of --cache memory in MiB (least recently used answers go first)")
	fs.BoolVar(&f.OptIn, "cache-opt-in", false, `cache only the requests that ask ("cache": {"use-cache": true}), as LiteLLM's default_off mode`)
	fs.StringVar(&f.SemanticModel, "cache-semantic-model", "", "embedding model (provider/model) of the semantic cache: with it a chat request close in meaning to one answered before (same key, models, parameters and system prompt) is answered from --cache; its embedding calls are billed as any (LiteLLM's redis-semantic)")
	fs.Float64Var(&f.SimilarityThreshold, "cache-similarity-threshold", completions.DefaultSimilarityThreshold, `least cosine similarity of a semantic hit, in (0, 1] (LiteLLM's similarity_threshold; a request may say its own, "cache": {"similarity_threshold": 0.9})`)
}

func (f *cacheFlags) check() error {
	switch f.Backend {
	case "off", "memory", "store":
	default:
		return fmt.Errorf("--cache must be off, memory or store, got %q", f.Backend)
	}
	if f.TTL <= 0 {
		return fmt.Errorf("--cache-ttl must be positive, got %s", f.TTL)
	}
	if f.MemoryMB <= 0 {
		return fmt.Errorf("--cache-memory-mb must be positive, got %d", f.MemoryMB)
	}
	if !(f.SimilarityThreshold > 0 && f.SimilarityThreshold <= 1) {
		return fmt.Errorf("--cache-similarity-threshold must be above 0 and at most 1, got %v", f.SimilarityThreshold)
	}
	if f.SemanticModel != "" && f.Backend == "off" {
		return fmt.Errorf("--cache-semantic-model needs --cache memory or store")
	}
	return nil
}

// options are the gateway's CacheOptions for st (the server's store).
func (f *cacheFlags) options(st *store.Store) completions.CacheOptions {
	o := completions.CacheOptions{TTL: f.TTL, OptIn: f.OptIn}
	if f.SemanticModel != "" {
		o.Semantic = &completions.SemanticCacheOptions{Model: f.SemanticModel, Threshold: f.SimilarityThreshold}
	}
	switch f.Backend {
	case "memory":
		o.Driver = &completions.MemoryCache{MaxBytes: int64(f.MemoryMB) << 20}
	case "store":
		o.Driver = completions.NewStoreCache(st)
	}
	return o
}
