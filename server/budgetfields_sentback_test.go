package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/store/storetest/drivertest"
)

// wantStatusWith fails unless r has status and its body says msg.
func wantStatusWith(t *testing.T, r reply, status int, msg string) {
	t.Helper()
	if r.status != status || !strings.Contains(r.raw, msg) {
		t.Fatalf("got %d %s, want %d with %q", r.status, r.raw, status, msg)
	}
}

// TestKeyBudgetFieldsSentBack: on every store driver, a key's budget fields given beside
// its budget_id (given or the key's) are accepted when they have the budget's values, as
// LiteLLM's admin UI and SDK send a key's values back on every edit and regeneration, and
// change nothing; another value is refused naming the field and saying what the budget
// sets, changing nothing. null asks for nothing, and 0 or "" is the budget's value where
// it has none, alike on /key/generate and /key/update and on POST and PATCH /api/v1/keys.
func TestKeyBudgetFieldsSentBack(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		_, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":5,"tpm_limit":1000,"budget_duration":"7d"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		k := litellmGenerate(t, s, `{"budget_id":"tier","key_alias":"bot"}`)
		onBudget := func(what, token string, maxBudget float64) litellmKeyInfo {
			t.Helper()
			info := litellmKeyInfoOf(t, s, token)
			if info.BudgetID == nil || *info.BudgetID != "tier" || info.MaxBudget == nil || *info.MaxBudget != maxBudget ||
				info.TPMLimit == nil || *info.TPMLimit != 1000 || info.BudgetDuration == nil || *info.BudgetDuration != "7d" {
				t.Fatalf("%s: the key is not on its budget: %+v", what, info)
			}
			return info
		}

		// The admin UI's edit: every value of /key/info sent back, the alias changed.
		info := onBudget("generated", k.Token, 5)
		edit, _ := json.Marshal(map[string]any{"key": k.Token, "key_alias": "bot2", "budget_id": info.BudgetID, "max_budget": info.MaxBudget,
			"soft_budget": info.SoftBudget, "tpm_limit": info.TPMLimit, "budget_duration": info.BudgetDuration})
		if r := do(t, s, "POST", "/key/update", testKey, string(edit)); r.status != http.StatusOK {
			t.Fatalf("/key/update sending the key's values back: %d %s", r.status, r.raw)
		}
		if info := onBudget("after the edit", k.Token, 5); info.KeyAlias == nil || *info.KeyAlias != "bot2" {
			t.Fatalf("the edit did not rename the key: %+v", info)
		}
		// The key's budget_id not sent: its budget's values are as good.
		if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","max_budget":5,"tpm_limit":1000}`); r.status != http.StatusOK {
			t.Fatalf("/key/update sending the budget's max_budget and tpm_limit back: %d %s", r.status, r.raw)
		}
		onBudget("after max_budget and tpm_limit sent back", k.Token, 5)
		r := do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+k.Token+`","max_budget":5,"tpm_limit":1000,"budget_duration":"7d"}`)
		var regen litellmGeneratedKey
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &regen) != nil || regen.BudgetID == nil || *regen.BudgetID != "tier" {
			t.Fatalf("/key/regenerate sending the key's values back: %d %s", r.status, r.raw)
		}
		onBudget("after the regeneration", k.Token, 5)
		onBudget("generated with the budget's values", litellmGenerate(t, s, `{"budget_id":"tier","max_budget":5,"tpm_limit":1000,"budget_duration":"7d","soft_budget":null}`).Token, 5)

		// Another value: refused naming the field and the budget's value; nothing changes.
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","max_budget":6,"tpm_limit":1000}`), http.StatusBadRequest, "max_budget", `max_budget: the key's budget "tier" (budget_id) sets it to 5:`)
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","budget_id":"tier","tpm_limit":999}`), http.StatusBadRequest, "tpm_limit", "sets it to 1000:")
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","budget_duration":"30d"}`), http.StatusBadRequest, "budget_duration", `sets it to "7d":`)
		wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"tier","max_budget":6}`), http.StatusBadRequest, "max_budget", "sets it to 5:")
		wantParam(t, do(t, s, "POST", "/key/regenerate", testKey, `{"key":"`+k.Token+`","max_budget":6}`), http.StatusBadRequest, "max_budget", "sets it to 5:")
		onBudget("after refused updates", k.Token, 5)

		// null, and 0 or "" where the budget has none, alike on generate and update.
		for _, c := range []struct{ field, value string }{
			{"max_budget", "null"}, {"soft_budget", "null"}, {"soft_budget", "0"}, {"tpm_limit", "null"}, {"budget_duration", "null"}, {"budget_duration", `""`},
		} {
			what := fmt.Sprintf("%s %s beside budget_id", c.field, c.value)
			onBudget("/key/generate "+what, litellmGenerate(t, s, `{"budget_id":"tier","`+c.field+`":`+c.value+`}`).Token, 5)
			for _, body := range []string{`{"key":"` + k.Token + `","` + c.field + `":` + c.value + `}`, `{"key":"` + k.Token + `","budget_id":"tier","` + c.field + `":` + c.value + `}`} {
				if r := do(t, s, "POST", "/key/update", testKey, body); r.status != http.StatusOK {
					t.Fatalf("/key/update %s: %d %s", body, r.status, r.raw)
				}
				onBudget("/key/update "+body, k.Token, 5)
			}
		}
		// Once the budget has a soft_budget, 0 is another value on both; max_budget 0 (a
		// block) is never the budget's.
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"tier","soft_budget":2}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"tier","soft_budget":0}`), http.StatusBadRequest, "soft_budget", "sets it to 2:")
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","soft_budget":0}`), http.StatusBadRequest, "soft_budget", "sets it to 2:")
		wantParam(t, do(t, s, "POST", "/key/generate", testKey, `{"budget_id":"tier","max_budget":0}`), http.StatusBadRequest, "max_budget", "sets it to 5:")
		wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","max_budget":0}`), http.StatusBadRequest, "max_budget", "sets it to 5:")
		if info := onBudget("after refused zeros", k.Token, 5); info.SoftBudget == nil || *info.SoftBudget != 2 || info.Blocked {
			t.Fatalf("the key after refused zeros: %+v", info)
		}

		// Natively alike.
		if r := do(t, s, "PATCH", "/api/v1/keys/"+k.Token, testKey, `{"max_budget_usd":5,"soft_budget_usd":2,"tokens_per_minute":1000,"budget_duration":"7d","name":"n"}`); r.status != http.StatusOK {
			t.Fatalf("PATCH sending the budget's values back: %d %s", r.status, r.raw)
		}
		if r := do(t, s, "PATCH", "/api/v1/keys/"+k.Token, testKey, `{"max_budget_usd":null}`); r.status != http.StatusOK {
			t.Fatalf("PATCH max_budget_usd null: %d %s", r.status, r.raw)
		}
		wantStatusWith(t, do(t, s, "PATCH", "/api/v1/keys/"+k.Token, testKey, `{"soft_budget_usd":0}`), http.StatusUnprocessableEntity, `soft_budget_usd: the key's budget \"tier\" (budget_id) sets it to 2:`)
		wantStatusWith(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"budget_id":"tier","soft_budget_usd":0}`), http.StatusUnprocessableEntity, "soft_budget_usd: the key's budget")
		wantStatusWith(t, do(t, s, "POST", "/api/v1/keys", testKey, `{"budget_id":"tier","max_budget_usd":5,"soft_budget_usd":2,"tokens_per_minute":null}`), http.StatusCreated, `"budget_id":"tier"`)
		onBudget("after native updates", k.Token, 5)

		// A key without a budget: max_budget null still removes its bound; budget_id null
		// beside max_budget null leaves the budget and removes the bound.
		own := litellmGenerate(t, s, `{"max_budget":3}`)
		if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+own.Token+`","max_budget":null}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if info := litellmKeyInfoOf(t, s, own.Token); info.MaxBudget != nil {
			t.Fatalf("/key/update max_budget null of a key without a budget: %+v", info)
		}
		if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+k.Token+`","budget_id":null,"max_budget":null}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if info := litellmKeyInfoOf(t, s, k.Token); info.BudgetID != nil || info.MaxBudget != nil || info.TPMLimit == nil || *info.TPMLimit != 1000 {
			t.Fatalf("/key/update budget_id null and max_budget null: %+v", info)
		}
	})
}

// TestCustomerBudgetFieldsSentBack: on every store driver, an end user's budget fields
// given beside its budget_id (given or the end user's) are accepted when they have the
// budget's values, and change nothing; another value is refused naming the field and
// saying what the budget sets. On /customer/new and /customer/update alike null, 0 and ""
// ask for nothing (the update ignores every default); on POST and PATCH
// /api/v1/customers alike null asks for nothing and 0 is the budget's value only where
// it has none.
func TestCustomerBudgetFieldsSentBack(t *testing.T) {
	drivertest.ForEach(t, func(t *testing.T, d store.Driver) {
		_, s := keysServer(t, store.New(d), 0)
		if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":5,"tpm_limit":1000,"budget_duration":"7d"}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		onBudget := func(what, id string) endUser {
			t.Helper()
			r := do(t, s, "GET", "/api/v1/customers/"+id, testKey, "")
			var e endUser
			if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &e) != nil || e.BudgetID != "tier" || e.MaxBudgetUSD != 5 ||
				e.TokensPerMinute != 1000 || e.BudgetDuration != "7d" || e.Blocked {
				t.Fatalf("%s: the end user is not on its budget: %d %s", what, r.status, r.raw)
			}
			return e
		}
		if r := do(t, s, "POST", "/customer/new", testKey, `{"user_id":"erin","budget_id":"tier","max_budget":5,"tpm_limit":1000,"budget_duration":"7d","soft_budget":null}`); r.status != http.StatusOK {
			t.Fatalf("/customer/new with the budget's values: %d %s", r.status, r.raw)
		}
		onBudget("made with the budget's values", "erin")
		if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"erin","alias":"Erin","max_budget":5,"tpm_limit":1000,"budget_duration":"7d"}`); r.status != http.StatusOK {
			t.Fatalf("/customer/update sending the budget's values back: %d %s", r.status, r.raw)
		}
		if e := onBudget("after the edit", "erin"); e.Alias != "Erin" {
			t.Fatalf("the edit did not set the alias: %+v", e)
		}
		if r := do(t, s, "POST", "/customer/update", testKey, `{"user_id":"erin","budget_id":"tier","max_budget":5,"tpm_limit":1000}`); r.status != http.StatusOK {
			t.Fatalf("/customer/update sending budget_id and its values back: %d %s", r.status, r.raw)
		}
		onBudget("after budget_id and its values sent back", "erin")

		wantParam(t, do(t, s, "POST", "/customer/update", testKey, `{"user_id":"erin","max_budget":6}`), http.StatusBadRequest, "max_budget", `max_budget: the end user's budget "tier" (budget_id) sets it to 5:`)
		wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","budget_id":"tier","tpm_limit":999}`), http.StatusBadRequest, "tpm_limit", "sets it to 1000:")
		wantParam(t, do(t, s, "POST", "/customer/new", testKey, `{"user_id":"x","budget_id":"tier","max_budget":0}`), http.StatusBadRequest, "max_budget", "sets it to 5:")
		onBudget("after refused updates", "erin")
		if r := do(t, s, "GET", "/api/v1/customers/x", testKey, ""); r.status != http.StatusNotFound {
			t.Fatalf("a refused /customer/new made x: %d %s", r.status, r.raw)
		}

		// LiteLLM's routes: null, 0 and "" alike on new and update, with or without a
		// soft_budget on the budget.
		n := 0
		for _, soft := range []string{"", "2"} {
			if soft != "" {
				if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"tier","soft_budget":`+soft+`}`); r.status != http.StatusOK {
					t.Fatal(r.status, r.raw)
				}
			}
			for _, c := range []struct{ field, value string }{
				{"max_budget", "null"}, {"soft_budget", "null"}, {"soft_budget", "0"}, {"tpm_limit", "null"}, {"tpm_limit", "0"}, {"budget_duration", `""`},
			} {
				n++
				id := fmt.Sprintf("c%d", n)
				body := `{"user_id":"` + id + `","budget_id":"tier","` + c.field + `":` + c.value + `}`
				if r := do(t, s, "POST", "/customer/new", testKey, body); r.status != http.StatusOK {
					t.Fatalf("/customer/new %s: %d %s", body, r.status, r.raw)
				}
				onBudget("/customer/new "+body, id)
				body = `{"user_id":"erin","` + c.field + `":` + c.value + `}`
				if r := do(t, s, "POST", "/customer/update", testKey, body); r.status != http.StatusOK {
					t.Fatalf("/customer/update %s: %d %s", body, r.status, r.raw)
				}
				onBudget("/customer/update "+body, "erin")
			}
		}

		// Natively: 0 is the budget's value only where it has none, alike on POST and PATCH.
		if r := do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"max_budget_usd":5,"soft_budget_usd":2,"tokens_per_minute":1000,"budget_duration":null}`); r.status != http.StatusOK {
			t.Fatalf("PATCH sending the budget's values back: %d %s", r.status, r.raw)
		}
		wantStatusWith(t, do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"soft_budget_usd":0}`), http.StatusUnprocessableEntity, `soft_budget_usd: the end user's budget \"tier\" (budget_id) sets it to 2:`)
		wantStatusWith(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"n1","budget_id":"tier","soft_budget_usd":0}`), http.StatusUnprocessableEntity, "soft_budget_usd: the end user's budget")
		wantStatusWith(t, do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"tokens_per_minute":0}`), http.StatusUnprocessableEntity, "tokens_per_minute: the end user's budget")
		wantStatusWith(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"n1","budget_id":"tier","tokens_per_minute":0}`), http.StatusUnprocessableEntity, "tokens_per_minute: the end user's budget")
		if e := onBudget("after native refusals", "erin"); e.SoftBudgetUSD != 2 {
			t.Fatalf("erin after native refusals: %+v", e)
		}
		if r := do(t, s, "POST", "/budget/update", testKey, `{"budget_id":"tier","soft_budget":null}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		if r := do(t, s, "PATCH", "/api/v1/customers/erin", testKey, `{"soft_budget_usd":0,"budget_duration":"7d"}`); r.status != http.StatusOK {
			t.Fatalf("PATCH soft_budget_usd 0 of a budget with none: %d %s", r.status, r.raw)
		}
		wantStatusWith(t, do(t, s, "POST", "/api/v1/customers", testKey, `{"end_user_id":"n1","budget_id":"tier","soft_budget_usd":0,"max_budget_usd":null}`), http.StatusCreated, `"budget_id":"tier"`)
		onBudget("made natively with soft_budget_usd 0", "n1")
	})
}
