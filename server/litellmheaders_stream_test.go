package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A stream a fallback group answered names the answering deployment in x-litellm-model-id
// (by the name its attempt was asked by), as a whole answer does: not the id the answering
// model would have under the group asked, which is no deployment.
func TestLiteLLMStreamHeadersAfterFallback(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"from backup"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	h, b := postOK(t, fallbackServer(t, up), "/v1/chat/completions", `{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(b, "from backup") {
		t.Fatalf("%s", b)
	}
	if h.Get("X-Litellm-Model-Id") != "dep-backup" || h.Get("X-Litellm-Model-Group") != "gpt" || h.Get("X-Litellm-Model-Api-Base") != up.URL+"/v1" {
		t.Errorf("stream after the fallback: model id %q, group %q, api base %q", h.Get("X-Litellm-Model-Id"), h.Get("X-Litellm-Model-Group"), h.Get("X-Litellm-Model-Api-Base"))
	}
}

// /v1/completions (OpenAI's legacy text completions) answers carry LiteLLM's response
// headers too, as the README and chat's answers say.
func TestLiteLLMTextCompletionHeaders(t *testing.T) {
	up, _ := deploymentUpstream(t, "a")
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + up.URL + `/v1", api_key: sk-a}
    model_info: {id: dep-a}
`)
	h, _ := postOK(t, deploymentServer(t, newTestStore(t), config), "/v1/completions", `{"model":"gpt","prompt":"hi"}`)
	if h.Get("X-Litellm-Model-Id") != "dep-a" || h.Get("X-Litellm-Model-Group") != "gpt" || h.Get("X-Litellm-Response-Cost") == "" {
		t.Errorf("/v1/completions: model id %q, group %q, cost %q", h.Get("X-Litellm-Model-Id"), h.Get("X-Litellm-Model-Group"), h.Get("X-Litellm-Response-Cost"))
	}
}

// A stream of n > 1 choices names the deployment answering its first choice, as a stream
// of one does (chat and text completions).
func TestLiteLLMStreamNHeaders(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + up.URL + `/v1", api_key: sk-a}
    model_info: {id: dep-a}
`)
	s := deploymentServer(t, newTestStore(t), config)
	for _, c := range []struct{ path, body string }{
		{"/v1/chat/completions", `{"model":"gpt","n":2,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/completions", `{"model":"gpt","n":2,"stream":true,"prompt":"hi"}`},
	} {
		h, _ := postOK(t, s, c.path, c.body)
		if h.Get("X-Litellm-Model-Id") != "dep-a" || h.Get("X-Litellm-Model-Group") != "gpt" || h.Get("X-Litellm-Model-Api-Base") != up.URL+"/v1" {
			t.Errorf("%s n=2 stream: model id %q, group %q, api base %q", c.path, h.Get("X-Litellm-Model-Id"), h.Get("X-Litellm-Model-Group"), h.Get("X-Litellm-Model-Api-Base"))
		}
	}
}
