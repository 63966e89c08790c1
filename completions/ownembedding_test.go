package completions

import (
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A group member the catalogue prices as an embedding model of its own (a LiteLLM
// deployment of model_info.mode embedding on an api_base of its own, which no provider
// listing names) is an embedding deployment: /model/info says so and /health embeds
// rather than asking it for a chat completion it would refuse.
func TestOwnEmbeddingDeploymentMode(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"embed": {Models: []string{"a/bge-small"}}, "chat": {Models: []string{"a/llama"}}}
		o.Prices = providers.DefaultCatalog().WithOwnPrices(map[string]providers.OwnPrice{
			"a/bge-small": {Embedding: true},
			"a/llama":     {},
		})
	})
	modes := map[string]string{}
	for _, d := range h.g.Deployments() {
		modes[d.ModelName] = d.Mode
	}
	if modes["embed"] != ModeEmbedding || modes["chat"] != ModeChat {
		t.Errorf("modes %v: want embed %s, chat %s", modes, ModeEmbedding, ModeChat)
	}
}
