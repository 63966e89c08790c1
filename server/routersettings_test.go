package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// modelCountingUpstream is the fake OpenAI upstream, counting the calls per model asked.
type modelCountingUpstream struct {
	mu    sync.Mutex
	calls map[string]int
	up    fakeOpenAIUpstream
}

func (u *modelCountingUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	u.mu.Lock()
	u.calls[req.Model]++
	u.mu.Unlock()
	switch op := strings.TrimPrefix(r.URL.Path, "/v1/"); {
	case op != "embeddings" && op != "moderations":
		r.Body = io.NopCloser(bytes.NewReader(body))
		u.up.ServeHTTP(w, r)
	case req.Model == "down":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
	case op == "embeddings":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,0.25]}],"model":"`+req.Model+`","usage":{"prompt_tokens":2,"total_tokens":2}}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"modr-1","model":"`+req.Model+`","results":[{"flagged":false,"categories":{"violence":false},"category_scores":{"violence":0.01}}]}`)
	}
}

// count returns the calls for model and forgets them.
func (u *modelCountingUpstream) count(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := u.calls[model]
	delete(u.calls, model)
	return n
}

// routerSettingsServer is a server whose gateway retries twice by default and answers
// from a counting fake upstream (models up/ok, up/down, up/slow, their embeddings and
// moderations; the model group good of up/ok, and flaky of up/down falling back to up/ok).
func routerSettingsServer(t *testing.T) (*httptest.Server, *modelCountingUpstream) {
	t.Helper()
	up := &modelCountingUpstream{calls: map[string]int{}}
	hu := httptest.NewServer(up)
	t.Cleanup(hu.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: hu.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st, DefaultMaxRetries: 2,
		ModelGroups: map[string]completions.ModelGroup{"good": {Models: []string{"up/ok"}}, "flaky": {Models: []string{"up/down"}, Fallbacks: []string{"up/ok"}}},
		Breaker:     completions.BreakerOptions{Failures: -1}, // counts of calls, not a breaker's skips
		Backoff:     completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, up
}

// TestKeyRouterSettings: a key's router_settings (LiteLLM's) apply to each of its requests:
// num_retries replaces the server's retries, fallbacks are tried after the model asked
// fails, timeout bounds the request; /key/info answers them and /key/update null removes
// them (the server's apply again).
func TestKeyRouterSettings(t *testing.T) {
	hs, up := routerSettingsServer(t)
	resp, out := post(t, hs.URL+"/key/generate", testKey, `{"router_settings":{"num_retries":0,"max_retries":5,"fallbacks":[{"up/down":["up/ok"]}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("generate: %d %s", resp.StatusCode, out)
	}
	key, token := decodeMap(t, out)["key"].(string), decodeMap(t, out)["token"].(string)
	chat := func(key, model string) (*http.Response, []byte) {
		return post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
	}

	resp, out = chat(key, "up/down")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "Hello from ok") {
		t.Fatalf("key with fallbacks: %d %s", resp.StatusCode, out)
	}
	if d, ok := up.count("down"), up.count("ok"); d != 1 || ok != 1 {
		t.Fatalf("num_retries 0 then the fallback: down called %d times, ok %d (want 1 and 1)", d, ok)
	}
	// A request's own max_retries still wins over the key's.
	resp, out = post(t, hs.URL+"/v1/chat/completions", key, `{"model":"up/down","max_retries":1,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || up.count("down") != 2 {
		t.Fatalf("request's max_retries: %d %s", resp.StatusCode, out)
	}
	up.count("ok")

	_, info := getJSON(t, hs.URL+"/key/info?key="+token, testKey)
	rs, _ := info["info"].(map[string]any)["router_settings"].(map[string]any)
	if rs["num_retries"] != float64(0) || rs["fallbacks"] == nil {
		t.Fatalf("/key/info router_settings: %v", info["info"])
	}

	// Removed: the server's two retries, no fallback.
	resp, out = post(t, hs.URL+"/key/update", testKey, `{"key":"`+token+`","router_settings":null}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("update: %d %s", resp.StatusCode, out)
	}
	if rs := decodeMap(t, out)["router_settings"]; rs == nil || len(rs.(map[string]any)) != 0 {
		t.Fatalf("router_settings after null: %v", rs)
	}
	resp, out = chat(key, "up/down")
	if resp.StatusCode == http.StatusOK || up.count("down") != 3 || up.count("ok") != 0 {
		t.Fatalf("without router settings: %d %s", resp.StatusCode, out)
	}

	// A timeout of the key's cuts a slow model; the same request of a key without one waits.
	resp, out = post(t, hs.URL+"/key/update", testKey, `{"key":"`+token+`","router_settings":{"timeout":"0.05","num_retries":0}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("update timeout: %d %s", resp.StatusCode, out)
	}
	if resp, out = chat(key, "up/slow"); resp.StatusCode == http.StatusOK {
		t.Fatalf("a 0.05 s timeout let a 300 ms answer through: %s", out)
	}
	resp, out = post(t, hs.URL+"/key/generate", testKey, `{}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.StatusCode, string(out))
	}
	if resp, out = chat(decodeMap(t, out)["key"].(string), "up/slow"); resp.StatusCode != http.StatusOK {
		t.Fatalf("key without a timeout: %d %s", resp.StatusCode, out)
	}
}

// TestTeamRouterSettings: a team's router_settings apply to its keys without their own;
// a key's own replace them whole (LiteLLM's key > team order, never merged); a
// /team/update applies at once and /team/info answers them.
func TestTeamRouterSettings(t *testing.T) {
	hs, up := routerSettingsServer(t)
	resp, out := post(t, hs.URL+"/team/new", testKey, `{"team_id":"t1","router_settings":{"num_retries":0,"fallbacks":[{"*":["up/ok"]}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/new: %d %s", resp.StatusCode, out)
	}
	gen := func(body string) string {
		resp, out := post(t, hs.URL+"/key/generate", testKey, body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("generate %s: %d %s", body, resp.StatusCode, out)
		}
		return decodeMap(t, out)["key"].(string)
	}
	teamKey := gen(`{"team_id":"t1"}`)
	ownKey := gen(`{"team_id":"t1","router_settings":{"num_retries":1}}`)
	chat := func(key string) int {
		resp, _ := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"up/down","messages":[{"role":"user","content":"hi"}]}`)
		return resp.StatusCode
	}
	if code := chat(teamKey); code != http.StatusOK || up.count("down") != 1 || up.count("ok") != 1 {
		t.Fatalf("team's settings: %d", code)
	}
	// The key's own settings are whole: its num_retries, and none of the team's fallbacks.
	if code := chat(ownKey); code == http.StatusOK || up.count("down") != 2 || up.count("ok") != 0 {
		t.Fatalf("key's own settings: %d", code)
	}
	// A team fallback its key may not call is passed over, not a refusal of the request.
	narrowKey := gen(`{"team_id":"t1","models":["up/down"]}`)
	if code := chat(narrowKey); code == http.StatusOK || code == http.StatusUnauthorized || up.count("down") != 1 || up.count("ok") != 0 {
		t.Fatalf("a fallback outside the key's models: %d", code)
	}
	resp, out = post(t, hs.URL+"/team/update", testKey, `{"team_id":"t1","router_settings":{"num_retries":3}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/update: %d %s", resp.StatusCode, out)
	}
	if code := chat(teamKey); code == http.StatusOK || up.count("down") != 4 || up.count("ok") != 0 {
		t.Fatalf("after /team/update: %d", code)
	}
	_, info := getJSON(t, hs.URL+"/team/info?team_id=t1", testKey)
	rs, _ := info["team_info"].(map[string]any)["router_settings"].(map[string]any)
	if rs["num_retries"] != float64(3) || rs["fallbacks"] != nil {
		t.Fatalf("/team/info router_settings: %v", info["team_info"])
	}
	// The native team routes take and answer them too.
	resp, out = sendJSON(t, "PATCH", hs.URL+"/api/v1/teams/t1", testKey, `{"router_settings":{}}`)
	if resp.StatusCode != http.StatusOK || decodeMap(t, out)["router_settings"] != nil {
		t.Fatalf("PATCH router_settings {}: %d %s", resp.StatusCode, out)
	}
	if code := chat(teamKey); code == http.StatusOK || up.count("down") != 3 {
		t.Fatalf("after {}: the server's retries: %d", code)
	}
}

// TestRouterSettingsRefusals: bad router settings are refused naming the setting, settings
// the server holds for every key are refused when they ask for something (accepted at
// their empty defaults), and nothing is stored.
func TestRouterSettingsRefusals(t *testing.T) {
	hs, _ := routerSettingsServer(t)
	for body, param := range map[string]string{
		`{"router_settings":{"max_retries":-1}}`:                                "router_settings.max_retries",
		`{"router_settings":{"num_retries":11}}`:                                "router_settings.num_retries",
		`{"router_settings":{"num_retries":1.5}}`:                               "router_settings.num_retries",
		`{"router_settings":{"timeout":0}}`:                                     "router_settings.timeout",
		`{"router_settings":{"timeout":3601}}`:                                  "router_settings.timeout",
		`{"router_settings":{"timeout":"soon"}}`:                                "router_settings.timeout",
		`{"router_settings":{"routing_strategy":"least-busy"}}`:                 "router_settings.routing_strategy",
		`{"router_settings":{"frobnicate":true}}`:                               "router_settings.frobnicate",
		`{"router_settings":{"fallbacks":{"up/ok":["up/down"]}}}`:               "router_settings.fallbacks",
		`{"router_settings":{"fallbacks":[{"up/ok":["nosuch/x"]}]}}`:            `router_settings.fallbacks["up/ok"]`,
		`{"router_settings":{"fallbacks":[{"up/ok":["up/ok"]}]}}`:               `router_settings.fallbacks["up/ok"]`,
		`{"router_settings":{"fallbacks":[{"up/ok":[""]},{"up/x":["up/ok"]}]}}`: `router_settings.fallbacks["up/ok"]`,
		`{"router_settings":["num_retries"]}`:                                   "router_settings",
		`{"router_settings":{"content_policy_fallbacks":[{"a":["b"]}]}}`:        "router_settings.content_policy_fallbacks",
	} {
		for _, route := range []string{"/key/generate", "/team/new"} {
			resp, out := post(t, hs.URL+route, testKey, body)
			e, _ := decodeMap(t, out)["error"].(map[string]any)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 || e["param"] != param || !strings.Contains(e["message"].(string), param) {
				t.Errorf("%s %s: %d %s (want a 4xx naming %s)", route, body, resp.StatusCode, out, param)
			}
		}
	}
	_, list := getJSON(t, hs.URL+"/key/list", testKey)
	if keys, _ := list["keys"].([]any); len(keys) != 0 {
		t.Fatalf("refused keys were stored: %v", keys)
	}
	// LiteLLM's clients send the other settings at their defaults: they ask for nothing.
	resp, out := post(t, hs.URL+"/key/generate", testKey, `{"router_settings":{"routing_strategy":"","model_group_alias":{},"num_retries":"2"}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("empty settings: %d %s", resp.StatusCode, out)
	}
	if rs := decodeMap(t, out)["router_settings"].(map[string]any); rs["num_retries"] != float64(2) || len(rs) != 1 {
		t.Fatalf("stored settings: %v", rs)
	}
}
