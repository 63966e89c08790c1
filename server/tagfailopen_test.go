package server

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestTagFailOpenKeepsTheKeysTags: a group with LiteLLM's allow_fail_open drops the
// caller's own "!tag" when it leaves no deployment, but never the virtual key's: the
// key's tags reach the gateway as the request's inherited tags.
func TestTagFailOpenKeepsTheKeysTags(t *testing.T) {
	var freeCalls, paidCalls atomic.Int64
	free, paid := countingUpstream(t, &freeCalls), countingUpstream(t, &paidCalls)
	reg := providers.NewRegistry(
		providers.NewOpenAI(providers.Config{Name: "free", BaseURL: free.URL + "/v1", APIKey: "sk-free"}),
		providers.NewOpenAI(providers.Config{Name: "paid", BaseURL: paid.URL + "/v1", APIKey: "sk-paid"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"gpt-4": {Models: []string{"free/ok", "paid/ok"},
			Tags: [][]string{{"tier:free", "default"}, {"tier:paid"}}, TagFiltering: true, TagFailOpen: true, TagRoutePrefix: "route:"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)

	banBoth := `{"model":"gpt-4","metadata":{"tags":["route:!tier:free","!tier:paid"]},"messages":[{"role":"user","content":"hi"}]}`
	if resp, out := post(t, hs.URL+"/v1/chat/completions", testKey, banBoth); resp.StatusCode != http.StatusOK || freeCalls.Load() != 1 {
		t.Fatalf("the caller's own bans, fail open: %d %s (free called %d times), want the default deployment", resp.StatusCode, out, freeCalls.Load())
	}
	k := litellmGenerate(t, s, `{"tags":["!tier:free"]}`)
	if resp, out := post(t, hs.URL+"/v1/chat/completions", k.Key, banBoth); resp.StatusCode != http.StatusOK || paidCalls.Load() != 1 {
		t.Fatalf("the key's ban kept, the caller's dropped: %d %s (paid called %d times), want paid", resp.StatusCode, out, paidCalls.Load())
	}
	k2 := litellmGenerate(t, s, `{"tags":["!tier:free","!tier:paid"]}`)
	if resp, out := post(t, hs.URL+"/v1/chat/completions", k2.Key, banBoth); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the key's own bans of every deployment: %d %s, want LiteLLM's 401", resp.StatusCode, out)
	}
	if n := freeCalls.Load() + paidCalls.Load(); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}
