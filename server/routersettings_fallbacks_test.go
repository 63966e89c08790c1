package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// genKey makes a key of body on hs and returns it, failing t when refused.
func genKey(t *testing.T, hs string, body string) string {
	t.Helper()
	resp, out := post(t, hs+"/key/generate", testKey, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("generate %s: %d %s", body, resp.StatusCode, out)
	}
	return decodeMap(t, out)["key"].(string)
}

// TestKeyContextWindowFallbacks: a key's or its team's router_settings
// context_window_fallbacks (LiteLLM's) are tried when the model asked answers that the
// prompt is too long for it — looked up by the name asked, else without its provider, else
// "*"; in place of the plain fallbacks; only for that failure — and a fallback outside the
// key's models is passed over; /key/info answers them.
func TestKeyContextWindowFallbacks(t *testing.T) {
	hs, up := routerSettingsServer(t)
	resp, out := post(t, hs.URL+"/team/new", testKey, `{"team_id":"t1","router_settings":{"context_window_fallbacks":[{"*":["up/ok"]}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/new: %d %s", resp.StatusCode, out)
	}
	chat := func(key, model string) (*http.Response, []byte) {
		return post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
	}
	teamKey := genKey(t, hs.URL, `{"team_id":"t1"}`)
	if resp, out := chat(teamKey, "up/toolong"); resp.StatusCode != http.StatusOK || !strings.Contains(string(out), "Hello from ok") || up.count("toolong") != 1 || up.count("ok") != 1 {
		t.Fatalf("the team's context window fallbacks: %d %s", resp.StatusCode, out)
	}
	// Another failure is not theirs: the server's retries, no fallback.
	if resp, out := chat(teamKey, "up/down"); resp.StatusCode == http.StatusOK || up.count("down") != 3 || up.count("ok") != 0 {
		t.Fatalf("a 503 with only context window fallbacks: %d %s", resp.StatusCode, out)
	}
	// LiteLLM's mock_testing_context_fallbacks takes them too, without calling the model.
	resp, out = post(t, hs.URL+"/v1/chat/completions", teamKey, `{"model":"up/down","mock_testing_context_fallbacks":true,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || up.count("down") != 0 || up.count("ok") != 1 {
		t.Fatalf("mock_testing_context_fallbacks: %d %s", resp.StatusCode, out)
	}
	// A key's own, by the name without its provider, a model group; its plain fallbacks
	// are left out once the prompt was too long.
	ownKey := genKey(t, hs.URL, `{"team_id":"t1","router_settings":{"num_retries":0,"fallbacks":[{"up/toolong":["up/down"]}],"context_window_fallbacks":[{"toolong":["good"]}]}}`)
	if resp, out := chat(ownKey, "up/toolong"); resp.StatusCode != http.StatusOK || up.count("toolong") != 1 || up.count("ok") != 1 || up.count("down") != 0 {
		t.Fatalf("the key's own: %d %s", resp.StatusCode, out)
	}
	// A fallback the key may not call is passed over: the upstream's answer, not a 401.
	narrowKey := genKey(t, hs.URL, `{"team_id":"t1","models":["up/toolong"]}`)
	if resp, out := chat(narrowKey, "up/toolong"); resp.StatusCode != http.StatusBadRequest || up.count("toolong") != 1 || up.count("ok") != 0 {
		t.Fatalf("a fallback outside the key's models: %d %s", resp.StatusCode, out)
	}
	_, info := getJSON(t, hs.URL+"/key/info?key="+ownKey, testKey)
	rs, _ := info["info"].(map[string]any)["router_settings"].(map[string]any)
	if cw, _ := rs["context_window_fallbacks"].([]any); len(cw) != 1 {
		t.Fatalf("/key/info router_settings: %v", info["info"])
	}
	// Bounds and names are checked as the plain fallbacks'.
	for body, param := range map[string]string{
		`{"router_settings":{"context_window_fallbacks":[{"up/ok":["nosuch/x"]}]}}`:         `router_settings.context_window_fallbacks["up/ok"]`,
		`{"router_settings":{"context_window_fallbacks":[{"up/ok":[""]},{"b":["up/ok"]}]}}`: `router_settings.context_window_fallbacks["up/ok"]`,
		`{"router_settings":{"context_window_fallbacks":{"up/ok":["up/x"]}}}`:               "router_settings.context_window_fallbacks",
		`{"router_settings":{"context_window_fallbacks":[{"a":["up/*"]}]}}`:                 `router_settings.context_window_fallbacks["a"]`,
	} {
		resp, out := post(t, hs.URL+"/key/generate", testKey, body)
		e, _ := decodeMap(t, out)["error"].(map[string]any)
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || e["param"] != param {
			t.Errorf("%s: %d %s (want a 4xx naming %s)", body, resp.StatusCode, out, param)
		}
	}
}

// TestKeyFallbacksEmptyEntry: an entry with no fallbacks ({"m": []}) in a key's
// router_settings fallbacks or context_window_fallbacks is a setting, not an empty value:
// as LiteLLM's router finds the model's entry before "*" and has nothing to try, the model
// asked gets no fallbacks — not the key's "*", nor the group's (the key's replace them) —
// and a prompt too long for it ends the request with its 400, as it does for a model the
// key's context_window_fallbacks have no entry for; settings with no model at all ([{}],
// null, {}) still ask for nothing ([] is a setting: TestKeyEmptyFallbacksAskForNone).
func TestKeyFallbacksEmptyEntry(t *testing.T) {
	hs, up := routerSettingsServer(t)
	chat := func(key, model string) (*http.Response, []byte) {
		return post(t, hs.URL+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
	}
	key := genKey(t, hs.URL, `{"router_settings":{"num_retries":0,"fallbacks":[{"up/down":[]},{"*":["up/ok"]}]}}`)
	if resp, out := chat(key, "up/down"); resp.StatusCode == http.StatusOK || up.count("down") != 1 || up.count("ok") != 0 {
		t.Fatalf("an empty entry over \"*\": %d %s (ok called %d times)", resp.StatusCode, out, up.count("ok"))
	}
	_, info := getJSON(t, hs.URL+"/key/info?key="+key, testKey)
	rs, _ := info["info"].(map[string]any)["router_settings"].(map[string]any)
	if fb, _ := rs["fallbacks"].([]any); len(fb) != 2 {
		t.Fatalf("/key/info router_settings: %v", info["info"])
	}
	// Alone, it is the key's settings: the group's fallbacks give way.
	key = genKey(t, hs.URL, `{"router_settings":{"num_retries":0,"fallbacks":[{"flaky":[]}]}}`)
	if resp, out := chat(key, "flaky"); resp.StatusCode == http.StatusOK || up.count("down") != 1 || up.count("ok") != 0 {
		t.Fatalf("an empty entry over the group's: %d %s", resp.StatusCode, out)
	}
	// Context window fallbacks: an empty entry, or none for the model asked, leave the
	// prompt too long's 400 to stand; the plain fallbacks are not tried.
	for _, cw := range []string{`[{"up/toolong":[]},{"*":["up/ok"]}]`, `[{"up/other":["up/ok"]}]`} {
		key = genKey(t, hs.URL, `{"router_settings":{"fallbacks":[{"*":["good"]}],"context_window_fallbacks":`+cw+`}}`)
		if resp, out := chat(key, "up/toolong"); resp.StatusCode != http.StatusBadRequest || up.count("toolong") != 1 || up.count("ok") != 0 {
			t.Fatalf("context_window_fallbacks %s: %d %s (ok called %d times)", cw, resp.StatusCode, out, up.count("ok"))
		}
	}
	// No model at all: no settings.
	for _, fb := range []string{`[{}]`, `null`, `{}`} {
		resp, out := post(t, hs.URL+"/key/generate", testKey, `{"router_settings":{"fallbacks":`+fb+`,"context_window_fallbacks":`+fb+`}}`)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("fallbacks %s: %d %s", fb, resp.StatusCode, out)
		}
		if rs, _ := decodeMap(t, out)["router_settings"].(map[string]any); len(rs) != 0 {
			t.Fatalf("fallbacks %s stored as %v", fb, rs)
		}
	}
}

// TestRequestFallbacksReplaceKeys: a request's own fallbacks (LiteLLM's fallbacks, the
// extension's fallback_models) replace its key's router_settings fallbacks whole, as
// LiteLLM's proxy fills a key's settings only into what the request leaves unset; an
// empty list asks for none.
func TestRequestFallbacksReplaceKeys(t *testing.T) {
	hs, up := routerSettingsServer(t)
	key := genKey(t, hs.URL, `{"router_settings":{"num_retries":0,"fallbacks":[{"*":["up/ok"]}]}}`)
	chat := func(extra string) (*http.Response, []byte) {
		return post(t, hs.URL+"/v1/chat/completions", key, `{"model":"up/down",`+extra+`"messages":[{"role":"user","content":"hi"}]}`)
	}
	if resp, out := chat(""); resp.StatusCode != http.StatusOK || up.count("down") != 1 || up.count("ok") != 1 {
		t.Fatalf("the key's fallbacks: %d %s", resp.StatusCode, out)
	}
	for _, extra := range []string{`"fallbacks":["up/nosuch"],`, `"fallback_models":["up/nosuch"],`, `"fallbacks":[],`} {
		resp, out := chat(extra)
		if resp.StatusCode == http.StatusOK || up.count("down") != 1 || up.count("ok") != 0 {
			t.Fatalf("%s: %d %s (want the request's fallbacks alone)", extra, resp.StatusCode, out)
		}
		if want := strings.Contains(extra, "nosuch"); want != (up.count("nosuch") == 1) {
			t.Fatalf("%s: the request's fallback called %v, want %v", extra, !want, want)
		}
	}
}

// TestKeyFallbacksForOtherOperations: a key's or team's router_settings fallbacks, else
// the model group's fallbacks, apply to embeddings and moderation as to chat (LiteLLM's
// router falls back for every operation): the model asked fails after its retries, the
// fallback answers; a key's fallbacks replace the group's; one the key may not call is
// passed over.
func TestKeyFallbacksForOtherOperations(t *testing.T) {
	hs, up := routerSettingsServer(t)
	resp, out := post(t, hs.URL+"/team/new", testKey, `{"team_id":"t1","router_settings":{"num_retries":0,"fallbacks":[{"*":["up/ok"]}]}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("team/new: %d %s", resp.StatusCode, out)
	}
	teamKey := genKey(t, hs.URL, `{"team_id":"t1"}`)
	plainKey := genKey(t, hs.URL, `{}`)
	otherKey := genKey(t, hs.URL, `{"router_settings":{"fallbacks":[{"up/other":["up/ok"]}]}}`)
	narrowKey := genKey(t, hs.URL, `{"team_id":"t1","models":["up/down"]}`)
	for _, op := range []string{"embeddings", "moderations"} {
		call := func(key, model string) (*http.Response, []byte) {
			return post(t, hs.URL+"/v1/"+op, key, `{"model":"`+model+`","input":"hi"}`)
		}
		if resp, out := call(teamKey, "up/down"); resp.StatusCode != http.StatusOK || decodeMap(t, out)["model"] != "up/ok" || up.count("down") != 1 || up.count("ok") != 1 {
			t.Fatalf("%s: the team's fallbacks: %d %s", op, resp.StatusCode, out)
		}
		if resp, out := call(plainKey, "up/down"); resp.StatusCode == http.StatusOK || up.count("down") != 3 || up.count("ok") != 0 {
			t.Fatalf("%s: without fallbacks: %d %s", op, resp.StatusCode, out)
		}
		if resp, out := call(plainKey, "flaky"); resp.StatusCode != http.StatusOK || up.count("down") != 3 || up.count("ok") != 1 {
			t.Fatalf("%s: the group's fallbacks: %d %s", op, resp.StatusCode, out)
		}
		if resp, out := call(otherKey, "flaky"); resp.StatusCode == http.StatusOK || up.count("down") != 3 || up.count("ok") != 0 {
			t.Fatalf("%s: a key's fallbacks replace the group's: %d %s", op, resp.StatusCode, out)
		}
		if resp, out := call(narrowKey, "up/down"); resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized || up.count("down") != 1 || up.count("ok") != 0 {
			t.Fatalf("%s: a fallback outside the key's models: %d %s", op, resp.StatusCode, out)
		}
	}
}

// TestRequestContextWindowFallbacksOnRoutes: a request body's own context_window_fallbacks
// (LiteLLM's, read over its key's) are read on /v1/chat/completions, /v1/completions and
// /v1/responses, as its plain fallbacks are: the entry for the model asked is tried when it answers that the prompt is
// too long, in place of the key's; [] leaves the upstream's 400 to stand; a bad shape is a
// 400 naming the field.
func TestRequestContextWindowFallbacksOnRoutes(t *testing.T) {
	hs, up := routerSettingsServer(t)
	key := genKey(t, hs.URL, `{"router_settings":{"context_window_fallbacks":[{"*":["flaky"]}]}}`)
	for _, route := range []struct{ path, body string }{
		{"/v1/chat/completions", `"messages":[{"role":"user","content":"hi"}]`},
		{"/v1/completions", `"prompt":"hi"`},
		{"/v1/responses", `"input":"hi"`},
	} {
		send := func(cw string) (*http.Response, []byte) {
			return post(t, hs.URL+route.path, key, `{"model":"up/toolong","context_window_fallbacks":`+cw+`,`+route.body+`}`)
		}
		if resp, out := send(`[{"toolong":["good"]}]`); resp.StatusCode != http.StatusOK || up.count("toolong") != 1 || up.count("ok") != 1 || up.count("down") != 0 {
			t.Fatalf("%s: the request's own: %d %s", route.path, resp.StatusCode, out)
		}
		if resp, out := send(`[]`); resp.StatusCode != http.StatusBadRequest || up.count("toolong") != 1 || up.count("ok")+up.count("down") != 0 {
			t.Fatalf("%s: []: %d %s", route.path, resp.StatusCode, out)
		}
		// LiteLLM's plain request fallbacks are read on each route too.
		resp, out := post(t, hs.URL+route.path, key, `{"model":"up/down","fallbacks":["good"],`+route.body+`}`)
		if resp.StatusCode != http.StatusOK || up.count("down") == 0 || up.count("ok") != 1 {
			t.Fatalf("%s: fallbacks: %d %s", route.path, resp.StatusCode, out)
		}
		for cw, param := range map[string]string{
			`{"toolong":["good"]}`:                          "context_window_fallbacks",
			`[{"toolong":"good"}]`:                          `context_window_fallbacks[0]["toolong"]`,
			`[{"toolong":["nosuch/x"]}]`:                    `context_window_fallbacks[0]["toolong"]`,
			`[{"other":["good"]},{"toolong":["nosuch/x"]}]`: `context_window_fallbacks[1]["toolong"]`,
		} {
			resp, out := send(cw)
			e, _ := decodeMap(t, out)["error"].(map[string]any)
			if resp.StatusCode != http.StatusBadRequest || e["param"] != param || up.count("toolong") != 0 {
				t.Errorf("%s %s: %d %s (want a 400 naming %s)", route.path, cw, resp.StatusCode, out, param)
			}
		}
	}
}

// TestKeyRouterSettingsOverTheServersOneByOne: a key's router_settings replace the
// server's setting by setting, as LiteLLM's proxy fills a key's settings only into the
// router settings a request leaves unset, its router keeping the server's for the rest
// (route_llm_request.py, router_settings_override): under --litellm-config with
// context_window_fallbacks, a key whose router_settings name fallbacks and num_retries but
// no context_window_fallbacks still gets the server's for a prompt too long (its plain
// fallbacks are not tried), while a request's own fallbacks go in their place.
func TestKeyRouterSettingsOverTheServersOneByOne(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, _, _ := litellmConfigServer(t, `
model_list:
  - model_name: small
    litellm_params: {model: openai/toolong, api_base: URL/v1, api_key: sk-own}
  - model_name: big
    litellm_params: {model: openai/ok, api_base: URL/v1, api_key: sk-own}
  - model_name: bigger
    litellm_params: {model: openai/ok2, api_base: URL/v1, api_key: sk-own}
router_settings:
  num_retries: 0
  context_window_fallbacks: [{"small": ["bigger"]}]
`, ups.URL, nil, nil)
	key := genKey(t, hs.URL, `{"router_settings":{"num_retries":0,"fallbacks":[{"small":["big"]}]}}`)
	calls := func() int { up.mu.Lock(); defer up.mu.Unlock(); n := len(up.messages); up.messages = nil; return n }
	resp, b := post(t, hs.URL+"/v1/chat/completions", key, `{"model":"small","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "Hello from ok2") || calls() != 2 {
		t.Fatalf("a key with fallbacks only: %d %s; want the server's context window fallback (ok2) after toolong, big not tried", resp.StatusCode, b)
	}
	resp, b = post(t, hs.URL+"/v1/chat/completions", key, `{"model":"small","fallbacks":["big"],"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `Hello from ok"`) || calls() != 2 {
		t.Fatalf("the request's own fallbacks: %d %s; want big (ok) in place of the context window fallback", resp.StatusCode, b)
	}
}
