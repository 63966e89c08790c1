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
	send := func(body string) (http.Header, string) { return postOK(t, hs, "/v1/chat/completions", body) }
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

	if h.Get("X-Litellm-Attempted-Retries") != "0" || h.Get("X-Litellm-Attempted-Fallbacks") != "0" {
		t.Errorf("an answer at the first call: retries %q, fallbacks %q", h.Get("X-Litellm-Attempted-Retries"), h.Get("X-Litellm-Attempted-Fallbacks"))
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

// TestLiteLLMResponseHeadersAfterFallback: a group whose member fails and whose fallback
// group answers names the answering deployment (the fallback's, by its model_info.id) and
// the group asked for, and counts the fallback (and the failed member's retries).
func TestLiteLLMResponseHeadersAfterFallback(t *testing.T) {
	up, _ := deploymentUpstream(t, "backup")
	h, b := postOK(t, fallbackServer(t, up), "/v1/chat/completions", `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`)
	if !strings.Contains(b, "from backup") {
		t.Fatalf("%s", b)
	}
	if h.Get("X-Litellm-Model-Id") != "dep-backup" || h.Get("X-Litellm-Model-Group") != "gpt" || h.Get("X-Litellm-Model-Api-Base") != up.URL+"/v1" {
		t.Errorf("after the fallback: model id %q, group %q, api base %q", h.Get("X-Litellm-Model-Id"), h.Get("X-Litellm-Model-Group"), h.Get("X-Litellm-Model-Api-Base"))
	}
	retries, err := strconv.Atoi(h.Get("X-Litellm-Attempted-Retries"))
	if h.Get("X-Litellm-Attempted-Fallbacks") != "1" || err != nil || retries < 0 {
		t.Errorf("after the fallback: fallbacks %q, retries %q", h.Get("X-Litellm-Attempted-Fallbacks"), h.Get("X-Litellm-Attempted-Retries"))
	}
	t.Logf("retries %d", retries)
}

// postOK posts body to path of hs with the operator's key and returns the answer's headers
// and body, failing t unless it is a 200.
func postOK(t *testing.T, hs *httptest.Server, path, body string) (http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
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

// fallbackServer serves the model groups gpt (dep-down, whose upstream answers 500) and
// backup (dep-backup on up), gpt falling back to backup.
func fallbackServer(t *testing.T, up *httptest.Server) *httptest.Server {
	t.Helper()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + down.URL + `/v1", api_key: sk-a}
    model_info: {id: dep-down}
  - model_name: backup
    litellm_params: {model: openai/gpt-4o-mini, api_base: "` + up.URL + `/v1", api_key: sk-b}
    model_info: {id: dep-backup}
router_settings:
  fallbacks: [{gpt: [backup]}]
`)
	return deploymentServer(t, newTestStore(t), config)
}
