package providers_test

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestOpenRouterReasoning: OpenRouter gets Request.Thinking as its reasoning object — a
// budget as max_tokens, an effort as effort (max as high) — and nothing unasked; a request's
// own reasoning_effort goes as it is, without the object. Other compatible servers get none.
func TestOpenRouterReasoning(t *testing.T) {
	up := newFakeUpstream(t, "application/json", openAIAnswer(`"content":"ok"`))
	for _, c := range []struct {
		name     string
		thinking *providers.Thinking
		own      string
		want     string
	}{
		{"openrouter", &providers.Thinking{BudgetTokens: 3000}, "", `{"max_tokens":3000}`},
		{"openrouter", &providers.Thinking{Effort: "max"}, "", `{"effort":"high"}`},
		{"openrouter", &providers.Thinking{}, "", `{"effort":"medium"}`},
		{"openrouter", nil, "", "null"},
		{"openrouter", &providers.Thinking{Effort: "high"}, "low", "null"},
		{"groq", &providers.Thinking{Effort: "high"}, "", "null"},
	} {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: c.name, BaseURL: up.srv.URL + "/v1", APIKey: testKey, HTTPClient: up.srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		req := thinkingUser("anthropic/claude-sonnet-4.5", c.thinking)
		req.ReasoningEffort = c.own
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		sent := up.last(t)
		if got := jsonOf(sent["reasoning"]); got != c.want {
			t.Errorf("%s %+v own %q: reasoning %s, want %s", c.name, c.thinking, c.own, got, c.want)
		}
	}
}
