package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLiteLLMKeyNameGrantsItselfOnly: under a LiteLLM config a key's name that is no model
// group grants that name only, as LiteLLM's can_key_call_model checks the name asked: a
// key of bare gpt-4o (served by the "*" wildcard) is refused openai/gpt-4o, a key of the
// model_name team/x is refused the litellm_params.model openai/gpt-4o of its deployment
// and a key of openai/gpt-4o the model_name team/x of the same deployment (each may be
// routed, limited or priced otherwise), while each calls its own name and a pattern of
// the key's (openai/*) what it matches.
func TestLiteLLMKeyNameGrantsItselfOnly(t *testing.T) {
	up := &fakeOpenAIUpstream{}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	hs, s, _ := litellmConfigServer(t, `
model_list:
  - model_name: team/x
    litellm_params: {model: openai/gpt-4o, api_base: URL/v1, api_key: sk-own}
  - model_name: "*"
    litellm_params: {model: "openai/*", api_base: URL/v1, api_key: sk-own}
`, ups.URL, nil, nil)
	for _, c := range []struct {
		models string
		want   map[string]int
	}{
		{`["gpt-4o"]`, map[string]int{"gpt-4o": 200, "openai/gpt-4o": 401}},
		{`["team/x"]`, map[string]int{"team/x": 200, "openai/gpt-4o": 401, "gpt-4o": 401}},
		{`["openai/gpt-4o"]`, map[string]int{"openai/gpt-4o": 200, "team/x": 401, "gpt-4o": 401}},
		{`["openai/*"]`, map[string]int{"openai/gpt-4o": 200, "openai/gpt-4o-mini": 200, "team/x": 401}},
	} {
		k := issue(t, s, `{"models":`+c.models+`}`)
		for model, want := range c.want {
			resp, b := post(t, hs.URL+"/v1/chat/completions", k.Key, `{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`)
			if resp.StatusCode != want {
				t.Errorf("a key of %s asking %s: %d %s, want %d", c.models, model, resp.StatusCode, b, want)
			}
			if want == http.StatusUnauthorized {
				if tc := post2Status(t, hs.URL+"/utils/token_counter", k.Key, `{"model":"`+model+`","prompt":"hi"}`); tc != want {
					t.Errorf("token counter: a key of %s counting %s: %d, want %d", c.models, model, tc, want)
				}
			}
		}
	}
}

// post2Status is the status of POST url with key and body.
func post2Status(t *testing.T, url, key, body string) int {
	t.Helper()
	resp, _ := post(t, url, key, body)
	return resp.StatusCode
}
