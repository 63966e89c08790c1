package completions

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// cachedEmbedHarness is newEmbedHarness's gateway with a response cache in memory.
func cachedEmbedHarness(t *testing.T) *embedHarness {
	h := newEmbedHarness(t)
	h.g.opts.Cache = CacheOptions{Driver: &MemoryCache{}, TTL: time.Hour, MaxEntryBytes: 1 << 20}
	return h
}

func vectorsOf(r *EmbeddingsResponse) string {
	var s []string
	for _, d := range r.Data {
		s = append(s, fmt.Sprint(d.Embedding.Values))
	}
	return fmt.Sprint(s)
}

// TestEmbeddingsCacheSendsOnlyNewInputs: a batch repeating earlier inputs sends only the
// new ones; the answer has every vector in order, its usage and cost those of the inputs
// sent; a batch of cached inputs calls no model and costs nothing.
func TestEmbeddingsCacheSendsOnlyNewInputs(t *testing.T) {
	h := cachedEmbedHarness(t)
	ctx := context.Background()
	embed := func(scope Scope, cc *CacheControl, texts ...string) *EmbeddingsResponse {
		t.Helper()
		r, err := h.g.Embed(ctx, scope, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: texts}, Cache: cc})
		if err != nil {
			t.Fatal(err)
		}
		h.g.cacheWrites.wg.Wait()
		return r
	}
	alice := Scope{Owner: "alice"}
	first := embed(alice, nil, "one two", "three")
	if first.Cache == nil || first.Cache.Result != CacheMiss || vectorsOf(first) != "[[7 0 0.5] [5 1 0.5]]" {
		t.Fatalf("first: %+v %s", first.Cache, vectorsOf(first))
	}
	h.openai.script()
	second := embed(alice, nil, "three", "four five six", "one two")
	if h.openai.calls != 1 || fmt.Sprint(h.openai.last["input"]) != "[four five six]" {
		t.Fatalf("second batch sent %v in %d calls, want only the new input", h.openai.last["input"], h.openai.calls)
	}
	// Cached vectors keep the index they were made at; the new one is index 0 of its call.
	if vectorsOf(second) != "[[5 1 0.5] [13 0 0.5] [7 0 0.5]]" {
		t.Fatalf("second batch's vectors %s", vectorsOf(second))
	}
	// The usage counts every input (the sent one's 3 tokens, the hits' shares of the first
	// call's 3: "one two" 2, "three" 1), the costs only the call's.
	if c := second.Cache; c.Result != CachePartial || c.Hits != 2 || c.SavedUSD <= 0 || second.Usage.PromptTokens != 6 || !second.Usage.Estimated {
		t.Fatalf("second batch: cache %+v usage %+v", c, second.Usage)
	}
	h.openai.script()
	third := embed(alice, nil, "one two", "four five six")
	if h.openai.calls != 0 || third.Cache.Result != CacheHit || third.Usage.PromptTokens != 5 || third.Usage.Costs.Spent() != 0 ||
		vectorsOf(third) != "[[7 0 0.5] [13 0 0.5]]" {
		t.Fatalf("all cached: %d calls, cache %+v usage %+v, %s", h.openai.calls, third.Cache, third.Usage, vectorsOf(third))
	}
	h.observed.mu.Lock()
	last := h.observed.got[len(h.observed.got)-1]
	h.observed.mu.Unlock()
	if last.Cache != CacheHit || len(last.Attempts) != 0 || last.SavedUSD <= 0 {
		t.Fatalf("observed %+v", last)
	}

	// Another caller, a namespace, other dimensions: none sees alice's vectors.
	h.openai.script()
	embed(Scope{Owner: "bob"}, nil, "one two")
	embed(alice, &CacheControl{Namespace: "n"}, "one two")
	if _, err := h.g.Embed(ctx, alice, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"one two"}}, Dimensions: intp(2)}); err != nil {
		t.Fatal(err)
	}
	if h.openai.calls != 3 {
		t.Fatalf("%d calls, want 3: another key, a namespace and other dimensions are other inputs", h.openai.calls)
	}
	// no-cache asks the model; a spent budget gets nothing from the cache.
	h.openai.script()
	if r := embed(alice, &CacheControl{NoCache: true}, "one two"); r.Cache.Result != CacheBypass || h.openai.calls != 1 {
		t.Fatalf("no-cache: %+v after %d calls", r.Cache, h.openai.calls)
	}
	spent := NewBudget(BudgetLimits{MaxCalls: 1})
	spent.reserveCall(ctx)
	if _, err := h.g.Embed(ctx, Scope{Owner: "alice", Budget: spent}, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"one two"}}}); !errors.Is(err, ErrBudgetExceeded) {
		t.Fatalf("a spent budget: %v", err)
	}
	var ve *ValidationError
	if _, err := h.g.Embed(ctx, alice, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: []string{"x"}}, Cache: &CacheControl{MaxAge: -1}}); !errors.As(err, &ve) || ve.Field != "cache.s-maxage" {
		t.Fatalf("s-maxage -1: %v", err)
	}
}

func TestCachedVectorRoundTrip(t *testing.T) {
	in := cachedVector{vec: []float32{1.5, -2.25, 0, 3e-8}, model: "openai/text-embedding-3-small", cost: 1.25e-7, tokens: 42}
	got, ok := decodeCachedVector(encodeCachedVector(in))
	if !ok || got.cost != in.cost || got.tokens != 42 || got.model != in.model || fmt.Sprint(got.vec) != fmt.Sprint(in.vec) {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	for _, bad := range [][]byte{nil, make([]byte, 15), append([]byte{2}, make([]byte, 12)...), {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0, 'a'}, {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}} {
		if _, ok := decodeCachedVector(bad); ok {
			t.Errorf("%v decoded", bad)
		}
	}
}
