package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// Embeddings, rerank and transcription requests through a member with max_parallel give
// their slot back when they end, with or without a budget (the request ended only when a
// budget had let it in, so without one every call kept its slot: after max_parallel calls
// the member was at its limit for good).
func TestReview25iOperationsGiveTheirSlotBack(t *testing.T) {
	oai, cohere, groq := newFakeEmbeddingsAPI(t), newFakeRerankAPI(t, true), newFakeAudioAPI(t)
	env := map[string]string{"OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": oai.srv.URL + "/v1", "COHERE_API_KEY": "co", "COHERE_BASE_URL": cohere.srv.URL,
		"GROQ_API_KEY": "gk", "GROQ_BASE_URL": groq.srv.URL + "/openai/v1", "ANTHROPIC_API_KEY": "ak"}
	one := []MemberLimits{{MaxParallel: 1}}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Sleep: func(context.Context, time.Duration) error { return nil },
		ModelGroups: map[string]ModelGroup{
			"embed":  {Models: []string{"openai/text-embedding-3-small"}, Limits: one},
			"rerank": {Models: []string{"cohere/rerank-v3.5"}, Limits: one},
			"stt":    {Models: []string{"groq/whisper-large-v3"}, Limits: one},
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, budget := range []*Budget{nil, NewBudget(BudgetLimits{})} {
		scope := Scope{Owner: "k1", Budget: budget}
		for i := range 3 {
			if _, err := g.Embed(ctx, scope, &EmbeddingsRequest{Model: "embed", Input: EmbeddingInput{Texts: []string{"one", "two"}}}); err != nil {
				t.Fatalf("budget %v: embeddings %d: %v", budget != nil, i, err)
			}
			if _, err := g.Rerank(ctx, scope, &RerankRequest{Model: "rerank", Query: "most moons", Documents: moonDocs}); err != nil {
				t.Fatalf("budget %v: rerank %d: %v", budget != nil, i, err)
			}
			if _, err := g.Transcribe(ctx, scope, &TranscriptionRequest{Model: "stt", File: []byte("hello"), Filename: "a.wav"}); err != nil {
				t.Fatalf("budget %v: transcription %d: %v", budget != nil, i, err)
			}
		}
		for _, m := range []string{"openai/text-embedding-3-small", "cohere/rerank-v3.5", "groq/whisper-large-v3"} {
			if n := inFlightOf(g, m); n != 0 {
				t.Errorf("budget %v: %s has %d calls in flight after its requests ended", budget != nil, m, n)
			}
		}
	}
}
