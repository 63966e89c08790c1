package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestNativeUserPatchBudgetLiftsBlock: a user blocked by LiteLLM's max_budget 0 is let on
// by a native PATCH giving a max_budget_usd above its spend, as a max_budget on
// /user/update lets it on; a PATCH giving blocked true beside the budget blocks it.
func TestNativeUserPatchBudgetLiftsBlock(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	litellmUserNew(t, s, `{"user_id":"dee","max_budget":0,"auto_create_key":false}`)
	k := litellmGenerate(t, s, `{"user_id":"dee","max_budget":1}`)
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusUnauthorized || !strings.Contains(b, "User=dee is blocked") {
		t.Fatalf("a user of max_budget 0: %d %s", st, b)
	}
	var lifted nativeUser // fresh: blocked false is absent from the answer
	nativeUserDo(t, s, "PATCH", "/api/v1/users/dee", `{"max_budget_usd":1}`, http.StatusOK, &lifted)
	if lifted.Blocked || lifted.MaxBudgetUSD != 1 {
		t.Fatalf("a budget given alone: %+v", lifted)
	}
	if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
		t.Fatalf("after the native PATCH raised the budget: %d %s", st, b)
	}
	var u nativeUser
	nativeUserDo(t, s, "PATCH", "/api/v1/users/dee", `{"max_budget_usd":2,"blocked":true}`, http.StatusOK, &u)
	if !u.Blocked {
		t.Fatalf("blocked true beside a budget: %+v", u)
	}
	// The same as /user/update: its max_budget lifts the block the native blocked set.
	nativeUserDo(t, s, "PATCH", "/api/v1/users/dee", `{"blocked":true}`, http.StatusOK, nil)
	if r := do(t, s, "POST", "/user/update", testKey, `{"user_id":"dee","max_budget":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	var after nativeUser
	nativeUserDo(t, s, "GET", "/api/v1/users/dee", "", http.StatusOK, &after)
	if after.Blocked {
		t.Fatalf("/user/update max_budget: %+v", after)
	}
}
