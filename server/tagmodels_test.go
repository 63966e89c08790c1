package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/deployments"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

// TestLiteLLMTagModels: /tag/new's models (deployment ids, model_info.id, or a model
// group's name) make those deployments carry the tag for tag routing, as LiteLLM adds the
// tag to their litellm_params.tags: a request tagged so reaches them (before: LiteLLM's tags
// 401); /tag/update's models replace the tag's, null removes them, /tag/delete takes the
// tag off; /tag/info and /tag/list answer the models.
func TestLiteLLMTagModels(t *testing.T) {
	a, _ := deploymentUpstream(t, "a")
	b, _ := deploymentUpstream(t, "b")
	st := newTestStore(t)
	config := []byte(`model_list:
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o, api_base: "` + a.URL + `/v1", api_key: sk-a, tags: [free]}
    model_info: {id: dep-a}
  - model_name: gpt
    litellm_params: {model: openai/gpt-4o-mini, api_base: "` + b.URL + `/v1", api_key: sk-b}
    model_info: {id: dep-b}
router_settings:
  enable_tag_filtering: true
`)
	s := tagModelsServer(t, st, config)
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	chat := func(tag string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt","max_retries":0,"metadata":{"tags":["`+tag+`"]},"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	want := func(tag string, status int, from string) {
		t.Helper()
		if st, body := chat(tag); st != status || (from != "" && !strings.Contains(body, "from "+from)) {
			t.Fatalf("a request tagged %s: %d %s; want %d from %q", tag, st, body, status, from)
		}
	}
	want("free", http.StatusOK, "a")
	want("teamX", http.StatusUnauthorized, "")

	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"teamX","models":["dep-b"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"models":["dep-b"]`) {
		t.Fatalf("/tag/new models: %d %s", r.status, r.raw)
	}
	want("teamX", http.StatusOK, "b")
	want("free", http.StatusOK, "a") // a deployment's own tags stay
	if r := do(t, s, "POST", "/tag/info", testKey, `{"names":["teamX"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"models":["dep-b"]`) {
		t.Fatalf("/tag/info: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/tag/update", testKey, `{"name":"teamX","models":["dep-a"]}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"models":["dep-a"]`) {
		t.Fatalf("/tag/update models: %d %s", r.status, r.raw)
	}
	want("teamX", http.StatusOK, "a")
	if r := do(t, s, "POST", "/tag/update", testKey, `{"name":"teamX","models":null}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"models":[]`) {
		t.Fatalf("/tag/update models null: %d %s", r.status, r.raw)
	}
	want("teamX", http.StatusUnauthorized, "")

	// A model group's name: each of its deployments carries the tag.
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"all","models":["gpt","nosuch-deployment"]}`); r.status != http.StatusOK {
		t.Fatalf("/tag/new models of a group: %d %s", r.status, r.raw)
	}
	want("all", http.StatusOK, "")
	if r := do(t, s, "GET", "/tag/list", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"models":["gpt","nosuch-deployment"]`) {
		t.Fatalf("/tag/list: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/tag/delete", testKey, `{"name":"all"}`); r.status != http.StatusOK {
		t.Fatalf("/tag/delete: %d %s", r.status, r.raw)
	}
	want("all", http.StatusUnauthorized, "")
}

// tagModelsServer serves st's stored deployments over a gateway of the config file config,
// the tags /tag/new's models give deployments applied (LiteLLMTagModels), as serve does.
func tagModelsServer(t *testing.T, st *store.Store, config []byte) *Server {
	t.Helper()
	reg := providers.FromEnv(func(string) string { return "" }, providers.Options{})
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := deployments.New(deployments.Options{Store: st, Gateway: g, Registry: reg, Config: config,
		SecretKey: []byte("salt-for-tests"), LookupEnv: func(string) (string, bool) { return "", false }, DeploymentTags: LiteLLMTagModels(st)})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	for _, opt := range []Option{Completions(g), StoredDeployments(svc)} {
		if err := opt(s); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
