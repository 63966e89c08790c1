package routing_test

import (
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// Tool definitions travel with every call to the chosen model, so they take room in its
// context window: a candidate whose context_length holds the messages but not the
// messages and the tools' JSON must not be ranked.
func TestContextLengthCountsToolDefinitions(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	// about 1,000 tokens of tool description: the messages alone (a few tokens) fit 500
	tools := []routing.Tool{{Name: "lookup", Description: strings.Repeat("word ", 800),
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
	small, big := 500, 128000
	sup := map[string]any{"supports_tools": true}
	req := &routing.Request{Messages: userMsg("hi"), Tools: tools, LLMProviders: []routing.Candidate{
		{Name: "acme/small", ContextLength: &small, Attributes: sup},
		{Name: "acme/big", ContextLength: &big, Attributes: sup}}}
	resp := mustSelect(t, sel, "o", req)
	if got := strings.Join(labels(resp.Providers), ","); got != "acme/big" {
		t.Fatalf("ranked %s, want acme/big alone (acme/small cannot hold the tools)", got)
	}
	if n := routing.EstimateTokens(req.Messages, tools...); n < 1000 || n > 1200 {
		t.Errorf("EstimateTokens with the tools = %d, want about 1,000", n)
	}
	// only the too-small one: refused, naming the field, the size counting the tools
	req.LLMProviders = req.LLMProviders[:1]
	_, err := sel.Select(t.Context(), "o", req)
	if err == nil || !strings.Contains(err.Error(), "llm_providers") || !strings.Contains(err.Error(), "tools") {
		t.Fatalf("err = %v, want a 400 naming llm_providers and saying the tools count", err)
	}
	// without the tools it fits
	req.Tools = nil
	if resp = mustSelect(t, sel, "o", req); labels(resp.Providers)[0] != "acme/small" {
		t.Fatalf("without tools ranked %v", labels(resp.Providers))
	}
}
