package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestLiteLLMResponseHeaders: an answer of a model group's deployment carries LiteLLM's
// x-litellm-model-id (its model_info.id), x-litellm-model-api-base, x-litellm-model-group,
// and, whole, x-litellm-response-cost (the billed cost, as /spend/logs has it) and the
// duration headers; a stream carries those naming the deployment (its cost is not known
// when the headers go out).
func TestLiteLLMResponseHeaders(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`+"\n\n")
			io.WriteString(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}}`)
	}))
	t.Cleanup(up.Close)
	st := newTestStore(t)
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + up.URL + `/v1?tenant=secret", api_key: sk-a}
    model_info: {id: dep-a}
`)
	hs := deploymentServer(t, st, config)
	send := func(body string) (http.Header, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, out)
		}
		return resp.Header, string(out)
	}
	h, _ := send(`{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`)
	for name, want := range map[string]string{"X-Litellm-Model-Id": "dep-a", "X-Litellm-Model-Group": "gpt", "X-Litellm-Model-Api-Base": up.URL + "/v1"} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	// gpt-4o's catalogue price: 1000 input and 500 output tokens.
	cost, err := strconv.ParseFloat(h.Get("X-Litellm-Response-Cost"), 64)
	if want := 1000*2.5e-6 + 500*10e-6; err != nil || fmt.Sprintf("%.6f", cost) != fmt.Sprintf("%.6f", want) {
		t.Errorf("X-Litellm-Response-Cost %q, want %g", h.Get("X-Litellm-Response-Cost"), want)
	}
	total, err1 := strconv.ParseFloat(h.Get("X-Litellm-Response-Duration-Ms"), 64)
	overhead, err2 := strconv.ParseFloat(h.Get("X-Litellm-Overhead-Duration-Ms"), 64)
	if err1 != nil || err2 != nil || total <= 0 || overhead < 0 || overhead > total {
		t.Errorf("durations %q, overhead %q", h.Get("X-Litellm-Response-Duration-Ms"), h.Get("X-Litellm-Overhead-Duration-Ms"))
	}

	h, body := send(`{"model":"gpt","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(body, "[DONE]") {
		t.Fatalf("stream: %s", body)
	}
	if h.Get("X-Litellm-Model-Id") != "dep-a" || h.Get("X-Litellm-Model-Group") != "gpt" || h.Get("X-Litellm-Model-Api-Base") != up.URL+"/v1" {
		t.Errorf("stream headers: %v", h)
	}
	if h.Get("X-Litellm-Response-Cost") != "" {
		t.Errorf("a stream's cost header %q: not known when the headers go out", h.Get("X-Litellm-Response-Cost"))
	}
}
