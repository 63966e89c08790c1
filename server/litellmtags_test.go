package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// tagChat makes a chat completion of key naming tags in the body's metadata.tags (and
// header, when given, in x-litellm-tags) and returns its status and body.
func tagChat(t *testing.T, url, key, bodyTags, header string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(`{"model":"openai/ok","messages":[{"role":"user","content":"hi"}],"metadata":{"tags":[`+bodyTags+`]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if header != "" {
		req.Header.Set("X-Litellm-Tags", header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tagInfo reads POST /tag/info of one tag.
func tagInfo(t *testing.T, s *Server, name string) litellmTagConfig {
	t.Helper()
	r := do(t, s, "POST", "/tag/info", testKey, `{"names":["`+name+`"]}`)
	var out map[string]litellmTagConfig
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
		t.Fatalf("POST /tag/info %s: %d %s", name, r.status, r.raw)
	}
	return out[name]
}

// TestLiteLLMTagBudgets: POST /tag/new gives a tag a budget that every request naming it
// (body metadata.tags or the x-litellm-tags header), of any key of the owner, draws on:
// past it they are refused with LiteLLM's 429 "Budget has been exceeded! Tag=…", while
// requests without the tag go on; /tag/info shows the limits and spend, /tag/update with
// max_budget null lifts the bound keeping the spend, /tag/list lists the tag, and after
// /tag/delete the tag bounds nothing and /tag/info answers 404 naming it.
func TestLiteLLMTagBudgets(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	r := do(t, s, "POST", "/tag/new", testKey, `{"name":"eng","description":"Engineering","max_budget":0.02,"budget_duration":"30d"}`)
	var made litellmTagAnswer
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &made) != nil || made.Message != "Tag eng created successfully" ||
		made.Tag.Name != "eng" || made.Tag.Description == nil || *made.Tag.Description != "Engineering" ||
		made.Tag.BudgetTable == nil || made.Tag.BudgetTable.MaxBudget == nil || *made.Tag.BudgetTable.MaxBudget != 0.02 || made.Tag.BudgetTable.BudgetID != "tag:eng" {
		t.Fatalf("POST /tag/new: %d %s", r.status, r.raw)
	}
	k1, k2 := litellmGenerate(t, s, `{}`), litellmGenerate(t, s, `{}`)
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if st, b := tagChat(t, hs.URL, k1.Key, `"eng"`, ""); st != http.StatusOK {
			t.Fatalf("tagged call %d: %d %s", i+1, st, b)
		}
	}
	// Another key of the owner, naming the tag in the header: the tag's account is shared.
	if st, b := tagChat(t, hs.URL, k2.Key, "", "eng"); st != http.StatusTooManyRequests || !strings.Contains(b, "Budget has been exceeded! Tag=eng Current cost: 0.026") {
		t.Fatalf("a request naming a spent tag: %d %s", st, b)
	}
	if st, b := tagChat(t, hs.URL, k2.Key, `"other"`, ""); st != http.StatusOK {
		t.Fatalf("a request without the tag: %d %s", st, b)
	}
	if got := tagInfo(t, s, "eng"); got.Spend < 0.0259 || got.Spend > 0.0261 {
		t.Fatalf("the tag's spend: %v, want its two calls' 0.026", got.Spend)
	}

	if r := do(t, s, "POST", "/tag/update", testKey, `{"name":"eng","max_budget":null}`); r.status != http.StatusOK || !strings.Contains(r.raw, "Tag eng updated successfully") {
		t.Fatalf("POST /tag/update: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k1.Key, `"eng"`, ""); st != http.StatusOK {
		t.Fatalf("a tagged request once the bound is lifted: %d %s", st, b)
	}
	if got := tagInfo(t, s, "eng"); got.Spend < 0.0389 || got.BudgetTable == nil || got.BudgetTable.MaxBudget != nil || got.BudgetTable.BudgetDuration == nil {
		t.Fatalf("after the update: %+v", got)
	}
	if r := do(t, s, "GET", "/tag/list", testKey, ""); r.status != http.StatusOK || !strings.Contains(r.raw, `"name":"eng"`) {
		t.Fatalf("GET /tag/list: %d %s", r.status, r.raw)
	}

	// Deleted: requests naming it draw on nothing.
	if r := do(t, s, "POST", "/tag/update", testKey, `{"name":"eng","max_budget":0.01}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, _ := tagChat(t, hs.URL, k1.Key, `"eng"`, ""); st != http.StatusTooManyRequests {
		t.Fatalf("a tagged request past the lowered bound: %d", st)
	}
	if r := do(t, s, "POST", "/tag/delete", testKey, `{"name":"eng"}`); r.status != http.StatusOK || !strings.Contains(r.raw, "Tag eng deleted successfully") {
		t.Fatalf("POST /tag/delete: %d %s", r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, k1.Key, `"eng"`, ""); st != http.StatusOK {
		t.Fatalf("a request naming a deleted tag: %d %s", st, b)
	}
	wantParam(t, do(t, s, "POST", "/tag/info", testKey, `{"names":["eng"]}`), http.StatusNotFound, "names", "Tags not found: ['eng']")
	wantParam(t, do(t, s, "POST", "/tag/delete", testKey, `{"name":"eng"}`), http.StatusNotFound, "name", "Tag eng not found")
}

// TestLiteLLMTagBadInput: /tag/new refuses a missing or malformed name, a name taken
// (409), a batch's tag, models not a list of deployments, budget_id,
// rpm_limit and an unknown field, each naming the field; a virtual key may not manage tags;
// another owner's tag is not this one's and bounds none of its requests.
func TestLiteLLMTagBadInput(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	for _, c := range []struct{ body, param, words string }{
		{`{"max_budget":1}`, "name", "required"},
		{`{"name":"has space"}`, "name", "1-64 letters"},
		{`{"name":"batch:b1"}`, "name", "batches"},
		{`{"name":"t","models":"openai/ok"}`, "models", "list of deployment ids"},
		{`{"name":"t","models":[""]}`, "models", "models[0]"},
		{`{"name":"t","budget_id":"b"}`, "budget_id", "not supported"},
		{`{"name":"t","rpm_limit":5}`, "rpm_limit", "not supported"},
		{`{"name":"t","max_budget":-1}`, "max_budget", "non-negative"},
		{`{"name":"t","max_budget":0}`, "max_budget", "budget of nothing"},
		{`{"name":"t","colour":"red"}`, "colour", "a tag has no colour"},
	} {
		wantParam(t, do(t, s, "POST", "/tag/new", testKey, c.body), http.StatusBadRequest, c.param, c.words)
	}
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"t","max_budget":0.001,"models":[]}`); r.status != http.StatusOK {
		t.Fatalf("a tag with empty models: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"t"}`); r.status != http.StatusConflict || !strings.Contains(r.raw, "Tag t already exists") {
		t.Fatalf("a tag made twice: %d %s", r.status, r.raw)
	}
	wantParam(t, do(t, s, "POST", "/tag/update", testKey, `{"name":"nope","max_budget":1}`), http.StatusNotFound, "name", "Tag nope not found")
	wantParam(t, do(t, s, "POST", "/tag/update", testKey, `{"name":"t","tpm_limit":"x"}`), http.StatusBadRequest, "tpm_limit", "whole number")
	vk := litellmGenerate(t, s, `{}`)
	if r := do(t, s, "POST", "/tag/new", vk.Key, `{"name":"mine"}`); r.status != http.StatusForbidden {
		t.Fatalf("a virtual key making a tag: %d %s", r.status, r.raw)
	}
	// The other operator key's requests naming t are not bounded by this owner's tag.
	for range 2 {
		if st, b := tagChat(t, hs.URL, completionsOtherKey, `"t"`, ""); st != http.StatusOK {
			t.Fatalf("another owner's request naming t: %d %s", st, b)
		}
	}
	wantParam(t, do(t, s, "POST", "/tag/info", completionsOtherKey, `{"names":["t"]}`), http.StatusNotFound, "names", "Tags not found: ['t']")
	// This owner's own request (no budget of its own) is bounded by it.
	if st, _ := tagChat(t, hs.URL, testKey, `"t"`, ""); st != http.StatusOK {
		t.Fatalf("the first request naming t: %d", st)
	}
	if st, b := tagChat(t, hs.URL, testKey, `"t"`, ""); st != http.StatusTooManyRequests || !strings.Contains(b, "Tag=t") {
		t.Fatalf("the operator's request past t's budget: %d %s", st, b)
	}
}

// TestLiteLLMTagBudgetsOtherSurfaces: the Messages and Responses routes draw on a tag's
// account as chat does (the tag from x-litellm-tags): past it each is refused naming the tag.
func TestLiteLLMTagBudgetsOtherSurfaces(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := litellmGenerate(t, s, `{}`)
	for _, c := range []struct{ path, body string }{
		{"/v1/messages", `{"model":"openai/ok","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`},
		{"/v1/responses", `{"model":"openai/ok","input":"hi"}`},
	} {
		name := "t" + strings.ReplaceAll(c.path, "/", "-")
		if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"`+name+`","max_budget":0.001}`); r.status != http.StatusOK {
			t.Fatal(r.status, r.raw)
		}
		status := func() (int, string) {
			req, _ := http.NewRequest("POST", hs.URL+c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+vk.Key)
			req.Header.Set("X-Litellm-Tags", name)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var sb strings.Builder
			_, _ = io.Copy(&sb, resp.Body)
			return resp.StatusCode, sb.String()
		}
		if st, b := status(); st != http.StatusOK {
			t.Fatalf("%s naming %s: %d %s", c.path, name, st, b)
		}
		if st, b := status(); st == http.StatusOK || !strings.Contains(b, "Tag="+name) {
			t.Fatalf("%s past %s's budget: %d %s", c.path, name, st, b)
		}
		if got := tagInfo(t, s, name); got.Spend < 0.0129 {
			t.Fatalf("%s: the tag's spend %v", name, got.Spend)
		}
	}
}

// TestTagDeletedMidRequestIsNotARevokedKey: a tag's account deleted while a request naming
// it was on its way (completions.BudgetGoneError of kind tag) is a retryable 409 naming the
// tag, not the 401 "this key was revoked" of a team's deleted account.
func TestTagDeletedMidRequestIsNotARevokedKey(t *testing.T) {
	ae := completionsError(fmt.Errorf("wrapped: %w", &completions.BudgetGoneError{Kind: completions.TagBudgetKind, Name: "eng", ID: completions.TagBudgetID("op", "eng")}))
	if ae == nil || ae.Status != http.StatusConflict || !ae.Retryable || !strings.Contains(ae.Message, "Tag=eng was deleted") {
		t.Fatalf("a tag deleted mid-request: %+v", ae)
	}
}

// TestLiteLLMTagListDynamicTags: GET /tag/list lists the tags made with /tag/new, then the
// tags requests named (from the daily spend) with LiteLLM's dynamic-tag description, their
// spend, first and last day; a batch's own tag and a stored tag are not listed twice; with
// start_date and end_date only those days' request tags are; a start_date alone, or a bad
// date, is a 400 naming it.
func TestLiteLLMTagListDynamicTags(t *testing.T) {
	prices, err := providers.ParseCatalog([]byte(`{"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	hs, s := spendServer(t, newTestStore(t), "openai", prices)
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"eng","max_budget":10}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if st, b := tagChat(t, hs.URL, testKey, `"eng","feature:summary"`, "batch:b_1"); st != http.StatusOK {
		t.Fatal(st, b)
	}
	if st, b := tagChat(t, hs.URL, completionsOtherKey, `"other:owner"`, ""); st != http.StatusOK {
		t.Fatal(st, b)
	}
	list := func(query string) []litellmTagConfig {
		t.Helper()
		r := do(t, s, "GET", "/tag/list"+query, testKey, "")
		var out []litellmTagConfig
		if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &out) != nil {
			t.Fatalf("GET /tag/list%s: %d %s", query, r.status, r.raw)
		}
		return out
	}
	got := list("")
	if len(got) != 2 || got[0].Name != "eng" || got[1].Name != "feature:summary" || got[1].Description == nil || *got[1].Description != dynamicTagDescription ||
		got[1].Spend < 0.0129 || got[0].Spend < 0.0129 {
		t.Fatalf("the tags: %+v", got)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	if got := list("?start_date=" + today + "&end_date=" + today); len(got) != 2 {
		t.Fatalf("today's tags: %+v", got)
	}
	if got := list("?start_date=2020-01-01&end_date=2020-01-02"); len(got) != 1 || got[0].Name != "eng" {
		t.Fatalf("2020's tags: %+v", got)
	}
	wantParam(t, do(t, s, "GET", "/tag/list?start_date="+today, testKey, ""), http.StatusBadRequest, "start_date", "provided together")
	wantParam(t, do(t, s, "GET", "/tag/list?start_date=yesterday&end_date="+today, testKey, ""), http.StatusBadRequest, "start_date", "YYYY-MM-DD")
}
