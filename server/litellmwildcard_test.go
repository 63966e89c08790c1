package server

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// wildcardUpstream is a scripted OpenAI upstream answering chat and embeddings with its
// own name; it records the models it was asked for, in order.
func wildcardUpstream(t *testing.T, name string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		asked = append(asked, body.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/embeddings") {
			fmt.Fprintf(w, `{"object":"list","model":%q,"data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":{"prompt_tokens":2,"total_tokens":2}}`, body.Model)
			return
		}
		fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"from %s"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, body.Model, name)
	}))
	t.Cleanup(hs.Close)
	return hs, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestLiteLLMWildcardRoutesUnknownNames: a LiteLLM config's model_name "*" with model
// openai/* sends a name the price catalogue does not know (an OpenAI fine-tune id, a
// custom name) to openai by that name, on chat and embeddings, as LiteLLM's wildcard
// routing does (they were a 404 model_not_found); an explicit model_name still answers
// for itself; a key limited to some models does not reach others through the wildcard.
func TestLiteLLMWildcardRoutesUnknownNames(t *testing.T) {
	wild, wildAsked := wildcardUpstream(t, "wild")
	team, _ := wildcardUpstream(t, "team")
	config := []byte("model_list:\n" +
		"  - model_name: gpt-4o-team\n    litellm_params:\n      model: openai/gpt-4o\n      api_key: sk-team\n      api_base: " + team.URL + "/v1\n" +
		"  - model_name: \"*\"\n    litellm_params:\n      model: openai/*\n      api_key: sk-wild\n      api_base: " + wild.URL + "/v1\n")
	hs := deploymentServer(t, newTestStore(t), config)
	chat := func(key, model string) (int, string) {
		t.Helper()
		return keyCall(t, hs, key, "/v1/chat/completions", `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	}
	for _, model := range []string{"ft:gpt-4o-mini-2024-07-18:org::abc", "my-finetune-xyz"} {
		code, out := chat(testKey, model)
		if code != http.StatusOK || !strings.Contains(out, "from wild") {
			t.Fatalf("chat %s through the wildcard: %d %s", model, code, out)
		}
		if a := wildAsked(); len(a) == 0 || a[len(a)-1] != model {
			t.Errorf("chat %s: the upstream was asked for %v, want %s last", model, a, model)
		}
	}
	// The fine-tune is priced as LiteLLM prices it: at its base's fine-tuning rates
	// (ft:gpt-4o-mini-2024-07-18: $0.30 and $1.20 per million), 3 prompt and 2 completion tokens.
	_, _, h := keyCallHeader(t, hs, testKey, "/v1/chat/completions", `{"model":"ft:gpt-4o-mini-2024-07-18:org::abc","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	if cost, err := strconv.ParseFloat(h.Get("X-Litellm-Response-Cost"), 64); err != nil || math.Abs(cost-(3*3e-7+2*1.2e-6)) > 1e-12 {
		t.Errorf("the fine-tune's X-Litellm-Response-Cost %q, want %g", h.Get("X-Litellm-Response-Cost"), 3*3e-7+2*1.2e-6)
	}
	if code, out := chat(testKey, "gpt-4o-team"); code != http.StatusOK || !strings.Contains(out, "from team") {
		t.Errorf("the explicit model_name: %d %s, want its own deployment", code, out)
	}
	code, out := keyCall(t, hs, testKey, "/v1/embeddings", `{"model":"my-embedder-ft","input":"hi"}`)
	if code != http.StatusOK {
		t.Errorf("embeddings through the wildcard: %d %s", code, out)
	} else if a := wildAsked(); a[len(a)-1] != "my-embedder-ft" {
		t.Errorf("embeddings: the upstream was asked for %v", a)
	}

	// A key limited to the team's model: the wildcard does not open other names to it.
	code, out = keyCall(t, hs, testKey, "/key/generate", `{"models":["gpt-4o-team"]}`)
	if code != http.StatusOK {
		t.Fatalf("/key/generate: %d %s", code, out)
	}
	var g struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.Key == "" {
		t.Fatalf("/key/generate answer %s: %v", out, err)
	}
	if code, out := chat(g.Key, "my-finetune-xyz"); code != http.StatusUnauthorized || !strings.Contains(out, "my-finetune-xyz") {
		t.Errorf("a limited key through the wildcard: %d %s, want a 401 naming the model", code, out)
	}
	if code, out := chat(g.Key, "gpt-4o-team"); code != http.StatusOK {
		t.Errorf("a limited key's own model: %d %s", code, out)
	}
	// A key that names the fine-tune reaches it.
	code, out = keyCall(t, hs, testKey, "/key/generate", `{"models":["my-finetune-xyz"]}`)
	if code != http.StatusOK {
		t.Fatalf("/key/generate naming the fine-tune: %d %s", code, out)
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	if code, out := chat(g.Key, "my-finetune-xyz"); code != http.StatusOK || !strings.Contains(out, "from wild") {
		t.Errorf("a key naming the fine-tune: %d %s", code, out)
	}
	// Keys' models may be patterns, as LiteLLM's: matched against the name asked, or the
	// provider/model it resolves to.
	for models, cases := range map[string]map[string]int{
		`["my-*"]`:     {"my-finetune-xyz": http.StatusOK, "ft:gpt-4o-mini-2024-07-18:org::abc": http.StatusUnauthorized, "gpt-4o-team": http.StatusUnauthorized},
		`["openai/*"]`: {"my-finetune-xyz": http.StatusOK, "openai/my-finetune-xyz": http.StatusOK, "anthropic/claude-sonnet-4-5": http.StatusUnauthorized},
	} {
		code, out := keyCall(t, hs, testKey, "/key/generate", `{"models":`+models+`}`)
		if code != http.StatusOK {
			t.Fatalf("/key/generate models %s: %d %s", models, code, out)
		}
		if err := json.Unmarshal([]byte(out), &g); err != nil {
			t.Fatal(err)
		}
		for model, want := range cases {
			if code, out := chat(g.Key, model); code != want {
				t.Errorf("a key of models %s asking %s: %d %s, want %d", models, model, code, out, want)
			}
		}
	}
}

// TestLiteLLMProviderWildcards: model_name openai/* serves its provider's names and an
// OpenAI fine-tune id (LiteLLM places ft:gpt-… with openai) but not a bare name of no
// provider (LiteLLM refuses it too); a pattern of no provider (custom/*) sends its names
// to its model's provider; the more specific of two patterns wins.
func TestLiteLLMProviderWildcards(t *testing.T) {
	wild, wildAsked := wildcardUpstream(t, "wild")
	config := []byte("model_list:\n" +
		"  - model_name: openai/*\n    litellm_params:\n      model: openai/*\n      api_key: sk-wild\n      api_base: " + wild.URL + "/v1\n" +
		"  - model_name: custom/*\n    litellm_params:\n      model: openai/*\n" +
		"  - model_name: custom/tuned-*\n    litellm_params:\n      model: openai/ft:gpt-4o-mini-2024-07-18:org::*\n")
	hs := deploymentServer(t, newTestStore(t), config)
	chat := func(model string) (int, string) {
		t.Helper()
		return keyCall(t, hs, testKey, "/v1/chat/completions", `{"model":"`+model+`","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
	}
	for model, want := range map[string]string{
		"openai/my-finetune-xyz":             "my-finetune-xyz",
		"ft:gpt-4o-mini-2024-07-18:org::abc": "ft:gpt-4o-mini-2024-07-18:org::abc",
		"custom/my-model":                    "my-model",
		"custom/tuned-abc":                   "ft:gpt-4o-mini-2024-07-18:org::abc",
	} {
		code, out := chat(model)
		if code != http.StatusOK || !strings.Contains(out, "from wild") {
			t.Errorf("chat %s: %d %s", model, code, out)
			continue
		}
		if a := wildAsked(); a[len(a)-1] != want {
			t.Errorf("chat %s: the upstream was asked for %q, want %q", model, a[len(a)-1], want)
		}
	}
	if code, out := chat("my-finetune-xyz"); code != http.StatusNotFound {
		t.Errorf("a bare name of no provider under openai/*: %d %s, want a 404", code, out)
	}
}

// keyCall POSTs body to path on hs with the API key key.
func keyCall(t *testing.T, hs *httptest.Server, key, path, body string) (int, string) {
	t.Helper()
	code, out, _ := keyCallHeader(t, hs, key, path, body)
	return code, out
}

// keyCallHeader is keyCall with the answer's header.
func keyCallHeader(t *testing.T, hs *httptest.Server, key, path, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}
