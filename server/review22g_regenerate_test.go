package server

import (
	"net/http"
	"testing"
)

// LiteLLM's /key/{key}/regenerate (and /key/regenerate) take the key's fields to change
// with the new key (its admin UI's regenerate form sends key_alias, max_budget, tpm_limit,
// rpm_limit and duration): they are applied as /key/update applies them, not dropped while
// answering 200 as if they had been.
func TestReview22gRegenerateAppliesFields(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot","max_budget":25}`)
	r := do(t, s, "POST", "/key/"+g.Token+"/regenerate", testKey, `{"max_budget":30,"key_alias":"bot-2","rpm_limit":7}`)
	if r.status != http.StatusOK || r.body["max_budget"] != 30.0 || r.body["key_alias"] != "bot-2" || r.body["rpm_limit"] != 7.0 || r.body["key"] == g.Key {
		t.Fatalf("regenerate with fields: %d %s", r.status, r.raw)
	}
	if info := keyInfoViaLiteLLM(t, s, testKey, g.Token); info.MaxBudget == nil || *info.MaxBudget != 30 {
		t.Fatalf("after regenerate with max_budget 30: %+v", info)
	}
	r = do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+g.Token+`","max_budget":40}`)
	if r.status != http.StatusOK || r.body["max_budget"] != 40.0 || r.body["key_alias"] != "bot-2" {
		t.Fatalf("/key/regenerate with max_budget: %d %s", r.status, r.raw)
	}
	// A field /key/update refuses is refused here too, and nothing is regenerated.
	wantLiteLLMError(t, do(t, s, "POST", "/key/"+g.Token+"/regenerate", testKey, `{"model_max_budget":{"a":1}}`), http.StatusBadRequest, "model_max_budget")
	if info := keyInfoViaLiteLLM(t, s, testKey, g.Token); info.MaxBudget == nil || *info.MaxBudget != 40 {
		t.Fatalf("after a refused regenerate: %+v", info)
	}
}
