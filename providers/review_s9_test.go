package providers_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// reviewS9Upstream is OpenAI's API at /v1 answering every Responses API call with a short
// completed response; it records the bodies.
func reviewS9Upstream(t *testing.T) (*providers.OpenAI, func() []map[string]any) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/responses" {
			io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"chat"},"finish_reason":"stop"}]}`)
			return
		}
		io.WriteString(w, `{"id":"resp_1","object":"response","status":"completed","model":"m","output":[{"type":"message","role":"assistant",
			"content":[{"type":"output_text","text":"ok","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	o := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"})
	return o, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

// TestReviewS9DeepResearchHasADataSource: BUG (providers openAIResponsesSearch /
// responsesBody; README lists deep research among the models served). OpenAI refuses
// every deep-research request without a data source: 400 "Deep research models require at
// least one of 'web_search_preview', 'mcp', or 'file_search' tools." The adapter sends
// o3-deep-research / o4-mini-deep-research to the Responses API without any tool, and
// search: true is refused for them (openAIResponsesSearch excludes "deep-research", so
// SupportsSearch is false) — no request to them can succeed, yet the catalogue lists and
// prices them. Expected: a deep research call carries a web search tool (or the models
// are not offered).
func TestReviewS9DeepResearchHasADataSource(t *testing.T) {
	o, bodies := reviewS9Upstream(t)
	if !o.SupportsSearch("o3-deep-research") {
		t.Errorf("SupportsSearch(o3-deep-research) = false: search: true is refused for a model that cannot answer without it")
	}
	_, err := o.Complete(context.Background(), &providers.Request{Model: "o3-deep-research",
		Messages: []providers.Message{{Role: "user", Content: "Research the history of the transistor."}}})
	if err != nil {
		t.Fatal(err)
	}
	b := bodies()
	if len(b) != 1 {
		t.Fatalf("%d calls", len(b))
	}
	tools, _ := json.Marshal(b[0]["tools"])
	if !strings.Contains(string(tools), `"web_search`) {
		t.Errorf("deep research sent with tools %s: OpenAI refuses deep research without web_search_preview, mcp or file_search", tools)
	}
}

// TestReviewS9NoReasoningItemsToNonReasoningModels: BUG (providers responsesBody). The
// Responses API refuses reasoning input items for a model that does not reason: 400
// "Reasoning input items can only be provided to a reasoning or computer use model. Remove
// reasoning items from your input and try again." responsesBody sends every
// ReasoningBlock.Encrypted as a reasoning item whatever the model, and gpt-4o / gpt-4.1
// now reach the Responses API whenever search is on (a /v1/responses web_search tool —
// Codex sends one every turn — or search: true). So a conversation that o3 or GPT-5
// answered before (a model switch, or a fallback to gpt-4.1) fails on its next turn.
// Expected: reasoning items are only sent to reasoning models (openAIReasoningModel).
func TestReviewS9NoReasoningItemsToNonReasoningModels(t *testing.T) {
	o, bodies := reviewS9Upstream(t)
	_, err := o.Complete(context.Background(), &providers.Request{Model: "gpt-4.1", Search: true,
		Tools: []providers.Tool{{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		Messages: []providers.Message{
			{Role: "user", Content: "Weather in Oslo?"},
			{Role: "assistant", ToolCalls: []providers.ToolCall{{ID: "call_1", Name: "get_weather", Arguments: "{}"}},
				Reasoning: []providers.ReasoningBlock{{Text: "Look it up.", Encrypted: "gAAAAABo-o3-reasoning=="}}},
			{Role: "tool", ToolCallID: "call_1", Content: "snow"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	b := bodies()
	if len(b) != 1 {
		t.Fatalf("%d calls", len(b))
	}
	items, _ := b[0]["input"].([]any)
	for i, it := range items {
		if m, _ := it.(map[string]any); m["type"] == "reasoning" {
			t.Errorf("gpt-4.1 was sent a reasoning item at input[%d] (%v): OpenAI refuses reasoning items for non-reasoning models", i, m)
		}
	}
}
