package completions

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
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

// TestOpFallbacksPassOverChatModels: a scope's "*" fallbacks naming a chat model (meant
// for chat requests) are passed over by an embeddings request, which goes on to the next
// fallback instead of calling the chat model on the embeddings API (where it fails); a
// model group's fallbacks alike.
func TestOpFallbacksPassOverChatModels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope Scope
		model string
	}{
		{"key's * fallbacks", Scope{Owner: "alice", Fallbacks: map[string][]string{"*": {"openai/gpt-4o-mini", "mistral/mistral-embed"}}}, "openai/text-embedding-3-small"},
		{"key's fallbacks of the model", Scope{Owner: "alice", Fallbacks: map[string][]string{"openai/text-embedding-3-small": {"gpt-4o-mini", "mistral/mistral-embed"}}}, "openai/text-embedding-3-small"},
		{"group's fallbacks", Scope{Owner: "alice"}, "solo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newEmbedHarness(t)
			env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": h.openai.srv.URL + "/v1",
				"MISTRAL_API_KEY": "mk", "MISTRAL_BASE_URL": h.mistral.srv.URL + "/v1"}
			g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
				Prices: providers.DefaultCatalog(),
				ModelGroups: map[string]ModelGroup{"solo": {Models: []string{"openai/text-embedding-3-small"},
					Fallbacks: []string{"openai/gpt-4o-mini", "mistral/mistral-embed"}}},
				Sleep: func(context.Context, time.Duration) error { return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			// The fake embeds for any model named: without the pass-over gpt-4o-mini answers.
			h.openai.script(401)
			r, err := g.Embed(context.Background(), tc.scope, &EmbeddingsRequest{Model: tc.model, Input: EmbeddingInput{Texts: []string{"one"}}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Model != "mistral/mistral-embed" || h.openai.calls != 1 {
				t.Errorf("answered by %s, openai called %d times: want mistral-embed, the chat model passed over (openai called once, for the model asked)", r.Model, h.openai.calls)
			}
		})
	}
}
