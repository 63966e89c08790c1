package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// countingUpstream is a fakeOpenAIUpstream counting its calls in calls.
func countingUpstream(t *testing.T, calls *atomic.Int64) *httptest.Server {
	up := &fakeOpenAIUpstream{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs
}

// TestTagRoutingOverHTTP: an OpenAI-style request with metadata.tags (or LiteLLM's
// x-litellm-tags header) to a tag-filtered model group reaches only the deployment carrying
// its tag; one an untagged request would not use and no deployment's tag selects is LiteLLM's
// 401 naming the model and the tags; /model/info shows each deployment's tags.
func TestTagRoutingOverHTTP(t *testing.T) {
	var freeCalls, paidCalls atomic.Int64
	free, paid := countingUpstream(t, &freeCalls), countingUpstream(t, &paidCalls)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "free", BaseURL: free.URL + "/v1", APIKey: "sk-free"}),
		providers.NewOpenAI(providers.Config{Name: "paid", BaseURL: paid.URL + "/v1", APIKey: "sk-paid"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"gpt-4": {Models: []string{"free/ok", "paid/ok"}, Shuffle: true,
			Tags: [][]string{{"free"}, {"paid"}}, TagFiltering: true}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)

	for range 8 {
		resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt-4","metadata":{"tags":["paid"]},"messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("tagged paid: %d %s", resp.StatusCode, out)
		}
	}
	if freeCalls.Load() != 0 || paidCalls.Load() != 8 {
		t.Errorf("free called %d, paid %d times: want only paid, 8 times", freeCalls.Load(), paidCalls.Load())
	}
	req, _ := http.NewRequest("POST", hs.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("x-litellm-tags", "free")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || freeCalls.Load() != 1 {
		t.Errorf("x-litellm-tags free: %d, free called %d times, want 200 and once", resp.StatusCode, freeCalls.Load())
	}

	// No deployment carries "enterprise" and none is "default": LiteLLM's 401.
	resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"gpt-4","metadata":{"tags":["enterprise"]},"messages":[{"role":"user","content":"hi"}]}`)
	var e struct {
		Error struct{ Message, Type, Code string }
	}
	json.Unmarshal(out, &e)
	if resp.StatusCode != http.StatusUnauthorized || e.Error.Type != "auth_error" ||
		e.Error.Message != "Not allowed to access model due to tags configuration. Passed model=gpt-4 and tags=['enterprise']" {
		t.Errorf("no match: %d %s, want LiteLLM's 401 naming gpt-4 and enterprise", resp.StatusCode, out)
	}
	if n := freeCalls.Load() + paidCalls.Load(); n != 9 {
		t.Errorf("%d upstream calls, want 9 (the refused request calls none)", n)
	}

	req, _ = http.NewRequest("GET", hs.URL+"/model/info", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Data []struct {
			ModelName     string `json:"model_name"`
			LiteLLMParams struct {
				Model string   `json:"model"`
				Tags  []string `json:"tags"`
			} `json:"litellm_params"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&info)
	got := map[string]string{}
	for _, d := range info.Data {
		if d.ModelName == "gpt-4" {
			got[d.LiteLLMParams.Model] = strings.Join(d.LiteLLMParams.Tags, ",")
		}
	}
	if got["free/ok"] != "free" || got["paid/ok"] != "paid" {
		t.Errorf("/model/info tags %v, want free/ok: free, paid/ok: paid", got)
	}
}
