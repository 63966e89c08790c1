package completions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestListConfiguredServesItsOwnModels: with Options.ListConfigured (--litellm-config), a
// moderation guardrail's model and the semantic cache's embedding model need not be in the
// configuration: the gateway starts (it refused to, naming the model as not served).
func TestListConfiguredServesItsOwnModels(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk"}
	opts := Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		ModelGroups: map[string]ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}}, ListConfigured: true, Listed: []string{},
		Guardrails: []GuardrailConfig{{Name: "mod", Kind: GuardrailModeration, Mode: GuardrailPreCall}}}
	opts.Cache.Semantic = &SemanticCacheOptions{Model: "openai/text-embedding-3-small"}
	g, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if g.Serves("openai/gpt-4.1") {
		t.Error("serves openai/gpt-4.1, which the configuration does not name")
	}
}

// TestListConfiguredRequestContextWindowFallbacks: under Options.ListConfigured a
// request's own context_window_fallbacks entry for the model asked is held to what the
// configuration serves, as its fallback_models are: a model it does not name is refused
// (ErrModelNotServed) naming the entry; entries for other models are not looked at.
func TestListConfiguredRequestContextWindowFallbacks(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk"}
	g, err := New(Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Prices: providers.DefaultCatalog(),
		ModelGroups: map[string]ModelGroup{"smart": {Models: []string{"openai/gpt-4o"}}, "long": {Models: []string{"openai/gpt-4.1"}}}, ListConfigured: true, Listed: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	req := userReq("hi", "openai/gpt-4o")
	req.ContextWindowFallbacks = map[string][]string{"gpt-4o": {"long", "openai/o3"}}
	req.MockResponse = &[]string{"ok"}[0] // nothing is called either way
	_, err = g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.Is(err, ErrModelNotServed) || !errors.As(err, &ve) || ve.Field != `context_window_fallbacks["gpt-4o"][1]` {
		t.Fatalf("a fallback the configuration does not serve: %v", err)
	}
	req = userReq("hi", "openai/gpt-4o")
	req.ContextWindowFallbacks = map[string][]string{"other": {"openai/o3"}}
	req.MockResponse = &[]string{"ok"}[0]
	if _, err := g.Complete(context.Background(), Scope{}, req); err != nil {
		t.Fatalf("another model's entry: %v", err)
	}
	// Read from LiteLLM's list, the entry is named by its index as a bad shape is.
	var chat OpenAIChatRequest
	if err := json.Unmarshal([]byte(`{"model":"openai/gpt-4o","messages":[{"role":"user","content":"hi"}],"mock_response":"ok","context_window_fallbacks":[{"other":[]},{"gpt-4o":["long","openai/o3"]}]}`), &chat); err != nil {
		t.Fatal(err)
	}
	if req, err = chat.ToRequest(); err != nil {
		t.Fatal(err)
	}
	_, err = g.Complete(context.Background(), Scope{}, req)
	if !errors.Is(err, ErrModelNotServed) || !errors.As(err, &ve) || ve.Field != `context_window_fallbacks[1]["gpt-4o"][1]` {
		t.Fatalf("a fallback of the list sent the configuration does not serve: %v", err)
	}
}
