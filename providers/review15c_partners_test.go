package providers_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestReview15cVertexPartnersRefused: the partner models LiteLLM's catalogue lists for
// Vertex AI under a publisher prefix (xAI's Grok, Moonshot's Kimi, MiniMax, Z.ai's GLM)
// are served by their publishers' own APIs, like Llama and Mistral, not by Google's
// generateContent. The change says the other partner models are refused before any call;
// these went to publishers/google/models/xai%2Fgrok-…:generateContent and came back as
// Google's 404 (or an empty answer) instead of the refusal.
func TestReview15cVertexPartnersRefused(t *testing.T) {
	for _, model := range []string{"xai/grok-4.1-fast-reasoning", "moonshotai/kimi-k2-thinking-maas",
		"minimaxai/minimax-m2-maas", "zai-org/glm-4.7-maas"} {
		f := newFakeVertexClaude(t, 200, "application/json", "{}")
		v := vertexClaude(t, f)
		req := vertexHello(model)
		if err := providers.Check(v, model, req); err == nil {
			t.Errorf("%s: Check accepted it", model)
		}
		_, err := v.Complete(context.Background(), req)
		if providers.KindOf(err) != providers.KindBadRequest || len(f.recorded()) != 0 {
			t.Errorf("%s: %v after %d calls", model, err, len(f.recorded()))
		}
	}
}
