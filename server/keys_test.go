package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/store"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// keysServer is a server with the gateway (its usage recorded) over the scripted OpenAI
// upstream as provider "openai", whose catalogue lists three models (ok, ok2, other), priced
// ($0.001 per prompt token, $0.002 per completion token: an answer of the fake upstream,
// 7 + 3 tokens, costs $0.013), a model group "pair" of openai/ok and openai/ok2, model
// selection, the usage routes and perKey as the server's per-key bound; st is shared when
// given (replicas).
func keysServer(t testing.TB, st *store.Store, perKey int, more ...Option) (*httptest.Server, *Server) {
	return keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}, RequestsPerMinutePerKey: perKey}, more...)
}

// keysServerWith is keysServer with upstream up and cfg (its store is st, or a new one);
// more are applied before it serves (an option registering routes while it serves races
// its requests, such as a stray one of an earlier test reaching a reused port).
func keysServerWith(t testing.TB, st *store.Store, up http.Handler, cfg Config, more ...Option) (*httptest.Server, *Server) {
	t.Helper()
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	prices, err := providers.ParseCatalog([]byte(`{
		"ok": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"},
		"ok2": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"},
		"other": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if st == nil {
		st = newTestStore(t)
	}
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices: prices, Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}, Observer: rec,
		SharedLimits: cfg.SharedLimits, // a replica's gateway shares its tokens as its server shares requests
		ModelGroups:  map[string]completions.ModelGroup{"pair": {Models: []string{"openai/ok", "openai/ok2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = st
	s := testServer(t, cfg, nil)
	for _, o := range append([]Option{Completions(g), ModelSelection(routing.NewSelector(routing.Options{Store: st})), Usage(rec)}, more...) {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s
}

// issue creates a virtual key with body and returns its answer.
func issue(t *testing.T, s *Server, body string) virtualKey {
	t.Helper()
	r := do(t, s, "POST", "/api/v1/keys", testKey, body)
	if r.status != http.StatusCreated {
		t.Fatalf("POST /api/v1/keys %s: %d %s", body, r.status, r.raw)
	}
	var vk virtualKey
	if err := json.Unmarshal([]byte(r.raw), &vk); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(vk.Key, "sy-vk-") || !strings.HasPrefix(vk.ID, "vk_") || len(vk.ID) != 19 || vk.Object != "api_key" {
		t.Fatalf("issued %+v", vk)
	}
	return vk
}

func chatWith(t *testing.T, hs *httptest.Server, key, model string) (*http.Response, []byte) {
	t.Helper()
	return post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
}

func keyInfoOf(t *testing.T, s *Server, key, path string) virtualKey {
	t.Helper()
	r := do(t, s, "GET", path, key, "")
	if r.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.status, r.raw)
	}
	var vk virtualKey
	if err := json.Unmarshal([]byte(r.raw), &vk); err != nil {
		t.Fatal(err)
	}
	if vk.Key != "" || strings.Contains(r.raw, `"key"`) {
		t.Fatalf("the key itself is shown again: %s", r.raw)
	}
	return vk
}

// TestVirtualKeyLifecycle: an operator issues a key limited to one model and a USD budget;
// the key calls that model and no other, its spend is metered in USD, the budget stops it,
// it cannot manage keys or reach the operator's other endpoints, /v1/models shows it only
// what it may call, another key cannot see it, and a revoked key is refused at once.
func TestVirtualKeyLifecycle(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"name":"ci bot","models":["openai/ok"],"max_budget_usd":0.02}`)
	if vk.MaxBudgetUSD != 0.02 || vk.Name != "ci bot" || len(vk.Models) != 1 || vk.Spend.Requests != 0 {
		t.Fatalf("issued %+v", vk)
	}
	for i := range 2 { // $0.013 each: the second starts at 0.013 < 0.02
		if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/other"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a model the key may not call: %d %s", resp.StatusCode, b)
	}
	resp, b := chatWith(t, hs, vk.Key, "openai/ok")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "budget") || !strings.Contains(string(b), "$0.0260 of $0.0200") {
		t.Fatalf("over the USD budget: %d %s", resp.StatusCode, b)
	}
	info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID)
	if info.Spend.Requests != 2 || info.Spend.Tokens != 20 || math.Abs(info.Spend.CostUSD-0.026) > 1e-9 {
		t.Fatalf("spend %+v", info.Spend)
	}
	if self := keyInfoOf(t, s, vk.Key, "/api/v1/keys/self"); self.ID != vk.ID || !reflect.DeepEqual(self.Spend, info.Spend) {
		t.Fatalf("self %+v, want %+v", self, info)
	}
	wantError(t, do(t, s, "GET", "/api/v1/keys/self", testKey, ""), http.StatusNotFound, KindNotFound, "not a virtual key")

	// A virtual key issues no keys and reaches only the gateway and model selection.
	wantError(t, do(t, s, "POST", "/api/v1/keys", vk.Key, `{}`), http.StatusForbidden, KindForbidden, "limited in scope")
	wantError(t, do(t, s, "GET", "/api/v1/keys", vk.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")
	wantError(t, do(t, s, "GET", "/api/v1/test/whoami", vk.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")

	models := do(t, s, "GET", "/v1/models", vk.Key, "")
	if models.status != http.StatusOK || !strings.Contains(models.raw, `"openai/ok"`) || strings.Contains(models.raw, "openai/other") || strings.Contains(models.raw, `"pair"`) {
		t.Fatalf("models for the key: %s", models.raw)
	}
	if all := do(t, s, "GET", "/v1/models", testKey, ""); !strings.Contains(all.raw, "openai/other") {
		t.Fatalf("models for the operator: %s", all.raw)
	}

	list := do(t, s, "GET", "/api/v1/keys", testKey, "")
	if list.status != http.StatusOK || !strings.Contains(list.raw, vk.ID) || strings.Contains(list.raw, vk.Key) || strings.Contains(list.raw, `"key"`) {
		t.Fatalf("list: %s", list.raw)
	}
	if other := do(t, s, "GET", "/api/v1/keys", completionsOtherKey, ""); strings.Contains(other.raw, vk.ID) {
		t.Fatalf("another key lists it: %s", other.raw)
	}
	wantError(t, do(t, s, "GET", "/api/v1/keys/"+vk.ID, completionsOtherKey, ""), http.StatusNotFound, KindNotFound, vk.ID)
	wantError(t, do(t, s, "DELETE", "/api/v1/keys/"+vk.ID, completionsOtherKey, ""), http.StatusNotFound, KindNotFound, vk.ID)

	del := do(t, s, "DELETE", "/api/v1/keys/"+vk.ID, testKey, "")
	if del.status != http.StatusOK || del.body["deleted"] != true || del.body["id"] != vk.ID {
		t.Fatalf("delete: %d %s", del.status, del.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a revoked key: %d %s", resp.StatusCode, b)
	}
	wantError(t, do(t, s, "GET", "/api/v1/keys/"+vk.ID, testKey, ""), http.StatusNotFound, KindNotFound, vk.ID)
	for _, c := range []store.Collection{store.VirtualKeys, store.ScopedKeys, store.Budgets} {
		if es, err := s.cfg.Store.List(context.Background(), c, store.ListOptions{}); err != nil || len(es) != 0 {
			t.Fatalf("%s after the revocation: %d records, %v", c, len(es), err)
		}
	}
}

// TestVirtualKeyModelNames: a key may name a model group (then its models are allowed,
// called through the group or by name) and a bare name (the model it resolves to).
func TestVirtualKeyModelNames(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	grp := issue(t, s, `{"models":["pair"]}`)
	for _, m := range []string{"pair", "openai/ok", "openai/ok2"} {
		if resp, b := chatWith(t, hs, grp.Key, m); resp.StatusCode != http.StatusOK {
			t.Fatalf("group key, %s: %d %s", m, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hs, grp.Key, "openai/other"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("group key, openai/other: %d %s", resp.StatusCode, b)
	}
	models := do(t, s, "GET", "/v1/models", grp.Key, "")
	for _, want := range []string{`"pair"`, `"openai/ok"`, `"openai/ok2"`} {
		if !strings.Contains(models.raw, want) {
			t.Fatalf("group key's models lack %s: %s", want, models.raw)
		}
	}
	bare := issue(t, s, `{"models":["ok2"]}`)
	if resp, b := chatWith(t, hs, bare.Key, "openai/ok2"); resp.StatusCode != http.StatusOK {
		t.Fatalf("bare-name key, openai/ok2: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, bare.Key, "ok2"); resp.StatusCode != http.StatusOK {
		t.Fatalf("bare-name key, ok2: %d %s", resp.StatusCode, b)
	}
	if resp, b := chatWith(t, hs, bare.Key, "pair"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bare-name key, the group (openai/ok in it): %d %s", resp.StatusCode, b)
	}
	// Model selection spends nothing: a virtual key may ask.
	r := do(t, s, "POST", "/api/v1/model-select", bare.Key, `{"messages":[{"role":"user","content":"hi"}],"models":["openai/ok","openai/ok2"]}`)
	if r.status != http.StatusOK || r.body["providers"] == nil {
		t.Fatalf("model selection with a virtual key: %d %s", r.status, r.raw)
	}
	// Listing conversations, training and optimization are the operator's.
	wantError(t, do(t, s, "GET", "/api/v1/conversations", bare.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")
}

// TestVirtualKeyValidation: every bad field is a 422 naming it, and nothing is stored.
func TestVirtualKeyValidation(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	for body, field := range map[string]string{
		`{"models":["openai/nosuchmodel-x"]}`:                         "models[0]",
		`{"models":["openai/ok",""]}`:                                 "models[1]",
		`{"models":["openai/ok","openai/ok"]}`:                        "models[1]",
		`{"max_budget_usd":-1}`:                                       "max_budget_usd",
		`{"max_tokens":-5}`:                                           "max_tokens",
		`{"max_requests":-5}`:                                         "max_requests",
		`{"requests_per_minute":-1}`:                                  "requests_per_minute",
		`{"budget_duration":"monthly"}`:                               "budget_duration",
		`{"budget_duration":"0d"}`:                                    "budget_duration",
		`{"budget_duration":"500ms"}`:                                 "budget_duration",
		`{"expires_at":"2001-01-01T00:00:00Z"}`:                       "expires_at",
		`{"name":"` + strings.Repeat("x", 257) + `"}`:                 "name",
		`{"models":"openai/ok"}`:                                      "models",
		`{"max_budget_usd":"10"}`:                                     "max_budget_usd",
		`{"budget":10}`:                                               "budget",
		`{"models":[` + strings.Repeat(`"openai/ok",`, 100) + `"x"]}`: "models",
	} {
		r := do(t, s, "POST", "/api/v1/keys", testKey, body)
		msg, _ := r.body["message"].(string)
		if r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, field) {
			t.Errorf("%.60s: %d %s, want 422 naming %s", body, r.status, r.raw, field)
		}
	}
	for _, c := range []store.Collection{store.VirtualKeys, store.ScopedKeys, store.Budgets} {
		if es, _ := s.cfg.Store.List(context.Background(), c, store.ListOptions{}); len(es) != 0 {
			t.Fatalf("%s holds %d records after refused requests", c, len(es))
		}
	}
}

// TestVirtualKeyRate: a key's requests_per_minute bounds its POST requests apart from the
// key that issued it; without one, the server's per-key bound counts it as a key of its own.
func TestVirtualKeyRate(t *testing.T) {
	hs, s := keysServer(t, nil, 3)
	own := issue(t, s, `{"requests_per_minute":2}`)
	for i := range 2 {
		resp, b := chatWith(t, hs, own.Key, "openai/ok")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, b)
		}
		// OpenAI's and LiteLLM's headers of the key's own bound.
		if l, r := resp.Header.Get("X-Ratelimit-Limit-Requests"), resp.Header.Get("X-Ratelimit-Remaining-Requests"); l != "2" || r != strconv.Itoa(1-i) {
			t.Fatalf("call %d: x-ratelimit-limit-requests %q, remaining %q; want 2 and %d", i+1, l, r, 1-i)
		}
	}
	resp, b := chatWith(t, hs, own.Key, "openai/ok")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "requests_per_minute") {
		t.Fatalf("third call within the minute: %d %s", resp.StatusCode, b)
	}
	if r := resp.Header.Get("X-Ratelimit-Remaining-Requests"); r != "0" {
		t.Fatalf("the 429's x-ratelimit-remaining-requests %q, want 0", r)
	}
	if resp.Header.Get("x-should-retry") == "false" {
		t.Fatalf("a rate bound clears with time: the SDKs should retry it")
	}
	// The issuing key has its own three (the POST that issued own took one).
	if resp, b := chatWith(t, hs, testKey, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the issuing key: %d %s", resp.StatusCode, b)
	}
	plain := issue(t, s, `{}`)
	for i := range 3 {
		resp, b := chatWith(t, hs, plain.Key, "openai/ok")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("server bound, call %d: %d %s", i+1, resp.StatusCode, b)
		}
		if l, r := resp.Header.Get("X-Ratelimit-Limit-Requests"), resp.Header.Get("X-Ratelimit-Remaining-Requests"); l != "3" || r != strconv.Itoa(2-i) {
			t.Fatalf("server bound, call %d: x-ratelimit-limit-requests %q, remaining %q; want 3 and %d", i+1, l, r, 2-i)
		}
	}
	if resp, b := chatWith(t, hs, plain.Key, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "requests-per-minute-per-key") {
		t.Fatalf("server bound, fourth call: %d %s", resp.StatusCode, b)
	}
}

// TestVirtualKeyAcrossReplicas: a key issued on one replica works on another on the same
// store (after a restart too), its spend is one account, and a revocation on either is
// seen by both at once.
func TestVirtualKeyAcrossReplicas(t *testing.T) {
	st := newTestStore(t)
	hsA, a := keysServer(t, st, 0)
	hsB, b := keysServer(t, st, 0)
	vk := issue(t, a, `{"max_requests":3}`)
	for i, hs := range []*httptest.Server{hsA, hsB, hsB} {
		if resp, body := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	if resp, body := chatWith(t, hsA, vk.Key, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("fourth call, one account on both: %d %s", resp.StatusCode, body)
	}
	if info := keyInfoOf(t, b, testKey, "/api/v1/keys/"+vk.ID); info.Spend.Requests != 3 {
		t.Fatalf("spend seen on B: %+v", info.Spend)
	}
	if r := do(t, b, "DELETE", "/api/v1/keys/"+vk.ID, testKey, ""); r.status != http.StatusOK {
		t.Fatalf("revoke on B: %d %s", r.status, r.raw)
	}
	if resp, _ := chatWith(t, hsA, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("A after the revocation on B: %d", resp.StatusCode)
	}
}

// TestVirtualKeyExpiry: a key past expires_at is refused and listed as expired.
func TestVirtualKeyExpiry(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	vk := issue(t, s, `{"expires_at":"`+exp+`"}`)
	if vk.ExpiresAt == nil || vk.ExpiresAt.Format(time.RFC3339) != exp {
		t.Fatalf("expires_at %v, want %s", vk.ExpiresAt, exp)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("before expiry: %d %s", resp.StatusCode, b)
	}
	// Move the expiry into the past in both records, as time would.
	ctx := context.Background()
	past := time.Now().Add(-time.Minute).UTC()
	rec, err := store.GetJSON[storedVirtualKey](ctx, s.cfg.Store, store.VirtualKeys, "key_"+hashPrefix(testKey)+"/"+vk.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec.ExpiresAt = &past
	sk, err := store.GetJSON[storedScopedKey](ctx, s.cfg.Store, store.ScopedKeys, rec.Hash)
	if err != nil {
		t.Fatal(err)
	}
	sk.ExpiresAt = past
	if err := store.PutJSON(ctx, s.cfg.Store, store.VirtualKeys, rec.Owner+"/"+vk.ID, rec); err != nil {
		t.Fatal(err)
	}
	if err := store.PutJSON(ctx, s.cfg.Store, store.ScopedKeys, rec.Hash, sk); err != nil {
		t.Fatal(err)
	}
	// Told it expired, as LiteLLM tells it, every time (not only at the first use).
	for i := range 2 {
		if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized ||
			!strings.Contains(string(b), "Expired Key. Key Expiry time "+past.Format(time.RFC3339)) || !strings.Contains(string(b), `"type":"expired_key"`) {
			t.Fatalf("after expiry, call %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	if resp, b := chatWith(t, hs, "sk-not-a-key-at-all", "openai/ok"); resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(b), "Expired") {
		t.Fatalf("a made-up key: %d %s", resp.StatusCode, b)
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); !info.Expired {
		t.Fatalf("not listed as expired: %+v", info)
	}
}

func hashPrefix(key string) string {
	p, err := newAuth(nil, []string{key}).Authenticate(context.Background(), key)
	if err != nil {
		panic(err)
	}
	return strings.TrimPrefix(p.Owner, "key_")
}

// TestVirtualKeyCap: one key issues at most MaxVirtualKeysPerOwner keys (409 beyond).
func TestVirtualKeyCap(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	owner := "key_" + hashPrefix(testKey)
	for i := range MaxVirtualKeysPerOwner {
		id := fmt.Sprintf("vk_%016x", i)
		if err := store.PutJSON(context.Background(), s.cfg.Store, store.VirtualKeys, owner+"/"+id, storedVirtualKey{virtualKey: virtualKey{ID: id}, Owner: owner}); err != nil {
			t.Fatal(err)
		}
	}
	wantError(t, do(t, s, "POST", "/api/v1/keys", testKey, `{}`), http.StatusConflict, KindConflict, "delete some")
	if r := do(t, s, "POST", "/api/v1/keys", completionsOtherKey, `{}`); r.status != http.StatusCreated {
		t.Fatalf("another key's first: %d %s", r.status, r.raw)
	}
}

// TestVirtualKeyUpdate: PATCH changes the fields it gives and keeps the spend; a raised
// budget lets a stopped key call again at once, a narrowed model list refuses at once,
// expires_at null removes an expiry (an expired key comes back), bad fields are 422 and
// leave the key as it was.
func TestVirtualKeyUpdate(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"name":"a","models":["openai/ok","openai/ok2"],"max_requests":1}`)
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok2"); resp.StatusCode != http.StatusOK {
		t.Fatalf("first call: %d %s", resp.StatusCode, b)
	}
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok2"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over max_requests: %d", resp.StatusCode)
	}
	r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"max_requests":3,"models":["openai/ok"]}`)
	if r.status != http.StatusOK || r.body["name"] != "a" || r.body["max_requests"] != 3.0 {
		t.Fatalf("patch: %d %s", r.status, r.raw)
	}
	if spend := r.body["spend"].(map[string]any); spend["requests"] != 1.0 {
		t.Fatalf("spend not kept: %s", r.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after raising the bound: %d %s", resp.StatusCode, b)
	}
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok2"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a model taken off the list: %d", resp.StatusCode)
	}
	for body, field := range map[string]string{`{"max_requests":-1}`: "max_requests", `{"models":["openai/nope"]}`: "models[0]",
		`{"expires_at":"2001-01-01T00:00:00Z"}`: "expires_at", `{"colour":"red"}`: "colour", `[1]`: "JSON object"} {
		r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, body)
		if msg, _ := r.body["message"].(string); r.status != http.StatusUnprocessableEntity || !strings.Contains(msg, field) {
			t.Errorf("patch %s: %d %s, want 422 naming %s", body, r.status, r.raw, field)
		}
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); info.MaxRequests != 3 || len(info.Models) != 1 {
		t.Fatalf("a refused patch changed the key: %+v", info)
	}
	wantError(t, do(t, s, "PATCH", "/api/v1/keys/vk_0000000000000000", testKey, `{"name":"x"}`), http.StatusNotFound, KindNotFound, "vk_0000000000000000")
	wantError(t, do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, completionsOtherKey, `{"name":"x"}`), http.StatusNotFound, KindNotFound, vk.ID)
	wantError(t, do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, vk.Key, `{"max_requests":100}`), http.StatusForbidden, KindForbidden, "limited in scope")

	// An expired key (its shared record deleted by the first use after the expiry) comes
	// back when its expiry is removed.
	ctx := context.Background()
	rec, err := store.GetJSON[storedVirtualKey](ctx, s.cfg.Store, store.VirtualKeys, "key_"+hashPrefix(testKey)+"/"+vk.ID)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	rec.ExpiresAt = &past
	if err := store.PutJSON(ctx, s.cfg.Store, store.VirtualKeys, rec.Owner+"/"+vk.ID, rec); err != nil {
		t.Fatal(err)
	}
	if err := s.cfg.Store.Delete(ctx, store.ScopedKeys, rec.Hash); err != nil {
		t.Fatal(err)
	}
	if resp, _ := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("expired: %d", resp.StatusCode)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"name":"renamed"}`); r.status != http.StatusOK || r.body["expired"] != true {
		t.Fatalf("renaming an expired key: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"expires_at":null}`); r.status != http.StatusOK || r.body["expires_at"] != nil || r.body["expired"] != nil {
		t.Fatalf("removing the expiry: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after removing the expiry: %d %s", resp.StatusCode, b)
	}
}

// TestVirtualKeyUsage: a virtual key reads its own requests in the usage log and no one
// else's; its issuer sees every request and can pick one key's out by its tag.
func TestVirtualKeyUsage(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	a, b := issue(t, s, `{"name":"a"}`), issue(t, s, `{"name":"b"}`)
	for _, k := range []string{a.Key, a.Key, b.Key, testKey} {
		if resp, body := chatWith(t, hs, k, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: %d %s", resp.StatusCode, body)
		}
	}
	count := func(key, query string) (int, reply) {
		r := do(t, s, "GET", "/api/v1/usage/requests"+query, key, "")
		data, _ := r.body["data"].([]any)
		return len(data), r
	}
	if n, r := count(a.Key, ""); n != 2 || !strings.Contains(r.raw, `"tag":"key:`+a.ID+`"`) || strings.Contains(r.raw, b.ID) {
		t.Fatalf("key a's own requests: %d %s", n, r.raw)
	}
	if n, r := count(testKey, ""); n != 4 {
		t.Fatalf("the issuer's: %d %s", n, r.raw)
	}
	if n, r := count(testKey, "?tag=key:"+b.ID); n != 1 {
		t.Fatalf("the issuer's, key b's tag: %d %s", n, r.raw)
	}
	wantError(t, do(t, s, "GET", "/api/v1/usage/requests?tag=key:"+b.ID, a.Key, ""), http.StatusForbidden, KindForbidden, "only its own")
	wantError(t, do(t, s, "GET", "/api/v1/usage/series", a.Key, ""), http.StatusForbidden, KindForbidden, "limited in scope")
}

// TestVirtualKeyChoices: n choices with a budgeted key are n requests: those the budget can
// pay for are answered (a request bound of 2 gives 2 of 3), the header counts the rest.
func TestVirtualKeyChoices(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"max_requests":2}`)
	resp, b := post(t, hs.URL+"/v1/chat/completions", vk.Key, `{"model":"openai/ok","n":3,"messages":[{"role":"user","content":"hi"}]}`)
	m := decodeMap(t, b)
	if choices, _ := m["choices"].([]any); resp.StatusCode != http.StatusOK || len(choices) != 2 || resp.Header.Get("X-Switchyard-Choices-Failed") != "1" {
		t.Fatalf("n 3 with 2 requests left: %d, header %q, %s", resp.StatusCode, resp.Header.Get("X-Switchyard-Choices-Failed"), b)
	}
	if info := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); info.Spend.Requests != 2 {
		t.Fatalf("spend %+v", info.Spend)
	}
}

// TestVirtualKeyTokensPerMinute: a key's tokens_per_minute stops its requests once the
// minute's answers used it (a 429 the SDKs retry after Retry-After), apart from its
// issuer; a PATCH lifts it at once.
func TestVirtualKeyTokensPerMinute(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"tokens_per_minute":15}`) // an answer of the fake upstream is 10 tokens
	if vk.TokensPerMinute != 15 {
		t.Fatalf("issued %+v", vk)
	}
	for i := range 2 { // 0 then 10 of 15 used
		if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	resp, b := chatWith(t, hs, vk.Key, "openai/ok")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || resp.Header.Get("X-Should-Retry") == "false" ||
		!strings.Contains(string(b), "20 of 15 tokens per minute") || !strings.Contains(string(b), "rate_limit_exceeded") {
		t.Fatalf("over the minute's tokens: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if resp, b := chatWith(t, hs, testKey, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("the issuer: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"tokens_per_minute":0}`); r.status != http.StatusOK {
		t.Fatalf("patch: %d %s", r.status, r.raw)
	}
	if resp, b := chatWith(t, hs, vk.Key, "openai/ok"); resp.StatusCode != http.StatusOK {
		t.Fatalf("after lifting the bound: %d %s", resp.StatusCode, b)
	}
	if r := do(t, s, "POST", "/api/v1/keys", testKey, `{"tokens_per_minute":-1}`); r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "tokens_per_minute") {
		t.Fatalf("negative: %d %s", r.status, r.raw)
	}
}

// TestBudgetBusyIsRetryable: a request refused because its key's first requests were still
// running at its deadline is a 429 the SDKs retry (Retry-After, no x-should-retry: false),
// not a spent budget.
func TestBudgetBusyIsRetryable(t *testing.T) {
	ae := completionsError(fmt.Errorf("%w at this request's deadline", completions.ErrBudgetBusy))
	if ae == nil || ae.Status != http.StatusTooManyRequests || !ae.Retryable || ae.Header.Get("Retry-After") != "1" {
		t.Fatalf("mapped to %+v", ae)
	}
	if ae := completionsError(fmt.Errorf("%w: $1 of $1 spent", completions.ErrBudgetExceeded)); ae == nil || ae.Retryable {
		t.Fatalf("a spent budget mapped to %+v", ae)
	}
}

// TestVirtualKeyMetadata: a key keeps its metadata labels, shows them, a PATCH replaces or
// removes them whole, and a body over the bound is a 422 naming metadata that stores nothing.
func TestVirtualKeyMetadata(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	vk := issue(t, s, `{"name":"m","metadata":{"env":"prod","owner":"ops"}}`)
	if vk.Metadata["env"] != "prod" || vk.Metadata["owner"] != "ops" {
		t.Fatalf("issued metadata %v", vk.Metadata)
	}
	if got := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); got.Metadata["owner"] != "ops" {
		t.Fatalf("read metadata %v", got.Metadata)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"metadata":{"env":"dev"}}`); r.status != http.StatusOK {
		t.Fatalf("PATCH: %d %s", r.status, r.raw)
	}
	if got := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); got.Metadata["env"] != "dev" || got.Metadata["owner"] != nil {
		t.Fatalf("metadata not replaced whole: %v", got.Metadata)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"name":"m2"}`); r.status != http.StatusOK {
		t.Fatalf("PATCH name: %d %s", r.status, r.raw)
	}
	if got := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); got.Metadata["env"] != "dev" || got.Name != "m2" {
		t.Fatalf("metadata lost by a PATCH without it: %+v", got)
	}
	if r := do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"metadata":null}`); r.status != http.StatusOK {
		t.Fatalf("PATCH null: %d %s", r.status, r.raw)
	}
	if got := keyInfoOf(t, s, testKey, "/api/v1/keys/"+vk.ID); got.Metadata != nil {
		t.Fatalf("metadata not removed: %v", got.Metadata)
	}
	r := do(t, s, "POST", "/api/v1/keys", testKey, `{"metadata":{"big":"`+strings.Repeat("x", 17000)+`"}}`)
	wantError(t, r, http.StatusUnprocessableEntity, KindValidation, "metadata:")
	r = do(t, s, "PATCH", "/api/v1/keys/"+vk.ID, testKey, `{"metadata":["a"]}`)
	if r.status != http.StatusUnprocessableEntity || !strings.Contains(r.raw, "metadata") {
		t.Fatalf("metadata not an object: %d %s", r.status, r.raw)
	}
	if r := do(t, s, "GET", "/api/v1/keys", testKey, ""); strings.Count(r.raw, `"id"`) != 1 {
		t.Fatalf("a refused request stored a key: %s", r.raw)
	}
}

// TestSpentBudgetSaysDoNotRetry: a virtual key's spent budget is a 429 with
// x-should-retry: false on the native surface as on the OpenAI one (the clients then do
// not resend: retrying cannot help), while a per-minute rate's 429 leaves it out.
func TestSpentBudgetSaysDoNotRetry(t *testing.T) {
	hs, s := keysServer(t, nil, 3)
	vk := issue(t, s, `{"max_requests":1}`)
	native := `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`
	if resp, b := post(t, hs.URL+"/api/v1/completions", vk.Key, native); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d %s", resp.StatusCode, b)
	}
	for _, path := range []string{"/api/v1/completions", "/v1/chat/completions"} {
		body := native
		if path == "/v1/chat/completions" {
			body = `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
		}
		resp, b := post(t, hs.URL+path, vk.Key, body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s with a spent budget: %d x-should-retry %q %s", path, resp.StatusCode, resp.Header.Get("X-Should-Retry"), b)
		}
	}
	// The server's per-key rate (3 a minute): a rate, which clears.
	other := issue(t, s, `{}`)
	for range 4 {
		resp, b := post(t, hs.URL+"/api/v1/completions", other.Key, native)
		if resp.StatusCode == http.StatusTooManyRequests {
			if resp.Header.Get("X-Should-Retry") == "false" {
				t.Fatalf("a rate limit's 429 said do not retry: %s", b)
			}
			return
		}
	}
	t.Fatal("the per-key rate never refused")
}

// TestAccountTokensPerMinuteNamed: past a tag's or a team's tpm_limit the 429 names whose
// minute it is (the tag or the team), not only the counts.
func TestAccountTokensPerMinuteNamed(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	if r := do(t, s, "POST", "/tag/new", testKey, `{"name":"bulk","tpm_limit":15}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	if r := do(t, s, "POST", "/team/new", testKey, `{"team_id":"search","tpm_limit":15}`); r.status != http.StatusOK {
		t.Fatal(r.status, r.raw)
	}
	tagged := litellmGenerate(t, s, `{"tags":["bulk"]}`)
	member := litellmGenerate(t, s, `{"team_id":"search"}`)
	for _, c := range []struct{ key, want string }{{tagged.Key, "of tag bulk"}, {member.Key, "of team search"}} {
		for i := range 2 { // 0 then 10 of 15 used: an answer of the fake upstream is 10 tokens
			if resp, b := chatWith(t, hs, c.key, "openai/ok"); resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: call %d: %d %s", c.want, i+1, resp.StatusCode, b)
			}
		}
		if resp, b := chatWith(t, hs, c.key, "openai/ok"); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "20 of 15 tokens per minute "+c.want) {
			t.Errorf("past the minute's tokens %s: %d %s", c.want, resp.StatusCode, b)
		}
	}
}
