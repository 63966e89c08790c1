package completions

// Review 10b: CompleteN shares one Request's slices (tools, messages, schema) across n
// concurrent attempts on the real adapters; run with -race (package completions).

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

func TestReview10bCompleteNRealAdaptersRace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/messages"):
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"{\"a\":1}"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}`)
		case strings.Contains(r.URL.Path, "generateContent"):
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"a\":1}"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}`)
		default:
			io.WriteString(w, `{"id":"c","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}","annotations":[]},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
		}
	}))
	defer srv.Close()
	reg := fakeRegistry{
		"openai":    providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: srv.URL + "/v1", APIKey: "k"}),
		"anthropic": providers.NewAnthropic(providers.Config{BaseURL: srv.URL, APIKey: "k"}),
		"gemini":    providers.NewGemini(providers.Config{BaseURL: srv.URL, APIKey: "k"}),
	}
	h := newHarness(t, func(o *Options) { o.Providers = reg; o.Prices = providers.DefaultCatalog() })
	for _, model := range []string{"openai/gpt-4o", "anthropic/claude-sonnet-4-5", "gemini/gemini-2.5-flash"} {
		req, err := chatBody(t, `{"model":"`+model+`","fallback_models":["openai/gpt-4o"],"stop":["x","y"],
			"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"q":{"type":"string","format":"date"}},"additionalProperties":false}}}],
			"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}}},
			"reasoning_effort":"low",
			"messages":[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]}]}`)
		if err != nil {
			t.Fatal(err)
		}
		rs, _, err := h.g.CompleteN(context.Background(), Scope{}, req, 8)
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		_ = NewOpenAIChatCompletionN(rs, h.g.opts.Now())
	}
}
