package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestReview25cBudgetFieldRefusalsSpeakLiteLLM: a LiteLLM budget field given beside
// budget_id on /customer/new or /customer/update is refused naming LiteLLM's field in the
// param and throughout the message, never Switchyard's native name.
func TestReview25cBudgetFieldRefusalsSpeakLiteLLM(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"c","budget_id":"tier"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	for _, c := range []struct{ path, body, field, native string }{
		{"/customer/update", `{"user_id":"c","max_budget":3}`, "max_budget", "max_budget_usd"},
		{"/customer/update", `{"user_id":"c","tpm_limit":10}`, "tpm_limit", "tokens_per_minute"},
		{"/customer/update", `{"user_id":"c","soft_budget":0.5}`, "soft_budget", "soft_budget_usd"},
		{"/customer/new", `{"user_id":"d","budget_id":"tier","soft_budget":0.5}`, "soft_budget", "soft_budget_usd"},
		{"/customer/new", `{"user_id":"d","budget_id":"tier","tpm_limit":10}`, "tpm_limit", "tokens_per_minute"},
	} {
		r := do(t, s, "POST", c.path, testKey, c.body)
		wantParam(t, r, http.StatusBadRequest, c.field, c.field+":")
		if strings.Contains(r.raw, c.native) {
			t.Errorf("%s %s: the message names %s, a field LiteLLM has not: %s", c.path, c.body, c.native, r.raw)
		}
	}
}
