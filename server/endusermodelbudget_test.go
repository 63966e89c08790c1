package server

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"
)

// TestEndUserModelMaxBudget: an end user's model_max_budget (LiteLLM's
// end_user_model_max_budget) refuses the requests naming the end user for a model once
// the end user's spend on it, across the owner's keys, reaches the budget: LiteLLM's 400
// budget_exceeded "LiteLLM End User: …, exceeded budget for model=…", while its other
// models, other end users and requests naming none still work. It is given on
// /customer/new (LiteLLM's shape), on /api/v1/customers (the native shape; PATCH null
// removes it), or taken from a budget's model_max_budget through budget_id (rewritten by
// /budget/update); /customer/info and GET /api/v1/customers/{id} show it and what each
// model spent; a bad one is a 400 naming model_max_budget.
func TestEndUserModelMaxBudget(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	chatAs := func(key, model, user string) (int, []byte) {
		t.Helper()
		body := `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]`
		if user != "" {
			body += `,"user":"` + user + `"`
		}
		resp, b := post(t, hs.URL+"/v1/chat/completions", key, body+`}`)
		return resp.StatusCode, b
	}
	wantSpent := func(user, model string) {
		t.Helper()
		st, b := chatAs(testKey, model, user)
		msg, typ, code := openAIErrorOf(t, b)
		want := "LiteLLM End User: " + user + ", exceeded budget for model=" + model
		if st != http.StatusBadRequest || msg != want || typ != "budget_exceeded" || code != "400" {
			t.Fatalf("%s's request for %s over its model budget: %d %s; want 400 budget_exceeded %q", user, model, st, b, want)
		}
	}

	// $0.013 an answer: openai/ok's 0.02 allows two (0, then 0.013 < 0.02); ok2's 0 none.
	r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","model_max_budget":{"openai/ok":{"budget_limit":0.02,"time_period":"1d"},"openai/ok2":0}}`)
	if r.status != http.StatusOK {
		t.Fatalf("/customer/new with model_max_budget: %d %s", r.status, r.raw)
	}
	other := litellmGenerate(t, s, `{}`)
	for i, key := range []string{testKey, other.Key} { // two keys of one owner: one end user
		if st, b := chatAs(key, "openai/ok", "carol"); st != http.StatusOK {
			t.Fatalf("carol's openai/ok request %d within its budget: %d %s", i+1, st, b)
		}
	}
	wantSpent("carol", "openai/ok")
	wantSpent("carol", "openai/ok2")
	if st, b := chatAs(testKey, "openai/other", "carol"); st != http.StatusOK {
		t.Fatalf("carol's request for a model without a budget: %d %s", st, b)
	}
	for _, user := range []string{"dave", ""} {
		if st, b := chatAs(testKey, "openai/ok", user); st != http.StatusOK {
			t.Fatalf("openai/ok naming %q while carol's is spent: %d %s", user, st, b)
		}
	}
	// A group both of whose models are spent: the first one's refusal.
	if st, b := chatAs(testKey, "pair", "carol"); st != http.StatusBadRequest || !json.Valid(b) || string(b) == "" {
		t.Fatalf("carol's request for a group of spent models: %d %s", st, b)
	} else if msg, _, _ := openAIErrorOf(t, b); msg != "LiteLLM End User: carol, exceeded budget for model=openai/ok" {
		t.Fatalf("carol's request for a group of spent models: %s", b)
	}

	var info struct {
		Budget struct {
			ModelMaxBudget map[string]struct {
				BudgetLimit float64 `json:"budget_limit"`
				TimePeriod  *string `json:"time_period"`
			} `json:"model_max_budget"`
			Usage map[string]struct {
				CurrentSpend float64 `json:"current_spend"`
			} `json:"model_max_budget_usage"`
		} `json:"litellm_budget_table"`
	}
	r = do(t, s, "GET", "/customer/info?end_user_id=carol", testKey, "")
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &info) != nil {
		t.Fatalf("/customer/info: %d %s", r.status, r.raw)
	}
	if b := info.Budget.ModelMaxBudget["openai/ok"]; b.BudgetLimit != 0.02 || b.TimePeriod == nil || *b.TimePeriod != "1d" || len(info.Budget.ModelMaxBudget) != 2 {
		t.Errorf("/customer/info model_max_budget: %s", r.raw)
	}
	if got := info.Budget.Usage["openai/ok"].CurrentSpend; math.Abs(got-0.026) > 1e-9 {
		t.Errorf("/customer/info openai/ok's spend %v, want 0.026: %s", got, r.raw)
	}
	r = do(t, s, "GET", "/api/v1/customers/carol", testKey, "")
	var native struct {
		ModelMaxBudget map[string]keyModelBudget `json:"model_max_budget"`
		Spend          keySpend                  `json:"spend"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &native) != nil {
		t.Fatalf("GET /api/v1/customers/carol: %d %s", r.status, r.raw)
	}
	if native.ModelMaxBudget["openai/ok"].MaxBudgetUSD != 0.02 || math.Abs(native.Spend.Models["openai/ok"].CostUSD-0.026) > 1e-9 || native.Spend.Models["openai/ok"].PeriodStart == nil {
		t.Errorf("GET /api/v1/customers/carol: %s", r.raw)
	}

	// The native shape; PATCH null removes it.
	if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"gina","model_max_budget":{"openai/ok":{"max_budget_usd":0}}}`); r.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/customers with model_max_budget: %d %s", r.status, r.raw)
	}
	wantSpent("gina", "openai/ok")
	// A group of a spent and an open model: the spent one is passed over.
	if st, b := chatAs(testKey, "pair", "gina"); st != http.StatusOK {
		t.Fatalf("gina's request for a group with one model left: %d %s", st, b)
	}
	if r := do(t, s, "PATCH", "/api/v1/customers/gina", testKey, `{"model_max_budget":null}`); r.status != http.StatusOK || r.body["model_max_budget"] != nil {
		t.Fatalf("PATCH model_max_budget null: %d %s", r.status, r.raw)
	}
	if st, b := chatAs(testKey, "openai/ok", "gina"); st != http.StatusOK {
		t.Fatalf("gina's request once its model budget went: %d %s", st, b)
	}

	// From a budget: taken by budget_id, rewritten by /budget/update.
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"mb","model_max_budget":{"openai/ok":{"budget_limit":0.01}}}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"erin","budget_id":"mb","model_max_budget":{}}`); r.status != http.StatusOK {
		t.Fatalf("/customer/new naming a budget with model_max_budget: %d %s", r.status, r.raw)
	}
	if st, b := chatAs(testKey, "openai/ok", "erin"); st != http.StatusOK {
		t.Fatalf("erin's first request: %d %s", st, b)
	}
	wantSpent("erin", "openai/ok")
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"mb","model_max_budget":{"openai/ok":{"budget_limit":1}}}`); r.status != http.StatusOK {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	if st, b := chatAs(testKey, "openai/ok", "erin"); st != http.StatusOK {
		t.Fatalf("erin's request after /budget/update raised the model budget: %d %s", st, b)
	}
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"mb","model_max_budget":{"openai/ok":{"budget_limit":0}}}`); r.status != http.StatusOK {
		t.Fatalf("/budget/update: %d %s", r.status, r.raw)
	}
	wantSpent("erin", "openai/ok")

	// Refusals name the field.
	wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"ivy","budget_id":"mb","model_max_budget":{"openai/ok2":1}}`), http.StatusBadRequest, "model_max_budget", "budget")
	wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"ivy","model_max_budget":{"nope/none":1}}`), http.StatusBadRequest, "model_max_budget", "nope/none")
	wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"ivy","model_max_budget":{"openai/ok":{"budget_limit":-1}}}`), http.StatusBadRequest, "model_max_budget", "at least 0")
	if r := do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"ivy","model_max_budget":{"openai/ok":{"max_budget_usd":-1}}}`); r.status != http.StatusUnprocessableEntity {
		t.Errorf("POST /api/v1/customers with a negative model budget: %d %s", r.status, r.raw)
	}
}
