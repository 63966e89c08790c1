package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// modelLimitsInfo is the part of /key/info's info about a key's per-model limits.
type modelLimitsInfo struct {
	Spend          float64 `json:"spend"`
	ModelMaxBudget map[string]struct {
		BudgetLimit float64 `json:"budget_limit"`
		TimePeriod  *string `json:"time_period"`
	} `json:"model_max_budget"`
	ModelMaxBudgetUsage map[string]struct {
		CurrentSpend float64 `json:"current_spend"`
	} `json:"model_max_budget_usage"`
	ModelRPMLimit map[string]int64 `json:"model_rpm_limit"`
	ModelTPMLimit map[string]int64 `json:"model_tpm_limit"`
}

func modelLimitsOf(t *testing.T, s *Server, token string) modelLimitsInfo {
	t.Helper()
	r := do(t, s, "GET", "/key/info?key="+token, testKey, "")
	var a struct {
		Info modelLimitsInfo `json:"info"`
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &a) != nil {
		t.Fatalf("/key/info: %d %s", r.status, r.raw)
	}
	return a.Info
}

// openAIErrorOf is the error object of an OpenAI-style error body.
func openAIErrorOf(t *testing.T, b []byte) (msg, typ, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not an error body: %s", b)
	}
	c, _ := e.Error.Code.(string)
	return e.Error.Message, e.Error.Type, c
}

// TestKeyModelMaxBudget: a key's model_max_budget (LiteLLM's shape, and an older plain
// number) refuses requests for a model once its spend reaches the budget, with LiteLLM's
// 400 budget_exceeded, while the key's other models still work; the model's spend comes
// from the same charges as the key's, is shown by /key/info, survives a restart (another
// server on the store) and goes with the budget when /key/update removes it.
func TestKeyModelMaxBudget(t *testing.T) {
	st := newTestStore(t)
	hs, s := keysServer(t, st, 0)
	// $0.013 an answer: openai/ok's budget allows two (0 then 0.013 < 0.02), "ok2" none.
	g := litellmGenerate(t, s, `{"key_alias":"bot","model_max_budget":{"openai/ok":{"budget_limit":"0.02","time_period":"1d"},"ok2":0}}`)
	for i := range 2 {
		if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("openai/ok call %d within its budget: %d %s", i+1, resp.StatusCode, b)
		}
	}
	wantSpent := func(url, model, entry string) {
		t.Helper()
		resp, b := post(t, url+"/v1/chat/completions", g.Key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		msg, typ, code := openAIErrorOf(t, b)
		want := "LiteLLM Virtual Key: " + g.Token + ", key_alias: bot, exceeded budget for model=" + entry
		if resp.StatusCode != http.StatusBadRequest || msg != want || typ != "budget_exceeded" || code != "400" {
			t.Fatalf("%s over its model budget: %d %s; want 400 budget_exceeded %q", model, resp.StatusCode, b, want)
		}
	}
	wantSpent(hs.URL, "openai/ok", "openai/ok")
	wantSpent(hs.URL, "openai/ok2", "ok2") // held to the bare name's entry; a budget of 0 refuses at once
	if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a model without a budget of its own: %d %s", resp.StatusCode, b)
	}
	info := modelLimitsOf(t, s, g.Token)
	if u := info.ModelMaxBudgetUsage["openai/ok"].CurrentSpend; math.Abs(u-0.026) > 1e-9 {
		t.Errorf("openai/ok's current_spend %v, want 0.026: %+v", u, info)
	}
	if u, ok := info.ModelMaxBudgetUsage["ok2"]; !ok || u.CurrentSpend != 0 {
		t.Errorf("ok2's usage %+v, want 0", info.ModelMaxBudgetUsage)
	}
	if b := info.ModelMaxBudget["openai/ok"]; b.BudgetLimit != 0.02 || b.TimePeriod == nil || *b.TimePeriod != "1d" {
		t.Errorf("model_max_budget %+v", info.ModelMaxBudget)
	}
	if math.Abs(info.Spend-0.039) > 1e-9 { // the key's spend: the same three answers
		t.Errorf("the key's spend %v, want 0.039", info.Spend)
	}

	// Another server on the store (a restart): the model's spend is stored, not in memory.
	hs2, s2 := keysServer(t, st, 0)
	wantSpent(hs2.URL, "openai/ok", "openai/ok")
	if u := modelLimitsOf(t, s2, g.Token).ModelMaxBudgetUsage["openai/ok"].CurrentSpend; math.Abs(u-0.026) > 1e-9 {
		t.Errorf("after a restart openai/ok's current_spend %v, want 0.026", u)
	}
	// The native key shows it too.
	if vk := keyInfoOf(t, s2, testKey, "/api/v1/keys/"+g.Token); math.Abs(vk.Spend.Models["openai/ok"].CostUSD-0.026) > 1e-9 || vk.ModelMaxBudget["openai/ok"].MaxBudgetUSD != 0.02 {
		t.Errorf("native key %+v", vk)
	}

	// Removed by /key/update, the budget no longer holds the model.
	if r := do(t, s2, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_max_budget":null}`); r.status != http.StatusOK {
		t.Fatalf("/key/update model_max_budget null: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs2, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("openai/ok after its budget was removed: %d %s", resp.StatusCode, b)
	}
	// An older LiteLLM's plain number: a budget for all time.
	if r := do(t, s2, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_max_budget":{"openai/other":0.01}}`); r.status != http.StatusOK {
		t.Fatalf("/key/update a plain number: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs2, g.Key, "openai/other"); resp.StatusCode != http.StatusOK {
		t.Fatalf("openai/other's first call: %d %s", resp.StatusCode, b)
	}
	wantSpent(hs2.URL, "openai/other", "openai/other")
}

// TestKeyModelRateLimits: a key's model_rpm_limit and model_tpm_limit refuse requests for
// a model past its rate in the minute with LiteLLM's 429 (and Retry-After), while the key's
// other models still work; /key/info shows them.
func TestKeyModelRateLimits(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"model_rpm_limit":{"openai/ok":2},"model_tpm_limit":{"ok2":15}}`)
	for i := range 2 {
		if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("openai/ok call %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	resp, b := chatWith(t, hs, g.Key, "openai/ok")
	msg, typ, _ := openAIErrorOf(t, b)
	if resp.StatusCode != http.StatusTooManyRequests || typ != "rate_limit_error" || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(msg, "Rate limit exceeded for model_per_key: "+g.Token+":openai/ok. Limit type: requests. Current limit: 2, Remaining: 0.") {
		t.Fatalf("openai/ok's third request in a minute: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	// Tokens: 10 an answer; the second starts at 10 < 15, the third at 20.
	for i := range 2 {
		if resp, b := chatWith(t, hs, g.Key, "openai/ok2"); resp.StatusCode != http.StatusOK {
			t.Fatalf("openai/ok2 call %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	resp, b = chatWith(t, hs, g.Key, "openai/ok2")
	if msg, _, _ := openAIErrorOf(t, b); resp.StatusCode != http.StatusTooManyRequests ||
		!strings.HasPrefix(msg, "Rate limit exceeded for model_per_key: "+g.Token+":ok2. Limit type: tokens. Current limit: 15, Remaining: 0.") {
		t.Fatalf("openai/ok2 after 20 tokens of 15: %d %s", resp.StatusCode, b)
	}
	for range 3 {
		if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusOK {
			t.Fatalf("a model without limits of its own: %d %s", resp.StatusCode, b)
		}
	}
	if info := modelLimitsOf(t, s, g.Token); info.ModelRPMLimit["openai/ok"] != 2 || info.ModelTPMLimit["ok2"] != 15 {
		t.Fatalf("/key/info %+v", info)
	}
	// 0 refuses every request for the model (LiteLLM's count >= limit).
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_rpm_limit":{"openai/other":0}}`); r.status != http.StatusOK {
		t.Fatalf("/key/update: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/other"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a model of rpm 0: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("openai/ok once its limit was replaced: %d %s", resp.StatusCode, b)
	}
}

// TestKeyModelRateLimitsSharedByReplicas: two replicas on one store hold a key's
// model_rpm_limit and model_tpm_limit together once their counters Sync, as they do its
// rpm_limit and tpm_limit.
func TestKeyModelRateLimitsSharedByReplicas(t *testing.T) {
	st := newTestStore(t)
	ctx := context.Background()
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	ha, a := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, SharedLimits: ca})
	hb, _ := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey}, SharedLimits: cb})
	sync := func() {
		t.Helper()
		for _, c := range []*store.Counters{ca, cb} {
			if err := c.Sync(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync()
	g := litellmGenerate(t, a, `{"model_rpm_limit":{"openai/ok":2},"model_tpm_limit":{"openai/ok2":15}}`)
	for _, model := range []string{"openai/ok", "openai/ok", "openai/ok2", "openai/ok2"} {
		if resp, b := chatWith(t, ha, g.Key, model); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s on a: %d %s", model, resp.StatusCode, b)
		}
	}
	sync()
	for _, model := range []string{"openai/ok", "openai/ok2"} {
		if resp, b := chatWith(t, hb, g.Key, model); resp.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s on b after a used its minute: %d %s; want 429 across replicas", model, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hb, g.Key, "openai/other"); resp.StatusCode != http.StatusOK {
		t.Errorf("another model on b: %d %s", resp.StatusCode, b)
	}
}

// TestKeyModelLimitsValidation: a per-model limit naming a model the server does not route
// to, a pattern, a negative value or a value of the wrong type is refused naming its field,
// on LiteLLM's routes (400) and the native one (422); nothing is stored.
func TestKeyModelLimitsValidation(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for body, want := range map[string][2]string{
		`{"model_max_budget":{"openai/nope":{"budget_limit":1,"time_period":"1d"}}}`: {"model_max_budget", `"openai/nope" is not a model`},
		`{"model_max_budget":{"openai/ok":{"budget_limit":-1}}}`:                     {"model_max_budget", "at least 0"},
		`{"model_max_budget":{"openai/ok":-2}}`:                                      {"model_max_budget", "at least 0"},
		`{"model_max_budget":{"openai/ok":{"budget_limit":true}}}`:                   {"model_max_budget", "budget_limit: must be a number"},
		`{"model_max_budget":{"openai/ok":{"budget_limit":1,"time_period":"soon"}}}`: {"model_max_budget", "time_period"},
		`{"model_rpm_limit":{"openai/ok":-1}}`:                                       {"model_rpm_limit", "at least 0"},
		`{"model_rpm_limit":{"openai/*":5}}`:                                         {"model_rpm_limit", "not a pattern"},
		`{"model_tpm_limit":{"openai/ok":"lots"}}`:                                   {"model_tpm_limit", "whole number"},
		`{"model_tpm_limit":{"nope":10}}`:                                            {"model_tpm_limit", `"nope" is not a model`},
		`{"model_tpm_limit":[1]}`:                                                    {"model_tpm_limit", "object of models"},
	} {
		wantParam(t, do(t, s, "POST", "/key/generate", testKey, body), http.StatusBadRequest, want[0], want[1])
	}
	for body, param := range map[string]string{
		`{"model_rpm_limit":{"openai/ok":-1}}`:                                   "model_rpm_limit",
		`{"model_max_budget":{"openai/ok":{"max_budget_usd":-1}}}`:               "model_max_budget",
		`{"model_tpm_limit":{"openai/nope":1}}`:                                  "model_tpm_limit",
		`{"model_max_budget":{"ok":{"max_budget_usd":1,"budget_duration":"x"}}}`: "model_max_budget",
	} {
		if r := do(t, s, "POST", "/api/v1/keys", testKey, body); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, param) {
			t.Errorf("POST /api/v1/keys %s: %d %s; want 422 naming %s", body, r.status, r.raw, param)
		}
	}
	if r := do(t, s, "GET", "/key/list", testKey, ""); r.body["total_count"] != 0.0 {
		t.Fatalf("a refused request stored a key: %s", r.raw)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"model_rpm_limit":{"openai/ok":2}}`); r.status != http.StatusCreated || !strings.Contains(r.raw, `"model_rpm_limit":{"openai/ok":2}`) {
		t.Fatalf("native key with model_rpm_limit: %d %s", r.status, r.raw)
	}
	// Entries that ask for nothing (LiteLLM gates nothing without a budget_limit) are left out.
	empty := litellmGenerate(t, s, `{"model_max_budget":{"openai/ok":{"time_period":"1d"},"ok2":null},"model_rpm_limit":{"openai/ok":null}}`)
	if info := modelLimitsOf(t, s, empty.Token); len(info.ModelMaxBudget) != 0 || len(info.ModelRPMLimit) != 0 {
		t.Fatalf("entries asking for nothing were kept: %+v", info)
	}
	// Valid on update too, and an unknown model refused there as well.
	g := litellmGenerate(t, s, `{"model_rpm_limit":{"ok":3}}`)
	wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_tpm_limit":{"openai/nope":1}}`), http.StatusBadRequest, "model_tpm_limit", "is not a model")
	wantParam(t, do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_rpm_limit":{"ok":-3}}`), http.StatusBadRequest, "model_rpm_limit", "at least 0")
	if info := modelLimitsOf(t, s, g.Token); info.ModelRPMLimit["ok"] != 3 || len(info.ModelTPMLimit) != 0 {
		t.Fatalf("refused updates changed the key: %+v", info)
	}
}

// TestKeyModelLimitsKeptByOtherChanges: changes of a key that leave its per-model limits
// alone — its alias on /key/update, a /budget/update of its budget_id, a regeneration —
// keep them held.
func TestKeyModelLimitsKeptByOtherChanges(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/budget/new", testKey, `{"budget_id":"tier","max_budget":5}`); r.status != http.StatusOK {
		t.Fatalf("/budget/new: %d %s", r.status, r.raw)
	}
	g := litellmGenerate(t, s, `{"budget_id":"tier","model_rpm_limit":{"openai/ok":1},"model_max_budget":{"openai/ok2":{"budget_limit":0.01}}}`)
	for _, c := range []struct{ path, body string }{
		{"/key/update", `{"key":"` + g.Token + `","key_alias":"renamed"}`},
		{"/budget/update", `{"budget_id":"tier","max_budget":6}`},
		{"/key/regenerate", `{"key":"` + g.Token + `"}`},
	} {
		if r := do(t, s, "POST", c.path, testKey, c.body); r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", c.path, r.status, r.raw)
		} else if k, _ := r.body["key"].(string); strings.HasPrefix(k, "sy-vk-") {
			g.Key = k // regenerated
		}
	}
	info := modelLimitsOf(t, s, g.Token)
	if info.ModelRPMLimit["openai/ok"] != 1 || info.ModelMaxBudget["openai/ok2"].BudgetLimit != 0.01 {
		t.Fatalf("limits after the changes: %+v", info)
	}
	for _, model := range []string{"openai/ok", "openai/ok2"} {
		if resp, b := chatWith(t, hs, g.Key, model); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s's first request: %d %s", model, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("openai/ok's second request in a minute: %d %s; want 429", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok2"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("openai/ok2 over its budget: %d %s; want 400", resp.StatusCode, b)
	}
}

// TestKeyModelLimitsOfTeamKeyAndPatch: a key of a team (whose account its own sits
// inside) is held to its per-model budget, charged to the key alone while the team's spend
// counts every answer; a PATCH of a per-model limit on /api/v1/keys replaces the key's
// whole rather than merging into it.
func TestKeyModelLimitsOfTeamKeyAndPatch(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"search","max_budget":10}`); r.status != http.StatusOK {
		t.Fatalf("/team/new: %d %s", r.status, r.raw)
	}
	g := litellmGenerate(t, s, `{"team_id":"search","model_max_budget":{"openai/ok":{"budget_limit":0.01}},"model_rpm_limit":{"openai/other":5}}`)
	for _, model := range []string{"openai/ok", "openai/other"} {
		if resp, b := chatWith(t, hs, g.Key, model); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", model, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hs, g.Key, "openai/ok"); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("openai/ok over its budget in a team: %d %s", resp.StatusCode, b)
	}
	if u := modelLimitsOf(t, s, g.Token).ModelMaxBudgetUsage["openai/ok"].CurrentSpend; math.Abs(u-0.013) > 1e-9 {
		t.Errorf("openai/ok's spend %v, want 0.013 (its own answer only)", u)
	}
	if r := do(t, s, "GET", "/team/info?team_id=search", testKey, ""); !strings.Contains(r.raw, `"spend":0.026`) {
		t.Errorf("the team's spend (both answers): %s", r.raw)
	}
	r := do(t, s, "PATCH", "/api/v1/keys/"+g.Token, testKey, `{"model_rpm_limit":{"openai/ok2":1}}`)
	var vk virtualKey
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &vk) != nil || len(vk.ModelRPMLimit) != 1 || vk.ModelRPMLimit["openai/ok2"] != 1 || len(vk.ModelMaxBudget) != 1 {
		t.Fatalf("PATCH model_rpm_limit: %d %s", r.status, r.raw)
	}
}

// TestKeyModelLimitsHoldEachFallback: a key's per-model limits hold every model a request
// may go to, not only the one it names: a fallback (OpenAI-compatible fallbacks, native
// models and fallback_models), or a model group's member, whose model's budget is spent or
// whose rpm is used up is skipped and never answers; the model that answers is the one
// charged and counted, not the one asked; a request all of whose models are refused gets
// the first one's refusal, as a request for it alone does (LiteLLM's 400 budget_exceeded
// or 429).
func TestKeyModelLimitsHoldEachFallback(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	g := litellmGenerate(t, s, `{"key_alias":"bot","model_max_budget":{"openai/ok2":{"budget_limit":0,"time_period":"1d"},"openai/ok":{"budget_limit":1,"time_period":"1d"}},"model_rpm_limit":{"openai/other":1}}`)
	chat := func(body string) (int, map[string]any, []byte) {
		t.Helper()
		resp, b := post(t, hs.URL+"/v1/chat/completions", g.Key, body)
		var m map[string]any
		json.Unmarshal(b, &m)
		return resp.StatusCode, m, b
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	// answeredBy is the model of an answer's last attempt (the one that answered).
	answeredBy := func(m map[string]any) string {
		sy, _ := m["switchyard"].(map[string]any)
		as, _ := sy["attempts"].([]any)
		if len(as) == 0 {
			return ""
		}
		a, _ := as[len(as)-1].(map[string]any)
		model, _ := a["model"].(string)
		return model
	}

	// The fallback's model is over its budget: it is not called, the asked model's failure stands.
	if code, _, b := chat(`{"model":"openai/down","fallbacks":["openai/ok2"],` + msgs + `}`); code == http.StatusOK ||
		!strings.Contains(string(b), "exceeded budget for model=openai/ok2") {
		t.Fatalf("a fallback over its model budget: %d %s; want the failure of openai/down with openai/ok2 skipped", code, b)
	}
	// The asked model is over its budget: its fallback answers and is charged, the asked one is not.
	if code, m, b := chat(`{"model":"openai/ok2","fallbacks":["openai/ok"],` + msgs + `}`); code != http.StatusOK || answeredBy(m) != "openai/ok" {
		t.Fatalf("the asked model over its budget, a fallback within its own: %d %s; want ok's answer", code, b)
	}
	info := modelLimitsOf(t, s, g.Token)
	if u := info.ModelMaxBudgetUsage["openai/ok"].CurrentSpend; math.Abs(u-0.013) > 1e-9 || info.ModelMaxBudgetUsage["openai/ok2"].CurrentSpend != 0 {
		t.Fatalf("the answering model's spend, not the asked one's: %+v", info.ModelMaxBudgetUsage)
	}
	// A model group of different models: the member over its budget is passed over.
	if r := do(t, s, "POST", "/key/update", testKey, `{"key":"`+g.Token+`","model_max_budget":{"openai/ok":0}}`); r.status != http.StatusOK {
		t.Fatalf("/key/update: %d %s", r.status, r.raw)
	}
	if code, m, b := chat(`{"model":"pair",` + msgs + `}`); code != http.StatusOK || answeredBy(m) != "openai/ok2" {
		t.Fatalf("group pair with openai/ok over its budget: %d %s; want ok2's answer", code, b)
	}
	// Native models: the first over its budget, the second answers.
	resp, b := post(t, hs.URL+"/api/v1/completions", g.Key, `{"models":["openai/ok","openai/ok2"],"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`)
	var native struct {
		Attempts []struct {
			Model, Outcome, Kind string
		} `json:"attempts"`
	}
	if json.Unmarshal(b, &native); resp.StatusCode != http.StatusOK || len(native.Attempts) != 2 || native.Attempts[1].Model != "openai/ok2" ||
		native.Attempts[0].Outcome != "skipped" || native.Attempts[0].Kind != "model_budget_exceeded" {
		t.Fatalf("native models [openai/ok openai/ok2], ok over its budget: %d %s", resp.StatusCode, b)
	}

	// rpm: the fallback's own model is counted when it answers, and refused past its rpm.
	if code, m, b := chat(`{"model":"openai/down","fallbacks":["openai/other"],` + msgs + `}`); code != http.StatusOK || answeredBy(m) != "openai/other" {
		t.Fatalf("first fallback to openai/other: %d %s", code, b)
	}
	if code, _, b := chat(`{"model":"openai/down","fallbacks":["openai/other"],` + msgs + `}`); code == http.StatusOK ||
		!strings.Contains(string(b), "model_per_key: "+g.Token+":openai/other") {
		t.Fatalf("second fallback to openai/other past its rpm of 1: %d %s", code, b)
	}
	// Every model refused: the first one's refusal, as for it alone.
	code, _, b := chat(`{"model":"openai/ok","fallbacks":["openai/other"],` + msgs + `}`)
	if msg, typ, ecode := openAIErrorOf(t, b); code != http.StatusBadRequest || typ != "budget_exceeded" || ecode != "400" ||
		msg != "LiteLLM Virtual Key: "+g.Token+", key_alias: bot, exceeded budget for model=openai/ok" {
		t.Fatalf("every model refused, the first by its budget: %d %s", code, b)
	}
	resp, b = post(t, hs.URL+"/v1/chat/completions", g.Key, `{"model":"openai/other","fallbacks":["openai/ok"],`+msgs+`}`)
	if msg, _, _ := openAIErrorOf(t, b); resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.HasPrefix(msg, "Rate limit exceeded for model_per_key: "+g.Token+":openai/other. Limit type: requests.") {
		t.Fatalf("every model refused, the first by its rpm: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if vk := keyInfoOf(t, s, testKey, "/api/v1/keys/"+g.Token); vk.Spend.Requests != 6 {
		t.Errorf("the key's requests %d, want 6: the refused requests take none", vk.Spend.Requests)
	}
}
