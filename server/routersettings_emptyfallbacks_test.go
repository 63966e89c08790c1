package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// TestKeyEmptyFallbacksAskForNone: a key's or team's router_settings fallbacks: [] or
// context_window_fallbacks: [] is a setting, none, not an empty value: as LiteLLM's proxy
// fills the key's [] into the request and its router takes a list that is not None in
// place of its own, the server's fallbacks of the group asked are not tried (nor, for a
// key, its team's), and a prompt too long ends the request with its 400 rather than going
// to the server's context window fallbacks. /key/info and /team/info show []. null (and
// {}) still ask for nothing: the server's apply.
func TestKeyEmptyFallbacksAskForNone(t *testing.T) {
	up := &modelCountingUpstream{calls: map[string]int{}}
	hu := httptest.NewServer(up)
	t.Cleanup(hu.Close)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "up", BaseURL: hu.URL + "/v1", APIKey: "sk-up"}))
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		ModelGroups: map[string]completions.ModelGroup{
			"flaky": {Models: []string{"up/down"}, Fallbacks: []string{"up/ok"}},
			"long":  {Models: []string{"up/toolong"}, ContextWindowFallbacks: []string{"up/ok"}, Fallbacks: []string{"up/ok"}},
		},
		Breaker: completions.BreakerOptions{Failures: -1},
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	chat := func(key, model string) int {
		resp, _ := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		return resp.StatusCode
	}
	up.count("ok") // counts from here (count reads and resets)

	for _, c := range []struct {
		setting, model string
		wantCode       int
	}{
		{`"fallbacks":[]`, "flaky", http.StatusServiceUnavailable},
		{`"context_window_fallbacks":[]`, "long", http.StatusBadRequest},
	} {
		key := genKey(t, hs.URL, `{"router_settings":{"num_retries":0,`+c.setting+`}}`)
		if code := chat(key, c.model); code == http.StatusOK || code != c.wantCode && c.wantCode == http.StatusBadRequest {
			t.Fatalf("%s: %d (want the model's failure, no fallback)", c.setting, code)
		}
		if d, l, o := up.count("down"), up.count("toolong"), up.count("ok"); o != 0 || d+l != 1 {
			t.Fatalf("%s: ok called %d times, the model %d (want the model once, no fallback)", c.setting, o, d+l)
		}
		_, info := getJSON(t, hs.URL+"/key/info?key="+key, testKey)
		rs, _ := info["info"].(map[string]any)["router_settings"].(map[string]any)
		name := c.setting[1 : len(c.setting)-4]
		if list, isList := rs[name].([]any); !isList || len(list) != 0 {
			t.Fatalf("%s: /key/info router_settings %v (want %s: [])", c.setting, rs, name)
		}
		// null is no setting: the server's fallbacks answer.
		nullKey := genKey(t, hs.URL, `{"router_settings":{"`+name+`":null}}`)
		if code := chat(nullKey, c.model); code != http.StatusOK || up.count("ok") != 1 {
			t.Fatalf("%s null: %d (want the server's fallback's answer)", name, code)
		}
		up.count("down")
		up.count("toolong")
	}

	// A team's [] is its keys' (without their own), and a key's [] replaces its team's.
	resp, out := post(t, hs.URL+"/team/new", testKey, `{"team_id":"none","router_settings":{"num_retries":0,"fallbacks":[]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/new: %d %s", resp.StatusCode, out)
	}
	resp, out = post(t, hs.URL+"/team/new", testKey, `{"team_id":"some","router_settings":{"fallbacks":[{"*":["up/ok"]}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/new: %d %s", resp.StatusCode, out)
	}
	if code := chat(genKey(t, hs.URL, `{"team_id":"none"}`), "flaky"); code == http.StatusOK || up.count("ok") != 0 || up.count("down") != 1 {
		t.Fatalf("a team's fallbacks []: %d", code)
	}
	if code := chat(genKey(t, hs.URL, `{"team_id":"some","router_settings":{"fallbacks":[]}}`), "up/down"); code == http.StatusOK || up.count("ok") != 0 {
		t.Fatalf("a key's fallbacks [] in a team with some: %d", code)
	}
	if code := chat(genKey(t, hs.URL, `{"team_id":"some"}`), "up/down"); code != http.StatusOK || up.count("ok") != 1 {
		t.Fatalf("the team's own fallbacks: %d", code)
	}
	_, info := getJSON(t, hs.URL+"/team/info?team_id=none", testKey)
	rs, _ := info["team_info"].(map[string]any)["router_settings"].(map[string]any)
	if list, isList := rs["fallbacks"].([]any); !isList || len(list) != 0 {
		t.Fatalf("/team/info router_settings %v (want fallbacks: [])", rs)
	}
}
