package completions

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// cannedOpenAIHarness is a harness whose providers are its fake "a" and, for each name of
// bodies, a real OpenAI adapter of that name whose upstream answers every chat request
// bodies[name] as contentType.
func cannedOpenAIHarness(t *testing.T, contentType string, bodies map[string]string) *harness {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		io.WriteString(w, bodies[name])
	}))
	t.Cleanup(up.Close)
	reg := fakeRegistry{}
	for name := range bodies {
		p, err := providers.New(providers.FormatOpenAI, providers.Config{Name: name, BaseURL: up.URL + "/" + name, APIKey: "k", HTTPClient: up.Client()})
		if err != nil {
			t.Fatal(err)
		}
		reg[name] = p
	}
	return newHarness(t, func(o *Options) { reg["a"] = o.Providers.(fakeRegistry)["a"]; o.Providers = reg })
}

// A whole chat.completion keeps the service_tier and system_fingerprint an OpenAI-format
// upstream sent (as OpenAI's recorded answers carry them), and has neither when the
// upstream sent none or null: the gateway never makes one up.
func TestReview23eChatCompletionKeepsFingerprint(t *testing.T) {
	h := cannedOpenAIHarness(t, "application/json", map[string]string{
		"fp":   `{"id":"x","object":"chat.completion","created":1,"model":"gpt-x","service_tier":"default","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
		"null": `{"id":"x","object":"chat.completion","created":1,"model":"gpt-x","system_fingerprint":null,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
	})
	for model, want := range map[string][2]any{
		"fp/gpt-x":   {"default", "fp_44709d6fcb"},
		"null/gpt-x": {nil, nil},
		"a/m":        {nil, nil}, // not an OpenAI-format upstream
	} {
		resp, err := h.g.Complete(context.Background(), Scope{}, userReq("hi", model))
		if err != nil {
			t.Fatalf("%s: %v", model, err)
		}
		b, _ := json.Marshal(NewOpenAIChatCompletion(resp, time.Unix(1, 0)))
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got["service_tier"] != want[0] || got["system_fingerprint"] != want[1] {
			t.Errorf("%s: service_tier %v system_fingerprint %v, want %v", model, got["service_tier"], got["system_fingerprint"], want)
		}
	}
}
