package server

import (
	"net/http"
	"testing"
)

// TestReview18eKeyBlockSurvivesBudgetRemovedThenSet: a key blocked by /key/block while it
// had a budget "stays blocked until /key/unblock" (README). Removing its budget
// (max_budget null) keeps it blocked, but leaves it indistinguishable from a
// max_budget-0 block (Blocked with MaxBudgetUSD 0), so the next budget change lifts the
// /key/block block.
func TestReview18eKeyBlockSurvivesBudgetRemovedThenSet(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"max_budget":10,"models":["openai/ok"]}`)
	if r := do(t, s, "POST", "/key/block", testKey, `{"key":"`+g.Token+`"}`); r.status != http.StatusOK || r.body["blocked"] != true {
		t.Fatalf("block: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":null}`); r.status != http.StatusOK || r.body["blocked"] != true {
		t.Fatalf("removing the budget of a blocked key: %d %s", r.status, r.raw)
	}
	r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","max_budget":5}`)
	if r.status != http.StatusOK {
		t.Fatalf("setting a budget: %d %s", r.status, r.raw)
	}
	if r.body["blocked"] != true {
		t.Errorf("a budget change lifted a block set by /key/block: %s", r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode == http.StatusOK {
		t.Errorf("a key blocked by /key/block served after budget changes: %s", b)
	}
}
