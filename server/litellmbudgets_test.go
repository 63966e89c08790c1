package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// budgetReply decodes r, a 200 of a budget route, into out.
func budgetReply(t *testing.T, r reply, out any) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", r.status, r.raw)
	}
	if err := json.Unmarshal([]byte(r.raw), out); err != nil {
		t.Fatalf("%v: %s", err, r.raw)
	}
}

// wantParam fails unless r is status with its LiteLLM (OpenAI) envelope naming param and
// its message holding msg.
func wantParam(t *testing.T, r reply, status int, param, msg string) {
	t.Helper()
	var body struct {
		Error struct {
			Message string  `json:"message"`
			Param   *string `json:"param"`
		} `json:"error"`
	}
	if r.status != status || json.Unmarshal([]byte(r.raw), &body) != nil || body.Error.Param == nil ||
		*body.Error.Param != param || !strings.Contains(body.Error.Message, msg) {
		t.Fatalf("got %d %s, want %d naming param %q with %q", r.status, r.raw, status, param, msg)
	}
}

// TestLiteLLMBudgetRoutes: each budget route's answer, and its refusals of bad input,
// naming the field, with nothing stored changed by a refusal.
func TestLiteLLMBudgetRoutes(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	var b litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/new", testKey,
		`{"budget_id":"team-a","max_budget":5,"soft_budget":4,"budget_duration":"30d","tpm_limit":1000,"rpm_limit":null,"model_max_budget":{},"max_parallel_requests":null}`), &b)
	if b.BudgetID != "team-a" || b.MaxBudget == nil || *b.MaxBudget != 5 || b.SoftBudget == nil || *b.SoftBudget != 4 ||
		b.BudgetDuration == nil || *b.BudgetDuration != "30d" || b.TPMLimit == nil || *b.TPMLimit != 1000 ||
		b.RPMLimit != nil || b.CreatedBy == "" || b.CreatedAt.IsZero() || b.UpdatedBy != b.CreatedBy {
		t.Fatalf("/budget/new: %+v", b)
	}
	var made litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/new", testKey, `{"max_budget":1}`), &made)
	if _, err := uuid.Parse(made.BudgetID); err != nil || made.BudgetDuration != nil {
		t.Fatalf("/budget/new without budget_id: %+v", made)
	}

	wantParam(t, do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"team-a"}`), http.StatusBadRequest, "budget_id", "Budget with id 'team-a' already exists.")
	for _, c := range []struct{ body, param, msg string }{
		{`{"max_budget":-1}`, "max_budget", "max_budget: must be a non-negative"},
		{`{"max_budget":0}`, "max_budget", "max_budget: 0"},
		{`{"max_budget":"x"}`, "max_budget", "max_budget: must be a number"},
		{`{"soft_budget":-2}`, "soft_budget", "soft_budget"},
		{`{"tpm_limit":-3}`, "tpm_limit", "tpm_limit: must be at least 0"},
		{`{"budget_duration":"often"}`, "budget_duration", "budget_duration"},
		{`{"rpm_limit":-1}`, "rpm_limit", "rpm_limit: must be between 0 and"},
		{`{"max_parallel_requests":0}`, "max_parallel_requests", "max_parallel_requests: must be between 1 and"},
		{`{"max_parallel_requests":"2"}`, "max_parallel_requests", "max_parallel_requests: must be a whole number"},
		{`{"model_max_budget":{"nope/none":{"budget_limit":1}}}`, "model_max_budget", `model_max_budget["nope/none"]: "nope/none" is not a model`},
		{`{"model_max_budget":{"openai/ok":{"budget_limit":-1}}}`, "model_max_budget", `model_max_budget["openai/ok"]: budget_limit: must be at least 0`},
		{`{"model_max_budget":{"openai/*":{"budget_limit":1}}}`, "model_max_budget", "not a pattern"},
		{`{"budget_reset_at":"2030-01-01T00:00:00Z"}`, "budget_reset_at", "budget_reset_at: not supported"},
		{`{"colour":"red"}`, "colour", "colour: a budget has no colour"},
		{`{"budget_id":"` + strings.Repeat("x", 257) + `"}`, "budget_id", "budget_id: at most 256"},
	} {
		wantParam(t, do(t, s, "POST", "/budget/new", testKey, c.body), http.StatusBadRequest, c.param, c.msg)
	}

	var list []litellmBudget
	budgetReply(t, do(t, s, "GET", "/budget/list", testKey, ""), &list)
	if len(list) != 2 || list[0].BudgetID != "team-a" || list[1].BudgetID != made.BudgetID {
		t.Fatalf("/budget/list after two creations and refusals: %+v", list)
	}

	// An update sets what it is sent, null removing a bound, and keeps the rest.
	var up litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"team-a","max_budget":7,"tpm_limit":null}`), &up)
	if *up.MaxBudget != 7 || up.TPMLimit != nil || *up.SoftBudget != 4 || *up.BudgetDuration != "30d" || !up.UpdatedAt.After(b.UpdatedAt) && !up.UpdatedAt.Equal(b.UpdatedAt) {
		t.Fatalf("/budget/update: %+v", up)
	}
	wantParam(t, do(t, s, "POST", "/budget/update", testKey, `{"max_budget":1}`), http.StatusBadRequest, "budget_id", "budget_id: required")
	wantParam(t, do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"nope","max_budget":1}`), http.StatusNotFound, "budget_id", `no budget "nope"`)
	wantParam(t, do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"team-a","rpm_limit":"5"}`), http.StatusBadRequest, "rpm_limit", "rpm_limit: must be a whole number")
	wantParam(t, do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"team-a","max_budget":-5}`), http.StatusBadRequest, "max_budget", "max_budget")

	var info []litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":["team-a","team-a"]}`), &info)
	if len(info) != 1 || *info[0].MaxBudget != 7 || *info[0].SoftBudget != 4 {
		t.Fatalf("/budget/info after refused updates: %+v", info)
	}
	wantParam(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":[]}`), http.StatusBadRequest, "budgets", "budgets: give the ids")
	wantParam(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":["team-a","x","y"]}`), http.StatusNotFound, "budgets", "Budget id(s)=x, y do not exist in db")

	var settings []litellmBudgetSetting
	budgetReply(t, do(t, s, "GET", "/budget/settings?budget_id=team-a", testKey, ""), &settings)
	values := map[string]any{}
	for _, f := range settings {
		values[f.FieldName] = f.FieldValue
	}
	if len(settings) != 7 || values["max_budget"] != 7.0 || values["budget_duration"] != "30d" || values["tpm_limit"] != nil || values["rpm_limit"] != nil {
		t.Fatalf("/budget/settings: %+v", settings)
	}
	wantParam(t, do(t, s, "GET", "/budget/settings", testKey, ""), http.StatusBadRequest, "budget_id", "budget_id: required")
	wantParam(t, do(t, s, "GET", "/budget/settings?budget_id=nope", testKey, ""), http.StatusNotFound, "budget_id", `no budget "nope"`)

	wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{}`), http.StatusBadRequest, "id", "id: required")
	wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"nope"}`), http.StatusNotFound, "id", `no budget "nope"`)
	var del litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"`+made.BudgetID+`"}`), &del)
	if del.BudgetID != made.BudgetID {
		t.Fatalf("/budget/delete answered %+v", del)
	}
	budgetReply(t, do(t, s, "GET", "/budget/list", testKey, ""), &list)
	if len(list) != 1 || list[0].BudgetID != "team-a" {
		t.Fatalf("/budget/list after a delete: %+v", list)
	}
}

// TestLiteLLMBudgetOwnersAndVirtualKeys: a budget is its key's alone (another operator
// key neither sees, changes, deletes nor attaches it) and virtual keys may not call the
// budget routes.
func TestLiteLLMBudgetOwnersAndVirtualKeys(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"mine","max_budget":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	other := completionsOtherKey
	var list []litellmBudget
	budgetReply(t, do(t, s, "GET", "/budget/list", other, ""), &list)
	if len(list) != 0 {
		t.Fatalf("another key's /budget/list: %+v", list)
	}
	wantParam(t, do(t, s, "POST", "/budget/info", other, `{"budgets":["mine"]}`), http.StatusNotFound, "budgets", "mine")
	wantParam(t, do(t, s, "POST", "/budget/update", other, `{"budget_id":"mine","max_budget":100}`), http.StatusNotFound, "budget_id", "mine")
	wantParam(t, do(t, s, "POST", "/budget/delete", other, `{"id":"mine"}`), http.StatusNotFound, "id", "mine")
	wantParam(t, do(t, s, "GET", "/budget/settings?budget_id=mine", other, ""), http.StatusNotFound, "budget_id", "mine")
	wantParam(t, do(t, s, "POST", "/customer/new", other, `{"user_id":"eve","budget_id":"mine"}`), http.StatusNotFound, "budget_id", "mine")
	// The other key may make its own budget of the same id.
	if r := do(t, s, "POST", "/budget/new", other, `{"budget_id":"mine","max_budget":2}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	var info []litellmBudget
	budgetReply(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":["mine"]}`), &info)
	if len(info) != 1 || *info[0].MaxBudget != 1 {
		t.Fatalf("the first key's budget after the other's: %+v", info)
	}

	vk := litellmGenerate(t, s, `{}`)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/budget/new", `{"budget_id":"v"}`},
		{"POST", "/budget/update", `{"budget_id":"mine","max_budget":9}`},
		{"POST", "/budget/info", `{"budgets":["mine"]}`},
		{"GET", "/budget/list", ""},
		{"POST", "/budget/delete", `{"id":"mine"}`},
		{"GET", "/budget/settings?budget_id=mine", ""},
	} {
		if r := do(t, s, c.method, c.path, vk.Key, c.body); r.status != http.StatusForbidden || !strings.Contains(r.raw, "limited in scope") {
			t.Fatalf("a virtual key's %s %s: %d %s", c.method, c.path, r.status, r.raw)
		}
	}
	budgetReply(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":["mine"]}`), &info)
	if *info[0].MaxBudget != 1 {
		t.Fatalf("the budget after a virtual key's refused update: %+v", info)
	}
}

// TestLiteLLMBudgetOnCustomers: on every store driver, a budget_id on /customer/new and
// /customer/update gives end users the budget's limits, held on chat requests, each end
// user spending on its own; /budget/update reaches every end user of the budget (lowered
// and raised); and a budget in use cannot be deleted until no end user names it.
func TestLiteLLMBudgetOnCustomers(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"small","max_budget":0.02,"budget_duration":"30d"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"carol","budget_id":"small"}`)
		var c litellmCustomer
		budgetReply(t, r, &c)
		if c.BudgetID == nil || *c.BudgetID != "small" || c.Budget == nil || *c.Budget.MaxBudget != 0.02 || *c.Budget.BudgetDuration != "30d" {
			t.Fatalf("/customer/new with budget_id: %s", r.raw)
		}
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"dave"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		budgetReply(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"dave","budget_id":"small","max_budget":null}`), &c)
		if *c.BudgetID != "small" || *c.Budget.MaxBudget != 0.02 {
			t.Fatalf("/customer/update with budget_id: %+v", c)
		}
		// Refusals name the field and change nothing.
		wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","budget_id":"small","max_budget":3}`), http.StatusBadRequest, "max_budget", `budget "small" (budget_id) sets it to 0.02:`)
		wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","budget_id":"small","max_budget":0}`), http.StatusBadRequest, "max_budget", "max_budget")
		wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","budget_id":"none"}`), http.StatusNotFound, "budget_id", `no budget "none"`)
		wantParam(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"carol","max_budget":3}`), http.StatusBadRequest, "max_budget", "sets it to 0.02:")
		wantParam(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"carol","budget_id":"none"}`), http.StatusNotFound, "budget_id", `no budget "none"`)
		if c := customerInfo(t, s, "carol"); *c.BudgetID != "small" || *c.Budget.MaxBudget != 0.02 {
			t.Fatalf("carol after refused updates: %+v", c)
		}
		if r := do(t, s, "GET", "/customer/info?end_user_id=x", testKey, ""); r.status != http.StatusNotFound {
			t.Fatalf("a refused /customer/new made x: %d %s", r.status, r.raw)
		}

		k := litellmGenerate(t, s, `{}`)
		chat := func(user string) (int, string) {
			return postWith(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"`+user+`"}`, nil)
		}
		for range 2 { // $0.013 each: 0.026 spent, past 0.02
			if st, b := chat("carol"); st != http.StatusOK {
				t.Fatal(st, b)
			}
		}
		if st, b := chat("carol"); st != http.StatusTooManyRequests || !strings.Contains(b, "ExceededBudget: End User=carol over budget. Spend=0.026") {
			t.Fatalf("carol past the budget's max_budget: %d %s", st, b)
		}
		if st, b := chat("dave"); st != http.StatusOK { // the budget is a template: dave spends on his own
			t.Fatalf("dave on the same budget: %d %s", st, b)
		}

		// Raised: reaches both end users; carol's spend is kept.
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":1}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		for _, id := range []string{"carol", "dave"} {
			if c := customerInfo(t, s, id); *c.Budget.MaxBudget != 1 || *c.BudgetID != "small" {
				t.Fatalf("%s after /budget/update: %+v", id, c.Budget)
			}
		}
		if st, b := chat("carol"); st != http.StatusOK {
			t.Fatalf("carol after the budget was raised: %d %s", st, b)
		}
		// Lowered under what dave spent: refused again.
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":0.01}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, b := chat("dave"); st != http.StatusTooManyRequests || !strings.Contains(b, "End User=dave over budget") || !strings.Contains(b, "Budget=0.01") {
			t.Fatalf("dave after the budget was lowered: %d %s", st, b)
		}

		// In use: refused naming the end users, and nothing is lost.
		wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`), http.StatusBadRequest, "id", "['carol', 'dave']")
		var info []litellmBudget
		budgetReply(t, do(t, s, "POST", "/budget/info", testKey, `{"budgets":["small"]}`), &info)
		if *info[0].MaxBudget != 0.01 {
			t.Fatalf("the budget after a refused delete: %+v", info)
		}
		// Dave leaves it (PATCH budget_id "" keeps its values as his own); carol is deleted.
		r = do(t, s, "PATCH", "/api/v1/customers/dave", testKey, `{"budget_id":""}`)
		var e endUser
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &e) != nil || e.BudgetID != "" || e.MaxBudgetUSD != 0.01 || e.BudgetDuration != "30d" {
			t.Fatalf("PATCH budget_id \"\": %d %s", r.status, r.raw)
		}
		wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`), http.StatusBadRequest, "id", "['carol']")
		if r := do(t, s, "POST", "/customer/delete", testKey, `{"user_ids":["carol"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`); r.status != http.StatusOK {
			t.Fatalf("/budget/delete of a budget no longer in use: %d %s", r.status, r.raw)
		}
		// Dave, off the budget, is not changed by a new budget of the same id.
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"small","max_budget":50}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":60}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, _ := chat("dave"); st != http.StatusTooManyRequests {
			t.Fatalf("dave off the budget after a new budget of its id: %d", st)
		}
	})
}

// TestLiteLLMBudgetTPMOnCustomer: a budget's tpm_limit becomes the end user's tokens per
// minute bound and is held on chat requests; a budget_id update removing it lifts it.
func TestLiteLLMBudgetTPMOnCustomer(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"rate","tpm_limit":1}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"tess","budget_id":"rate"}`)
	var c litellmCustomer
	budgetReply(t, r, &c)
	if c.Budget == nil || c.Budget.TPMLimit == nil || *c.Budget.TPMLimit != 1 {
		t.Fatalf("/customer/new with a tpm budget: %s", r.raw)
	}
	k := litellmGenerate(t, s, `{}`)
	body := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"user":"tess"}`
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", k.Key, body, nil); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", k.Key, body, nil); st != http.StatusTooManyRequests {
		t.Fatalf("tess past the budget's tpm_limit: %d %s", st, b)
	}
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"rate","tpm_limit":null}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := postWith(t, hs.URL+"/v1/chat/completions", k.Key, body, nil); st != http.StatusOK {
		t.Fatalf("tess after the budget's tpm_limit was removed: %d %s", st, b)
	}
}

// TestLiteLLMBudgetRoutesInOpenAPI: the OpenAPI document lists the budget routes.
func TestLiteLLMBudgetRoutesInOpenAPI(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	r := do(t, s, "GET", "/api/v1/openapi.json", "", "")
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(r.raw), &doc); err != nil {
		t.Fatal(err)
	}
	for path, method := range map[string]string{"/budget/new": "post", "/budget/update": "post", "/budget/info": "post",
		"/budget/list": "get", "/budget/delete": "post", "/budget/settings": "get"} {
		if doc.Paths[path][method] == nil {
			t.Errorf("the OpenAPI document lacks %s %s", strings.ToUpper(method), path)
		}
	}
}
