package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestCountTokensTags: /v1/messages/count_tokens and Gemini's countTokens take the
// x-litellm-tags header's tags and the calling key's tags as /v1/messages and
// generateContent do: a tag-filtered group none of whose members they select is LiteLLM's
// 401 on each, and a tag that selects one is counted.
func TestCountTokensTags(t *testing.T) {
	s, call := tagGroupServer(t)
	const messages = `{"model":"gpt-4","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	const gemini = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	const refused = "Not allowed to access model due to tags configuration. Passed model=gpt-4 and tags=['teamC']"
	routes := []struct{ name, path, body, counted string }{
		{"/v1/messages", "/v1/messages", messages, ""},
		{"count_tokens", "/v1/messages/count_tokens", messages, `"input_tokens":`},
		{"generateContent", "/v1beta/models/gpt-4:generateContent", gemini, ""},
		{"countTokens", "/v1beta/models/gpt-4:countTokens", gemini, `"totalTokens":`},
	}
	for _, rt := range routes {
		if st, b := call(testKey, rt.path, "teamC", rt.body); st != http.StatusUnauthorized || !strings.Contains(b, refused) {
			t.Errorf("%s, x-litellm-tags teamC: %d %s; want LiteLLM's 401", rt.name, st, b)
		}
		if st, b := call(testKey, rt.path, "teamA", rt.body); st != http.StatusOK || !strings.Contains(b, rt.counted) {
			t.Errorf("%s, x-litellm-tags teamA: %d %s; want 200", rt.name, st, b)
		}
	}

	// A key's tags, as LiteLLM's key-level tags.
	k := litellmGenerate(t, s, `{"tags":["teamC"]}`)
	for _, rt := range routes {
		if st, b := call(k.Key, rt.path, "", rt.body); st != http.StatusUnauthorized || !strings.Contains(b, refused) {
			t.Errorf("%s, a key tagged teamC: %d %s; want LiteLLM's 401", rt.name, st, b)
		}
	}
}

// tagGroupServer serves the tag-filtered model group "gpt-4" (openai/ok tagged teamA,
// openai/ok2 tagged teamB) with virtual keys; call posts body to path with key (as a
// bearer and a Gemini key) and x-litellm-tags header (none: "").
func tagGroupServer(t *testing.T) (*Server, func(key, path, header, body string) (int, string)) {
	t.Helper()
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices: providers.DefaultCatalog(), Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"gpt-4": {Models: []string{"openai/ok", "openai/ok2"},
			Tags: [][]string{{"teamA"}, {"teamB"}}, TagFiltering: true}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, func(key, path, header, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-Goog-Api-Key", key)
		if header != "" {
			req.Header.Set("x-litellm-tags", header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}
