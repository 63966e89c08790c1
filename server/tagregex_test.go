package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLiteLLMTagRegex: a deployment's litellm_params.tag_regex (LiteLLM's) selects it
// for callers whose User-Agent matches ("User-Agent: claude-cli/…"), other callers go to
// the deployment tagged default, a request's "&tag" requires the tag (patterns select
// nothing then) and "!tag" leaves a deployment out; /model/info shows the patterns as configured.
func TestLiteLLMTagRegex(t *testing.T) {
	a, _ := deploymentUpstream(t, "a")
	b, _ := deploymentUpstream(t, "b")
	st := newTestStore(t)
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + a.URL + `/v1", api_key: sk-a, tag_regex: ["^User-Agent: claude-cli\\/"]}
    model_info: {id: dep-a}
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o-mini, api_base: "` + b.URL + `/v1", api_key: sk-b, tags: [default, cheap]}
    model_info: {id: dep-b}
router_settings:
  enable_tag_filtering: true
`)
	s := tagModelsServer(t, st, config)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	chat := func(agent, tags string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt","max_retries":0,"tags":[`+tags+`],"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", agent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, c := range []struct {
		agent, tags string
		status      int
		from        string
	}{
		{"claude-cli/2.0.14 (external, cli)", ``, http.StatusOK, "a"},
		{"curl/8.5.0", ``, http.StatusOK, "b"},
		{"OpenAI/Python 1.99.0", ``, http.StatusOK, "b"},
		{"claude-cli/2.0.14 (external, cli)", `"&cheap"`, http.StatusOK, "b"}, // a required tag: patterns do not select
		{"curl/8.5.0", `"!cheap"`, http.StatusUnauthorized, ""},               // the only default left out
		{"claude-cli/2.0.14 (external, cli)", `"!cheap"`, http.StatusOK, "a"},
	} {
		for range 5 {
			st, body := chat(c.agent, c.tags)
			if st != c.status || (c.from != "" && !strings.Contains(body, "from "+c.from)) {
				t.Fatalf("User-Agent %q, tags [%s]: %d %s; want %d from %q", c.agent, c.tags, st, body, c.status, c.from)
			}
		}
	}
	if r := do(t, s, "GET", "/model/info", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"tag_regex":["^User-Agent: claude-cli\\/"]`) {
		t.Errorf("/model/info: %d %s, want dep-a's tag_regex", r.status, r.raw)
	}
}
