package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestBudgetRPMLimitAndModelMaxBudget: a LiteLLM budget's rpm_limit and model_max_budget
// (refused by /budget/new before) reach what LiteLLM's budget table reaches. A virtual key
// naming the budget takes its rpm_limit (past it a 429; the key's own beside budget_id only
// when it is the budget's) and, having none of its own, its model_max_budget (a model's
// spent budget refuses that model while the key's others work; a key's own wins, as on
// LiteLLM); /budget/update rewrites them on the key, null removing the bound; an
// organization takes the rpm_limit; an end user takes the model_max_budget (the end
// users' rpm_limit is TestEndUserRPMLimit's, their model_max_budget
// TestEndUserModelMaxBudget's).
func TestBudgetRPMLimitAndModelMaxBudget(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"b","rpm_limit":3,"model_max_budget":{"openai/ok":{"budget_limit":0.0001,"time_period":"1d"}}}`)
	if r.status != http.StatusOK || r.body["rpm_limit"] != float64(3) || !strings.Contains(r.raw, `"model_max_budget":{"openai/ok":{"budget_limit":0.0001,"time_period":"1d"}}`) {
		t.Fatalf("/budget/new: %d %s", r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"models":["openai/ok","openai/ok2"],"budget_id":"b"}`)
	if info := do(t, s, "GET", "/key/info?key="+k.Token, testKey, ""); !strings.Contains(info.raw, `"rpm_limit":3`) || !strings.Contains(info.raw, `"model_max_budget":{"openai/ok":{"budget_limit":0.0001,"time_period":"1d"}}`) {
		t.Fatalf("/key/info of the budget's key: %s", info.raw)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("first request: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusBadRequest || !strings.Contains(b, "exceeded budget for model=openai/ok") {
		t.Fatalf("openai/ok past the budget's model_max_budget: %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok2"); st != http.StatusOK {
		t.Fatalf("openai/ok2 (no model budget): %d %s", st, b)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok2"); st != http.StatusTooManyRequests {
		t.Fatalf("a fourth request within the minute of the budget's rpm_limit 3: %d %s", st, b)
	}

	// A key's own rpm_limit beside the budget only when it is the budget's; its own
	// model_max_budget wins over the budget's.
	wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"b","rpm_limit":5}`), http.StatusBadRequest, "rpm_limit", "sets it to 3:")
	own := litellmGenerate(t, s, `{"budget_id":"b","rpm_limit":3,"model_max_budget":{"openai/ok2":{"budget_limit":5}}}`)

	// An organization takes the rpm_limit.
	org := litellmOrganizationNew(t, s, `{"organization_alias":"Acme","budget_id":"b"}`)
	if org.BudgetTable.RPMLimit == nil || *org.BudgetTable.RPMLimit != 3 {
		t.Fatalf("an organization with budget_id b: %+v", org.BudgetTable)
	}

	// /budget/update: the keys and the organization follow.
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"b","rpm_limit":null,"model_max_budget":{"openai/ok2":{"budget_limit":0.0001}}}`); r.status != http.StatusOK || r.body["rpm_limit"] != nil {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	native := keyInfoOf(t, s, testKey, "/api/v1/keys/"+k.Token)
	if native.RequestsPerMinute != 0 || len(native.ModelMaxBudget) != 1 || native.ModelMaxBudget["openai/ok2"].MaxBudgetUSD != 0.0001 {
		t.Fatalf("the key after /budget/update: requests_per_minute %d model_max_budget %v", native.RequestsPerMinute, native.ModelMaxBudget)
	}
	if mine := keyInfoOf(t, s, testKey, "/api/v1/keys/"+own.Token); mine.ModelMaxBudget["openai/ok2"].MaxBudgetUSD != 5 {
		t.Errorf("the key with its own model_max_budget after /budget/update: %v", mine.ModelMaxBudget)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Errorf("openai/ok after the budget's rpm_limit and its model budget went: %d %s", st, b)
	}
	if r := do(t, s, "GET", "/organization/info?organization_id="+org.OrganizationID, testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"rpm_limit":null`) {
		t.Errorf("/organization/info after /budget/update: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/budget/settings?budget_id=b", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"field_value":{"openai/ok2":{"budget_limit":0.0001,"time_period":null}}`) {
		t.Errorf("/budget/settings: %d %s", r.status, r.raw)
	}

	// End users take the budget's model_max_budget (TestEndUserModelMaxBudget holds them to it).
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","budget_id":"b"}`); r.status != http.StatusOK || !strings.Contains(r.raw, `"model_max_budget":{"openai/ok2":{"budget_limit":0.0001,"time_period":null}}`) {
		t.Errorf("/customer/new naming a budget with model_max_budget: %d %s", r.status, r.raw)
	}
}
