package completions

import (
	"context"
	"fmt"
	"testing"
)

// TestEmbedFallbackAnswersEveryInputUncached: an embeddings request whose model fails goes
// to the scope's fallback (LiteLLM's router falls back for embeddings), which embeds every
// input — none of the asked model's cached vectors mixed in — and whose vectors are not
// cached under the asked model's keys.
func TestEmbedFallbackAnswersEveryInputUncached(t *testing.T) {
	h := cachedEmbedHarness(t)
	ctx := context.Background()
	scope := Scope{Owner: "alice", Fallbacks: map[string][]string{"openai/text-embedding-3-small": {"mistral/mistral-embed"}}}
	embed := func(texts ...string) *EmbeddingsResponse {
		t.Helper()
		r, err := h.g.Embed(ctx, scope, &EmbeddingsRequest{Model: "openai/text-embedding-3-small", Input: EmbeddingInput{Texts: texts}})
		if err != nil {
			t.Fatal(err)
		}
		h.g.cacheWrites.wg.Wait()
		return r
	}
	if r := embed("one"); r.Model != "openai/text-embedding-3-small" || h.mistral.calls != 0 {
		t.Fatalf("the model asked answers: %s, mistral called %d times", r.Model, h.mistral.calls)
	}
	h.openai.script(401)
	r := embed("one", "three")
	if r.Model != "mistral/mistral-embed" || fmt.Sprint(h.mistral.last["input"]) != "[one three]" || r.Cache == nil || r.Cache.Result != CacheMiss {
		t.Fatalf("the fallback: model %s, sent %v, cache %+v", r.Model, h.mistral.last["input"], r.Cache)
	}
	if vectorsOf(r) != "[[3 0 0.5] [5 1 0.5]]" {
		t.Fatalf("the fallback's vectors %s, want both its own", vectorsOf(r))
	}
	// three was embedded by the fallback only: not a hit for the model asked.
	h.openai.script()
	if r := embed("three"); r.Cache.Result != CacheMiss || h.openai.calls != 1 {
		t.Fatalf("the fallback's vector was cached: %+v, openai called %d times", r.Cache, h.openai.calls)
	}
}
