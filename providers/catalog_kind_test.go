package providers

import "testing"

// TestCatalogChatModelNotOf: a chat model is one not of each other request's mode; a model
// of the mode (embedding, audio, rerank, image) is not, nor is a model the catalogue does
// not list as a chat model.
func TestCatalogChatModelNotOf(t *testing.T) {
	c := DefaultCatalog()
	for _, tc := range []struct {
		model, mode string
		want        bool
	}{
		{"openai/gpt-4o-mini", EmbeddingMode, true},
		{"openai/gpt-4o-mini", AudioTranscription, true},
		{"openai/gpt-4o-mini", AudioSpeech, true},
		{"openai/gpt-4o-mini", RerankMode, true},
		{"openai/gpt-4o-mini", ImageMode, true},
		{"openai/gpt-4o-mini", ModerationMode, true},
		{"anthropic/claude-haiku-4-5-20251001", EmbeddingMode, true},
		{"openai/text-embedding-3-small", EmbeddingMode, false},
		{"mistral/mistral-embed", EmbeddingMode, false},
		{"openai/whisper-1", AudioTranscription, false},
		{"openai/tts-1", AudioSpeech, false},
		{"cohere/rerank-v3.5", RerankMode, false},
		{"openai/dall-e-3", ImageMode, false},
		{"openai/gpt-image-1", ImageMode, false},
		{"openai/omni-moderation-latest", ModerationMode, false},
		{"openai/my-own-model", EmbeddingMode, false},
		{"openai/gpt-4o-mini", "chat", false},
		// Other spellings at the model's own provider are its chat entry's.
		{"anthropic/claude-haiku-4-5-latest", EmbeddingMode, true},
		{"openrouter/anthropic/claude-sonnet-4.5", EmbeddingMode, true},
		{"bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0", EmbeddingMode, true},
		{"vertex_ai/gemini-2.5-pro", EmbeddingMode, true},
		{"openai/ft:gpt-4o-mini-2024-07-18:org::abc", EmbeddingMode, true},
		// Another provider's chat entry of the same name is not: Vercel AI Gateway lists
		// mistral-embed as chat, which does not make Azure's mistral-embed a chat model.
		{"azure/mistral-embed", RerankMode, false},
		{"vercel_ai_gateway/mistral/mistral-embed", RerankMode, true},
	} {
		if got := c.ChatModelNotOf(tc.model, tc.mode); got != tc.want {
			t.Errorf("ChatModelNotOf(%s, %s) = %v, want %v", tc.model, tc.mode, got, tc.want)
		}
	}
	var nilCat *Catalog
	if nilCat.ChatModelNotOf("openai/gpt-4o-mini", EmbeddingMode) {
		t.Error("a nil catalogue lists a chat model")
	}
}

// TestCatalogChatModelNotOfNearMiss: an embedding model the embedding catalogue does not
// know is not passed over as a chat model because a reseller lists a model of that name as
// chat (as Vercel AI Gateway does mistral-embed): only the model's own provider's chat
// entries, under any spelling, make it one.
func TestCatalogChatModelNotOfNearMiss(t *testing.T) {
	o, err := ParseCatalog([]byte(`{"vercel_ai_gateway/acme/acme-embed-v2": {"litellm_provider": "vercel_ai_gateway", "mode": "chat",
		"input_cost_per_token": 1e-7, "output_cost_per_token": 0}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultCatalog().WithOverrides(o)
	if _, ok := c.Lookup("azure/acme-embed-v2"); !ok {
		t.Fatal("the near miss is not found by Lookup: the case tests nothing")
	}
	for _, tc := range []struct {
		model string
		want  bool
	}{
		{"azure/acme-embed-v2", false},
		{"openai/acme-embed-v2-latest", false},
		{"vercel_ai_gateway/acme/acme-embed-v2", true}, // the reseller's own listing
	} {
		if got := c.ChatModelNotOf(tc.model, EmbeddingMode); got != tc.want {
			t.Errorf("ChatModelNotOf(%s, embedding) = %v, want %v", tc.model, got, tc.want)
		}
	}
}
