package server

import (
	"net/http"
	"testing"
)

// WRONG (a key meant to be frozen is unlimited): on LiteLLM max_budget 0 is a budget of
// zero — auth_checks refuses a key whose spend >= max_budget when max_budget is not None, so
// {"max_budget": 0} (or /key/update max_budget 0, a common way to freeze a key) blocks all
// spending. Here litellmFieldNames passes 0 to max_budget_usd, where 0 means "no bound", so
// the key is issued without any budget (info shows max_budget null) and serves requests.
// Fix: translate a LiteLLM max_budget of 0 to a blocked key (or refuse it with a 400 naming
// max_budget and pointing at /key/delete or a past duration) — never to "unbounded". The
// same question arises for rpm_limit 0 / tpm_limit 0 (here 0 is "no bound" or the server default).
func TestReview17bMaxBudgetZeroIsUnlimited(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/key/generate", testKey, `{"max_budget":0,"models":["openai/ok"]}`)
	if r.status != http.StatusOK {
		return // refused: acceptable
	}
	key, _ := r.body["key"].(string)
	if r.body["max_budget"] == nil {
		t.Errorf("max_budget 0 issued a key with no budget (max_budget null): %s", r.raw)
	}
	if resp, b := chatWith(t, hs, key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Errorf("a key with max_budget 0 was served: %s", b)
	}
}

// WRONG: the same freeze through /key/update: a key with max_budget 5 updated to
// max_budget 0 loses its budget altogether (null), where LiteLLM blocks it.
func TestReview17bUpdateMaxBudgetZeroRemovesBudget(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"max_budget":5}`)
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":0}`)
	if r.status == http.StatusOK && r.body["max_budget"] == nil {
		t.Fatalf("max_budget 0 on update removed the budget: %s", r.raw)
	}
}
