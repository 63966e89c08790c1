package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestPassThroughUpstreamRequestID: the client gets the server's own X-Request-Id and
// the provider's request id too — OpenAI's x-request-id as llm_provider-x-request-id
// (LiteLLM's name for a provider's header), Anthropic's request-id as it came.
func TestPassThroughUpstreamRequestID(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/messages" {
			w.Header().Set("Request-Id", "req_anthropic_1")
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"Hi"}],"usage":{"input_tokens":10,"output_tokens":5}}`)
			return
		}
		w.Header().Set("X-Request-Id", "req_openai_1")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
	}))
	t.Cleanup(up.Close)
	hs, _ := passThroughServerOver(t, providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL + "/v1", APIKey: "server-openai-key"}),
		providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "server-anthropic-key"})))
	auth := map[string]string{"Authorization": "Bearer " + testKey}
	resp, b := sendPassThrough(t, "POST", hs.URL+"/openai/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("openai: %d %s", resp.StatusCode, b)
	}
	if own := resp.Header.Get("X-Request-Id"); own == "" || own == "req_openai_1" {
		t.Errorf("openai: X-Request-Id %q, want the server's own", own)
	}
	if got := resp.Header.Get("llm_provider-x-request-id"); got != "req_openai_1" {
		t.Errorf("openai: llm_provider-x-request-id %q, want the provider's req_openai_1", got)
	}
	resp, b = sendPassThrough(t, "POST", hs.URL+"/anthropic/v1/messages", `{"model":"claude-haiku-4-5-20251001","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, auth)
	if resp.StatusCode != 200 || resp.Header.Get("Request-Id") != "req_anthropic_1" || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("anthropic: %d request-id %q X-Request-Id %q, want the provider's and the server's", resp.StatusCode, resp.Header.Get("Request-Id"), resp.Header.Get("X-Request-Id"))
	}
}
