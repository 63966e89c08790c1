package server

import (
	"net/http"
	"testing"
)

// TestReview21bUpdateBlockedTrueKeepsBlock: /customer/update naming blocked true with a
// new max_budget keeps an end user made blocked by max_budget 0 blocked: the max_budget
// lifts the budget of nothing, but the update asks for the block outright.
func TestReview21bUpdateBlockedTrueKeepsBlock(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"y","max_budget":0}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"y","max_budget":5,"blocked":true}`)
	if r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if c := customerInfo(t, s, "y"); !c.Blocked {
		t.Fatal("blocked true on /customer/update unblocked the end user")
	}
	// Blocked outright now: another max_budget does not lift it.
	if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"y","max_budget":7}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if c := customerInfo(t, s, "y"); !c.Blocked {
		t.Fatal("a max_budget lifted a block asked for outright")
	}
}
