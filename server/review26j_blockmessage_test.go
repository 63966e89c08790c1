package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// TestReview26jZeroMaxBudgetRefusalSaysNull: LiteLLM's max_budget 0 (a block) beside a
// budget with no max_budget is refused; the refusal must not tell the client to send 0,
// the very value it refuses, but null (or to leave the field out).
func TestReview26jZeroMaxBudgetRefusalSaysNull(t *testing.T) {
	_, s := keysServer(t, store.New(memstore.New()), 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tpm","tpm_limit":1000}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	k := litellmGenerate(t, s, `{"budget_id":"tpm"}`)
	for _, c := range []struct{ path, body string }{
		{"/key/generate", `{"budget_id":"tpm","max_budget":0}`},
		{"/key/update", `{"key":"` + k.Token + `","max_budget":0}`},
		{"/customer/new", `{"user_id":"d","budget_id":"tpm","max_budget":0}`},
	} {
		r := do(t, s, "POST", c.path, testKey, c.body)
		wantParam(t, r, http.StatusBadRequest, "max_budget", `sets it to none (null`)
		if strings.Contains(r.raw, "null or 0") {
			t.Errorf("%s %s: the refusal of max_budget 0 asks for 0: %s", c.path, c.body, r.raw)
		}
	}
	// Natively 0 is no bound, and is the budget's none.
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"budget_id":"tpm","max_budget_usd":0}`); r.status != http.StatusCreated {
		t.Fatal(r.status, r.raw)
	}
}
