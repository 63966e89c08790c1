package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestCustomerNewZeroBudget: /customer/new with max_budget 0 (LiteLLM's budget of
// nothing) makes the end user blocked, as a team's max_budget 0 does; a later max_budget
// on /customer/update lifts that block, which /customer/block's is not.
func TestCustomerNewZeroBudget(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"nil","max_budget":0,"blocked":false}`)
	if r.status != http.StatusOK || !strings.Contains(r.raw, `"blocked":true`) {
		t.Fatalf("/customer/new max_budget 0: %d %s", r.status, r.raw)
	}
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"nil"}`
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusBadRequest || !strings.Contains(b, "User=nil") {
		t.Fatalf("an end user with a budget of nothing: %d %s", st, b)
	}
	if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"nil","max_budget":1}`); r.status != http.StatusOK || customerInfo(t, s, "nil").Blocked {
		t.Fatalf("a new max_budget kept the budget block: %d %s", r.status, r.raw)
	}
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", testKey, body, nil); st != http.StatusOK {
		t.Fatalf("after the lift: %d %s", st, b)
	}
	do(t, s, "POST", "/customer/block", testKey, `{"user_ids":["nil"]}`)
	if do(t, s, "POST", "/customer/update", testKey, `{"user_id":"nil","max_budget":2}`); !customerInfo(t, s, "nil").Blocked {
		t.Fatal("a new max_budget lifted /customer/block's block")
	}
}
