package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestLiteLLMDeploymentParams: a deployment's litellm_params temperature and max_tokens
// (in the config file, or given by /model/new) are sent to its upstream when the request
// leaves them unset, the request's own winning; /model/info shows them.
func TestLiteLLMDeploymentParams(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]map[string]any{}
	upstream := func(name string) *httptest.Server {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var m map[string]any
			json.NewDecoder(r.Body).Decode(&m)
			mu.Lock()
			sent[name] = m
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, name)
		}))
		t.Cleanup(hs.Close)
		return hs
	}
	a, b := upstream("a"), upstream("b")
	st := newTestStore(t)
	s := tagModelsServer(t, st, []byte(`model_list:
  - model_name: tuned
    litellm_params: {model: openai/gpt-4o, api_base: "`+a.URL+`/v1", api_key: sk-a, temperature: 0.1, max_tokens: 1234}
`))
	chat := func(model, extra string) {
		t.Helper()
		if r := do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"`+model+`"`+extra+`,"messages":[{"role":"user","content":"hi"}]}`); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", model, r.status, r.raw)
		}
	}
	tokens := func(m map[string]any) any {
		if v, ok := m["max_completion_tokens"]; ok {
			return v
		}
		return m["max_tokens"]
	}
	chat("tuned", "")
	if m := sent["a"]; m["temperature"] != 0.1 || tokens(m) != 1234.0 {
		t.Errorf("sent %v, want the deployment's temperature 0.1 and max_tokens 1234", m)
	}
	chat("tuned", `,"temperature":0.7,"max_tokens":5`)
	if m := sent["a"]; m["temperature"] != 0.7 || tokens(m) != 5.0 {
		t.Errorf("sent %v, want the request's own temperature and max_tokens", m)
	}
	if r := do(t, s, "POST", "/model/new", testKey, `{"model_name":"added","litellm_params":{"model":"openai/gpt-4o-mini","api_base":"`+b.URL+`/v1","api_key":"sk-b","temperature":0.3}}`); r.status != http.StatusOK {
		t.Fatalf("/model/new: %d %s", r.status, r.raw)
	}
	chat("added", "")
	if m := sent["b"]; m["temperature"] != 0.3 {
		t.Errorf("sent %v, want /model/new's temperature 0.3", m)
	}
	r := do(t, s, "GET", "/model/info", testKey, "")
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"temperature":0.1,"max_tokens":1234`) || !strings.Contains(r.raw, `"temperature":0.3`) {
		t.Errorf("/model/info: %d %s, want the deployments' parameters", r.status, r.raw)
	}
}

// TestLiteLLMDeploymentExtraHeaders: a config deployment's extra_headers reach its
// upstream with every call; /model/new refuses them (they are not stored), naming the
// field; /model/info does not show their values.
func TestLiteLLMDeploymentExtraHeaders(t *testing.T) {
	var mu sync.Mutex
	var got http.Header
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`)
	}))
	t.Cleanup(hs.Close)
	st := newTestStore(t)
	s := tagModelsServer(t, st, []byte(`model_list:
  - model_name: routed
    litellm_params: {model: openai/some-model, api_base: "`+hs.URL+`/v1", api_key: sk-a, extra_headers: {HTTP-Referer: "https://app.example", X-Proxy-Key: "pk-secret-123456"}}
`))
	if r := do(t, s, "POST", "/v1/chat/completions", testKey, `{"model":"routed","messages":[{"role":"user","content":"hi"}]}`); r.status != http.StatusOK {
		t.Fatalf("chat: %d %s", r.status, r.raw)
	}
	mu.Lock()
	if got.Get("HTTP-Referer") != "https://app.example" || got.Get("X-Proxy-Key") != "pk-secret-123456" || got.Get("Authorization") != "Bearer sk-a" {
		t.Errorf("upstream headers %v", got)
	}
	mu.Unlock()
	if r := do(t, s, "POST", "/model/new", testKey, `{"model_name":"x","litellm_params":{"model":"openai/gpt-4o","api_key":"sk-b","extra_headers":{"X-A":"b"}}}`); r.status != http.StatusBadRequest || !strings.Contains(r.raw, "litellm_params.extra_headers") {
		t.Errorf("/model/new with extra_headers: %d %s, want a 400 naming the field", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/model/info", testKey, ""); strings.Contains(r.raw, "pk-secret-123456") {
		t.Errorf("/model/info shows a header's value: %s", r.raw)
	}
}
