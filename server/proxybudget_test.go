package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestProxyBudget: with ProxyMaxBudgetUSD, the requests of every key — the operator's and
// a virtual key's alike — draw on one account; once it is spent each is refused with a 429
// in LiteLLM's words, on any replica of the store; a later start keeps what was spent.
func TestProxyBudget(t *testing.T) {
	st := newTestStore(t)
	cfg := Config{APIKeys: []string{testKey, completionsOtherKey}, ProxyMaxBudgetUSD: 0.02}
	hs, s := keysServerWith(t, st, &fakeOpenAIUpstream{}, cfg)
	vk := issue(t, s, `{}`)
	spent := false
	for i := range 40 {
		key := testKey
		if i%2 == 1 {
			key = vk.Key
		}
		resp, b := chatWith(t, hs, key, "openai/ok")
		if resp.StatusCode == http.StatusTooManyRequests {
			if !strings.Contains(string(b), "Budget has been exceeded! Current cost: ") || !strings.Contains(string(b), "Max budget: 0.02") {
				t.Fatalf("refusal %s: want LiteLLM's words naming the proxy's max budget", b)
			}
			spent = true
			break
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, resp.StatusCode, b)
		}
	}
	if !spent {
		t.Fatal("40 calls at about $0.007 each never reached the $0.02 proxy budget")
	}
	for _, key := range []string{testKey, vk.Key} {
		if resp, b := chatWith(t, hs, key, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("after the budget is spent, key %s…: %d %s, want 429", key[:6], resp.StatusCode, b)
		}
	}
	// A second replica (or a restart) on the store shares the account and what it spent.
	hs2, _ := keysServerWith(t, st, &fakeOpenAIUpstream{}, cfg)
	if resp, b := chatWith(t, hs2, testKey, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("another replica: %d %s, want 429 (one account)", resp.StatusCode, b)
	}
	// A larger bound given at the next start lets requests through again.
	cfg.ProxyMaxBudgetUSD = 100
	hs3, _ := keysServerWith(t, st, &fakeOpenAIUpstream{}, cfg)
	if resp, b := chatWith(t, hs3, testKey, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Errorf("with a larger bound: %d %s, want 200", resp.StatusCode, b)
	}
}

// TestProxyBudgetChecked: a malformed duration or a bound without a store is refused when
// the gateway is wired, naming the setting.
func TestProxyBudgetChecked(t *testing.T) {
	s := testServer(t, Config{APIKeys: []string{testKey}, Store: newTestStore(t), ProxyMaxBudgetUSD: 5, ProxyBudgetDuration: "fortnight"}, nil)
	if err := s.setUpProxyBudget(); err == nil || !strings.Contains(err.Error(), "ProxyBudgetDuration") {
		t.Errorf("duration fortnight: %v", err)
	}
	s = testServer(t, Config{APIKeys: []string{testKey}, ProxyMaxBudgetUSD: -1, Store: newTestStore(t)}, nil)
	if err := s.setUpProxyBudget(); err == nil || !strings.Contains(err.Error(), "ProxyMaxBudgetUSD") {
		t.Errorf("a negative bound: %v", err)
	}
}

// TestProxyBudgetOperatorPassThroughWithoutModel: with ProxyMaxBudgetUSD, the operator's
// key still forwards a provider request that names no model (a file list, a batch), as it
// does without the bound; a virtual key held to a budget is still refused it.
func TestProxyBudgetOperatorPassThroughWithoutModel(t *testing.T) {
	up := &scriptedProviders{cancelled: make(chan struct{})}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "server-openai-key"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, ProxyMaxBudgetUSD: 5}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	before := up.count()
	resp, b := sendPassThrough(t, "GET", hs.URL+"/openai/v1/files", "", map[string]string{"Authorization": "Bearer " + testKey})
	if resp.StatusCode == http.StatusForbidden || up.count() != before+1 {
		t.Errorf("the operator's file list under a proxy budget: %d %s (upstream calls %d), want it forwarded", resp.StatusCode, b, up.count()-before)
	}
	vk := issue(t, s, `{"max_budget_usd":1}`)
	resp, b = sendPassThrough(t, "GET", hs.URL+"/openai/v1/files", "", map[string]string{"Authorization": "Bearer " + vk.Key})
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(b, "name a model") {
		t.Errorf("a virtual key's file list: %d %s, want 401", resp.StatusCode, b)
	}
}

// TestProxyRefusalSaysWhyAtTheBound: the proxy-wide account refuses only above its bound
// (LiteLLM's rule), so a refusal with the spend exactly at it comes from requests in flight
// holding the rest; its message said only "Budget has been exceeded" (the spent test used
// >=); it now says why, while a refusal above the bound stays LiteLLM's words alone.
func TestProxyRefusalSaysWhyAtTheBound(t *testing.T) {
	reason := errors.New("requests in flight may spend the rest")
	at := proxyRefusal(&completions.BudgetExceededError{Used: completions.BudgetUsage{CostUSD: 0.02},
		Limits: completions.BudgetLimits{MaxCostUSD: 0.02, CostAboveOnly: true}, Reason: reason})
	if !strings.Contains(at, "Budget has been exceeded! Current cost: 0.02, Max budget: 0.02") || !strings.Contains(at, reason.Error()) {
		t.Errorf("at the bound: %q", at)
	}
	above := proxyRefusal(&completions.BudgetExceededError{Used: completions.BudgetUsage{CostUSD: 0.026},
		Limits: completions.BudgetLimits{MaxCostUSD: 0.02, CostAboveOnly: true}, Reason: reason})
	if above != "Budget has been exceeded! Current cost: 0.026, Max budget: 0.02" {
		t.Errorf("above the bound: %q", above)
	}
}
