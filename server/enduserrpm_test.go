package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestEndUserRPMLimit: an end user's rpm_limit (LiteLLM's end_user_rpm_limit) bounds the
// requests naming it per minute across the owner's keys: taken from a budget's rpm_limit
// (budget_id on /customer/new; /budget/update rewrites it), given outright on
// /customer/new (rpm_limit) or /api/v1/customers (requests_per_minute). Past it a request
// naming the end user is LiteLLM's 429 with Retry-After, while another end user and
// requests naming none are not held; /customer/info shows it; a bad one is a 400 naming
// rpm_limit.
func TestEndUserRPMLimit(t *testing.T) {
	hs, s := keysServerWith(t, nil, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}})
	chatAs := func(key, user string) (int, http.Header, string) {
		t.Helper()
		body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`
		if user != "" {
			body += `,"user":"` + user + `"`
		}
		resp, b := post(t, hs.URL+"/v1/chat/completions", key, body+`}`)
		return resp.StatusCode, resp.Header, string(b)
	}
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"r","rpm_limit":2,"max_budget":100}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","budget_id":"r"}`); r.status != http.StatusOK {
		t.Fatalf("/customer/new with a budget of rpm_limit 2: %d %s", r.status, r.raw)
	}
	rpmOf := func(id string) any {
		t.Helper()
		r := do(t, s, "GET", "/customer/info?end_user_id="+id, testKey, "")
		var c struct {
			Budget map[string]any `json:"litellm_budget_table"`
		}
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &c) != nil {
			t.Fatalf("/customer/info %s: %d %s", id, r.status, r.raw)
		}
		return c.Budget["rpm_limit"]
	}
	if got := rpmOf("carol"); got != float64(2) {
		t.Fatalf("carol's rpm_limit %v, want the budget's 2", got)
	}
	other := litellmGenerate(t, s, `{}`)
	for i, key := range []string{testKey, other.Key} { // two keys of one owner: one end user
		if st, _, b := chatAs(key, "carol"); st != http.StatusOK {
			t.Fatalf("carol's request %d: %d %s", i+1, st, b)
		}
	}
	st, h, b := chatAs(testKey, "carol")
	if st != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(b, "Rate limit exceeded for end_user: carol. Limit type: requests. Current limit: 2, Remaining: 0.") {
		t.Fatalf("carol's third request within the minute: %d %v %s", st, h, b)
	}
	for _, user := range []string{"erin", ""} {
		if st, _, b := chatAs(testKey, user); st != http.StatusOK {
			t.Fatalf("a request naming %q while carol is held: %d %s", user, st, b)
		}
	}

	// Given outright: LiteLLM's rpm_limit, the native requests_per_minute.
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"frank","rpm_limit":1}`); r.status != http.StatusOK {
		t.Fatalf("/customer/new with rpm_limit: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"gina","requests_per_minute":1}`); r.status != http.StatusCreated || r.body["requests_per_minute"] != float64(1) {
		t.Fatalf("POST /api/v1/customers with requests_per_minute: %d %s", r.status, r.raw)
	}
	for _, user := range []string{"frank", "gina"} {
		if st, _, b := chatAs(testKey, user); st != http.StatusOK {
			t.Fatalf("%s's first request: %d %s", user, st, b)
		}
		if st, _, b := chatAs(testKey, user); st != http.StatusTooManyRequests {
			t.Fatalf("%s's second request within its rpm_limit 1: %d %s", user, st, b)
		}
	}
	if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"frank","rpm_limit":3}`); r.status != http.StatusOK {
		t.Fatalf("/customer/update rpm_limit: %d %s", r.status, r.raw)
	}
	if got := rpmOf("frank"); got != float64(3) {
		t.Fatalf("frank's rpm_limit after /customer/update: %v, want 3", got)
	}
	wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"hal","rpm_limit":-1}`), http.StatusBadRequest, "rpm_limit", "rpm_limit")
	// Beside the budget only its own value.
	wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"ivy","budget_id":"r","rpm_limit":7}`), http.StatusBadRequest, "rpm_limit", "rpm_limit")

	// /budget/update rewrites the end users' rpm_limit; null removes it.
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"r","rpm_limit":5}`); r.status != http.StatusOK {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	if got := rpmOf("carol"); got != float64(5) {
		t.Fatalf("carol's rpm_limit after /budget/update: %v, want 5", got)
	}
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"r","rpm_limit":null}`); r.status != http.StatusOK {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	if got := rpmOf("carol"); got != nil {
		t.Fatalf("carol's rpm_limit after the budget's went: %v, want null", got)
	}
	for range 3 {
		if st, _, b := chatAs(testKey, "carol"); st != http.StatusOK {
			t.Fatalf("carol without an rpm_limit: %d %s", st, b)
		}
	}
}
