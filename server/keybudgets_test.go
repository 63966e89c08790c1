package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// litellmKeyInfoOf reads /key/info of key (its token or the key itself).
func litellmKeyInfoOf(t *testing.T, s *Server, key string) litellmKeyInfo {
	t.Helper()
	r := do(t, s, "GET", "/key/info?key="+key, testKey, "")
	var a struct {
		Info litellmKeyInfo `json:"info"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &a) != nil {
		t.Fatalf("/key/info %s: %d %s", key, r.status, r.raw)
	}
	return a.Info
}

// TestLiteLLMBudgetOnKeys: on every store driver, a budget_id on /key/generate gives the
// key the budget's limits, held on chat requests; /budget/update reaches the key (raised
// and lowered); the key's own budget fields beside budget_id and a budget_id naming no
// budget are refused naming the field, changing nothing; a budget in use by keys cannot be
// deleted (the refusal counts them) until no key names it; budget_id null on /key/update
// leaves the budget keeping its values.
func TestLiteLLMBudgetOnKeys(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		hs, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"small","max_budget":0.02,"budget_duration":"30d","tpm_limit":100000}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		k := litellmGenerate(t, s, `{"budget_id":"small","key_alias":"bot"}`)
		info := litellmKeyInfoOf(t, s, k.Token)
		if info.BudgetID == nil || *info.BudgetID != "small" || info.MaxBudget == nil || *info.MaxBudget != 0.02 ||
			info.BudgetDuration == nil || *info.BudgetDuration != "30d" || info.TPMLimit == nil || *info.TPMLimit != 100000 {
			t.Fatalf("/key/info of a key generated with budget_id: %+v", info)
		}
		// Listings show it too.
		r := do(t, s, "GET", "/key/list?return_full_object=true", testKey, "")
		if r.status != http.StatusOK || !strings.Contains(r.raw, `"budget_id":"small"`) {
			t.Fatalf("/key/list of a key with budget_id: %d %s", r.status, r.raw)
		}
		r = do(t, s, "GET", "/api/v1/keys/"+k.Token, testKey, "")
		var vk virtualKey
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &vk) != nil || vk.BudgetID != "small" || vk.MaxBudgetUSD != 0.02 {
			t.Fatalf("GET /api/v1/keys/{key_id} of a key with budget_id: %d %s", r.status, r.raw)
		}

		for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
			if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
				t.Fatalf("call %d: %d %s", i+1, st, b)
			}
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests ||
			!strings.Contains(b, "Budget has been exceeded! Current cost: 0.026") || !strings.Contains(b, "Max budget: 0.02 ") {
			t.Fatalf("the key past its budget's max_budget: %d %s", st, b)
		}

		// Raised: the key follows, its spend kept.
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":1}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if info := litellmKeyInfoOf(t, s, k.Token); *info.MaxBudget != 1 || *info.BudgetID != "small" || info.Spend < 0.026 {
			t.Fatalf("the key after /budget/update: %+v", info)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusOK {
			t.Fatalf("the key after its budget was raised: %d %s", st, b)
		}
		// Lowered under what it spent: refused again, naming the new bound.
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":0.01}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, b := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests || !strings.Contains(b, "Max budget: 0.01 ") {
			t.Fatalf("the key after its budget was lowered: %d %s", st, b)
		}

		// Refusals name the field and change nothing.
		for _, c := range []struct {
			body, param, msg string
			status           int
		}{
			{`{"budget_id":"small","max_budget":3}`, "max_budget", `budget "small" (budget_id) sets it to 0.01:`, http.StatusBadRequest},
			{`{"budget_id":"small","max_budget":0}`, "max_budget", "sets it to 0.01:", http.StatusBadRequest},
			{`{"budget_id":"small","soft_budget":0.5}`, "soft_budget", "sets it to none (null or 0)", http.StatusBadRequest},
			{`{"budget_id":"small","tpm_limit":5}`, "tpm_limit", "sets it to 100000:", http.StatusBadRequest},
			{`{"budget_id":"small","budget_duration":"1d"}`, "budget_duration", `sets it to "30d":`, http.StatusBadRequest},
			{`{"budget_id":"none"}`, "budget_id", `no budget "none"`, http.StatusNotFound},
		} {
			wantParam(t, do(t, s, "POST", "/key/generate", testKey, c.body), c.status, c.param, c.msg)
		}
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","max_budget":3}`), http.StatusBadRequest, "max_budget", "sets it to 0.01:")
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","budget_id":"none"}`), http.StatusNotFound, "budget_id", `no budget "none"`)
		if info := litellmKeyInfoOf(t, s, k.Token); *info.MaxBudget != 0.01 || *info.BudgetID != "small" {
			t.Fatalf("the key after refused updates: %+v", info)
		}
		var list litellmKeyList
		if r := do(t, s, "GET", "/key/list", testKey, ""); r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &list) != nil || list.TotalCount != 1 {
			t.Fatalf("refused generations made keys: %d %s", r.status, r.raw)
		}

		// A null budget field beside budget_id asks for nothing; a rename keeps the budget;
		// a regeneration keeps it too.
		k2 := litellmGenerate(t, s, `{"budget_id":"small","max_budget":null,"tpm_limit":null}`)
		if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k2.Token+`","key_alias":"second"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		r = do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+k2.Token+`"}`)
		var regen litellmGeneratedKey
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &regen) != nil || regen.BudgetID == nil || *regen.BudgetID != "small" || *regen.MaxBudget != 0.01 {
			t.Fatalf("/key/regenerate of a key with budget_id: %d %s", r.status, r.raw)
		}

		// In use: refused counting and naming the keys; nothing is lost.
		wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`), http.StatusBadRequest, "id", "2 virtual keys (")
		r = do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`)
		if !strings.Contains(r.raw, k.Token) || !strings.Contains(r.raw, k2.Token) {
			t.Fatalf("the refused /budget/delete does not name the keys: %s", r.raw)
		}
		// budget_id null leaves the budget, keeping its values as the key's own.
		var upd litellmUpdatedKey
		r = do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","budget_id":null}`)
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &upd) != nil || upd.BudgetID != nil || upd.MaxBudget == nil || *upd.MaxBudget != 0.01 ||
			upd.BudgetDuration == nil || *upd.BudgetDuration != "30d" {
			t.Fatalf("/key/update budget_id null: %d %s", r.status, r.raw)
		}
		wantParam(t, do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`), http.StatusBadRequest, "id", "1 virtual key ("+k2.Token+")")
		if r := do(t, s, "POST", "/key/delete", testKey, `{"keys":["`+k2.Token+`"]}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/delete", testKey, `{"id":"small"}`); r.status != http.StatusOK {
			t.Fatalf("/budget/delete of a budget no longer in use: %d %s", r.status, r.raw)
		}
		// The key, off the budget, is not changed by a new budget of the same id.
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"small","max_budget":50}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"small","max_budget":60}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if st, _ := chatStatus(t, hs.URL, k.Key, "openai/ok"); st != http.StatusTooManyRequests {
			t.Fatalf("the key off the budget after a new budget of its id: %d", st)
		}
	})
}

// TestKeyBudgetIDNative: POST and PATCH /api/v1/keys take budget_id as the LiteLLM routes
// do: the budget's values become the key's, its own budget fields beside it are a 422
// naming the field, an unknown budget a 404 naming budget_id, and budget_id "" leaves the
// budget keeping its values.
func TestKeyBudgetIDNative(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":5,"soft_budget":4,"budget_duration":"7d"}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	key := func(r reply) virtualKey {
		t.Helper()
		var vk virtualKey
		if r.status/100 != 2 || json.Unmarshal([]byte(r.raw), &vk) != nil {
			t.Fatalf("got %d %s", r.status, r.raw)
		}
		return vk
	}
	vk := key(do(t, s, "POST", "/api/v1/keys", testKey, `{"name":"n","budget_id":"tier"}`))
	if vk.BudgetID != "tier" || vk.MaxBudgetUSD != 5 || vk.SoftBudgetUSD != 4 || vk.BudgetDuration != "7d" {
		t.Fatalf("POST /api/v1/keys with budget_id: %+v", vk)
	}
	r := do(t, s, "POST", "/api/v1/keys", testKey, `{"budget_id":"tier","max_budget_usd":3}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, `"message":"max_budget_usd: `) {
		t.Fatalf("POST /api/v1/keys with budget_id and max_budget_usd: %d %s", r.status, r.raw)
	}
	r = do(t, s, "POST", "/api/v1/keys", testKey, `{"budget_id":"none"}`)
	if r.status != http.StatusNotFound || !strings.Contains(r.raw, `"message":"budget_id: no budget \"none\"`) {
		t.Fatalf("POST /api/v1/keys with an unknown budget_id: %d %s", r.status, r.raw)
	}
	r = do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"tokens_per_minute":9}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, `"message":"tokens_per_minute: `) {
		t.Fatalf("PATCH of a budget field of a key with budget_id: %d %s", r.status, r.raw)
	}
	// A rename keeps the budget; budget_id "" with its own bound leaves it.
	if vk := key(do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"name":"m"}`)); vk.BudgetID != "tier" || vk.MaxBudgetUSD != 5 {
		t.Fatalf("PATCH name of a key with budget_id: %+v", vk)
	}
	if vk := key(do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"budget_id":"","max_budget_usd":2}`)); vk.BudgetID != "" || vk.MaxBudgetUSD != 2 || vk.BudgetDuration != "7d" {
		t.Fatalf("PATCH budget_id \"\" with max_budget_usd: %+v", vk)
	}
	// Taking a budget replaces the key's own values.
	own := key(do(t, s, "POST", "/api/v1/keys", testKey, `{"max_budget_usd":1,"tokens_per_minute":7}`))
	if vk := key(do(t, s, "PATCH", "/api/v1/keys/"+own.ID, testKey, `{"budget_id":"tier"}`)); vk.BudgetID != "tier" || vk.MaxBudgetUSD != 5 || vk.TokensPerMinute != 0 {
		t.Fatalf("PATCH budget_id of a key with its own budget: %+v", vk)
	}
	if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"tier","max_budget":8}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if vk := key(do(t, s, "GET", "/api/v1/keys/"+own.ID, testKey, "")); vk.MaxBudgetUSD != 8 {
		t.Fatalf("a key that took the budget by PATCH after /budget/update: %+v", vk)
	}
	if vk := key(do(t, s, "GET", "/api/v1/keys/"+vk.ID, testKey, "")); vk.MaxBudgetUSD != 2 {
		t.Fatalf("a key that left the budget after /budget/update: %+v", vk)
	}
}

// TestBudgetIDDescribedWhole: the OpenAPI document describes budget_id on every request
// that takes one to its last word (a comma in a jsonschema description tag would cut it
// short).
func TestBudgetIDDescribedWhole(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	doc := loadOpenAPI(t, s)
	for _, c := range []struct{ method, path, ends string }{
		{"POST", "/api/v1/keys", "as the key's own"},
		{"PATCH", "/api/v1/keys/{key_id}", "as the key's own"},
		{"POST", "/key/generate", "as the key's own"},
		{"POST", "/key/update", "as the key's own"},
		{"POST", "/api/v1/customers", "as the end user's own"},
		{"POST", "/customer/new", "(those fields given with it must have the budget's values)"},
	} {
		op := doc.Paths.Find(c.path).GetOperation(c.method)
		if op == nil || op.RequestBody == nil {
			t.Fatalf("%s %s has no request body in the document", c.method, c.path)
		}
		sch := op.RequestBody.Value.Content.Get("application/json").Schema.Value
		p := sch.Properties["budget_id"]
		if p == nil || !strings.HasSuffix(p.Value.Description, c.ends) {
			t.Errorf("%s %s: budget_id is not described whole: %+v", c.method, c.path, p)
		}
	}
}
