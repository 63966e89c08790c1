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
