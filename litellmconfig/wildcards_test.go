package litellmconfig

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
)

// TestWildcards: each model_list entry whose model_name has a '*' is a wildcard route of
// its pattern to its model (a '*' anywhere in the model's name, as anthropic/claude-*);
// a wildcard model_name over a model without '*' is refused naming the field.
func TestWildcards(t *testing.T) {
	c, err := Parse([]byte(`
model_list:
  - model_name: "*"
    litellm_params: {model: "openai/*"}
  - model_name: "anthropic/claude-*"
    litellm_params: {model: "anthropic/claude-*"}
  - model_name: "openai/*"
    litellm_params: {model: "openai/*"}
`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	want := []completions.Wildcard{{Pattern: "*", Model: "openai/*"}, {Pattern: "anthropic/claude-*", Model: "anthropic/claude-*"}, {Pattern: "openai/*", Model: "openai/*"}}
	if !slices.Equal(c.Wildcards, want) {
		t.Errorf("wildcards %v, want %v", c.Wildcards, want)
	}
	if !slices.Equal(c.Passthrough, []string{"openai/*", "anthropic/*"}) {
		t.Errorf("passthrough %v", c.Passthrough)
	}
	_, err = Parse([]byte("model_list:\n  - model_name: \"claude-*\"\n    litellm_params: {model: anthropic/claude-3-5-haiku-20241022}\n"), func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "litellm_params.model") {
		t.Errorf("a wildcard over a model without '*': %v, want an error naming litellm_params.model", err)
	}
}
