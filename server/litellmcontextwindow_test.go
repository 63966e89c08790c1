package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLiteLLMConfigContextWindowFallbacksWithoutEntry: under --litellm-config with
// context_window_fallbacks set, a prompt too long for a group without an entry (small),
// or with an empty one (empty), ends the request with that 400 — the group's plain
// fallbacks (big) are not tried — as LiteLLM's router re-raises the
// ContextWindowExceededError; another failure (down) still goes to the plain fallbacks,
// a group with an entry (mid) to its entry, and without context_window_fallbacks in the
// configuration a prompt too long goes to the plain fallbacks as before.
func TestLiteLLMConfigContextWindowFallbacksWithoutEntry(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	const models = `
model_list:
  - model_name: small
    litellm_params: {model: openai/toolong, api_base: URL/v1, api_key: sk-own}
  - model_name: empty
    litellm_params: {model: openai/toolong, api_base: URL/v1, api_key: sk-own}
  - model_name: mid
    litellm_params: {model: openai/toolong, api_base: URL/v1, api_key: sk-own}
  - model_name: flaky
    litellm_params: {model: openai/down, api_base: URL/v1, api_key: sk-own}
  - model_name: big
    litellm_params: {model: openai/ok, api_base: URL/v1, api_key: sk-own}
  - model_name: bigger
    litellm_params: {model: openai/ok2, api_base: URL/v1, api_key: sk-own}
router_settings:
  fallbacks: [{"small": ["big"]}, {"empty": ["big"]}, {"mid": ["big"]}, {"flaky": ["big"]}]
`
	chat := func(url, model string) (int, string) {
		resp, b := post(t, url+"/v1/chat/completions", testKey, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		return resp.StatusCode, string(b)
	}
	hs, _, _ := litellmConfigServer(t, models+`  context_window_fallbacks: [{"mid": ["bigger"]}, {"empty": []}]
`, ups.URL, nil, nil)
	for _, m := range []string{"small", "empty"} {
		if code, b := chat(hs.URL, m); code != http.StatusBadRequest || !strings.Contains(b, "context_length_exceeded") || strings.Contains(b, "from ok") {
			t.Errorf("%s: %d %s; want the 400 context_length_exceeded, big not tried", m, code, b)
		}
	}
	for m, want := range map[string]string{"mid": "from ok2", "flaky": "from ok"} {
		if code, b := chat(hs.URL, m); code != http.StatusOK || !strings.Contains(b, want) {
			t.Errorf("%s: %d %s; want 200 %s", m, code, b, want)
		}
	}
	plain, _, _ := litellmConfigServer(t, models, ups.URL, nil, nil)
	if code, b := chat(plain.URL, "small"); code != http.StatusOK || !strings.Contains(b, "from ok") {
		t.Errorf("without context_window_fallbacks, small: %d %s; want 200 from big", code, b)
	}
}

// TestLiteLLMConfigContextWindowFallbacksWildcard: under --litellm-config with
// context_window_fallbacks set (for another group only), a prompt too long for a model
// served through a wildcard deployment ("openai/*": no model group to mark) ends the
// request with that 400 — the key's plain fallbacks for it (big) are not tried — as
// LiteLLM's router re-raises the ContextWindowExceededError; another failure (down) still
// goes to the plain fallbacks, and without context_window_fallbacks in the configuration
// a prompt too long goes to them as before.
func TestLiteLLMConfigContextWindowFallbacksWildcard(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	const models = `
model_list:
  - model_name: "openai/*"
    litellm_params: {model: "openai/*", api_base: URL/v1, api_key: sk-own}
  - model_name: big
    litellm_params: {model: openai/ok, api_base: URL/v1, api_key: sk-own}
  - model_name: mid
    litellm_params: {model: openai/toolong, api_base: URL/v1, api_key: sk-own}
router_settings:
  num_retries: 0
`
	const keyBody = `{"router_settings":{"fallbacks":[{"openai/toolong":["big"]},{"openai/down":["big"]}]}}`
	chat := func(url, key, model string) (int, string) {
		resp, b := post(t, url+"/v1/chat/completions", key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
		return resp.StatusCode, string(b)
	}
	hs, _, cfg := litellmConfigServer(t, models+`  context_window_fallbacks: [{"mid": ["big"]}]
`, ups.URL, nil, nil)
	if !cfg.ContextWindowFallbacksSet {
		t.Fatal("Config.ContextWindowFallbacksSet false with context_window_fallbacks set")
	}
	key := genKey(t, hs.URL, keyBody)
	if code, b := chat(hs.URL, key, "openai/toolong"); code != http.StatusBadRequest || !strings.Contains(b, "context_length_exceeded") || strings.Contains(b, "from ok") {
		t.Errorf("openai/toolong: %d %s; want the 400 context_length_exceeded, big not tried", code, b)
	}
	if code, b := chat(hs.URL, key, "openai/down"); code != http.StatusOK || !strings.Contains(b, "from ok") {
		t.Errorf("openai/down: %d %s; want 200 from big", code, b)
	}
	plain, _, _ := litellmConfigServer(t, models, ups.URL, nil, nil)
	if code, b := chat(plain.URL, genKey(t, plain.URL, keyBody), "openai/toolong"); code != http.StatusOK || !strings.Contains(b, "from ok") {
		t.Errorf("without context_window_fallbacks, openai/toolong: %d %s; want 200 from big", code, b)
	}
}
