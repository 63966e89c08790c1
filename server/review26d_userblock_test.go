package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestNativeBudgetRaiseKeepsOutrightUserBlock: a native PATCH giving max_budget_usd alone
// lifts only a block a budget of nothing caused (LiteLLM's max_budget 0); a user an
// operator blocked outright (native blocked true, on create or PATCH) stays blocked when
// its budget is raised, until blocked false (or LiteLLM's /user/update max_budget, which
// replaces what LiteLLM shows as max_budget 0).
func TestNativeBudgetRaiseKeepsOutrightUserBlock(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"eve","max_budget_usd":5}`, http.StatusCreated, nil)
	k := litellmGenerate(t, s, `{"user_id":"eve"}`)
	nativeUserDo(t, s, "PATCH", "/api/v1/users/eve", `{"blocked":true}`, http.StatusOK, nil)
	var u nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/eve", `{"max_budget_usd":50}`, http.StatusOK, &u)
	if !u.Blocked || u.MaxBudgetUSD != 50 {
		t.Fatalf("a budget raise of a user blocked outright: %+v, want still blocked", u)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusUnauthorized || !strings.Contains(b, "User=eve is blocked") {
		t.Fatalf("the key of a user blocked outright after a budget raise: %d %s", st, b)
	}
	var unblocked nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/eve", `{"blocked":false}`, http.StatusOK, &unblocked)
	if unblocked.Blocked {
		t.Fatalf("blocked false: %+v", unblocked)
	}
	// Made blocked: the same.
	nativeUserDo(t, s, "POST", "/api/v1/users", `{"user_id":"fay","blocked":true}`, http.StatusCreated, nil)
	var f nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/fay", `{"max_budget_usd":3}`, http.StatusOK, &f)
	if !f.Blocked {
		t.Fatalf("a budget raise of a user made blocked: %+v, want still blocked", f)
	}
	// A budget block (LiteLLM's max_budget 0) set after the outright one is lifted.
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"fay","max_budget":0}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	var lifted nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/fay", `{"max_budget_usd":3}`, http.StatusOK, &lifted)
	if lifted.Blocked {
		t.Fatalf("a budget raise after LiteLLM's max_budget 0: %+v, want lifted", lifted)
	}
}
