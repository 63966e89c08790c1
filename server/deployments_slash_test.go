package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestAzureDeploymentNameWithSlash: a deployment named provider/model sent with its slash
// unescaped (Python's AzureOpenAI for model openai/gpt-4o-mini calls
// /openai/deployments/openai/gpt-4o-mini/chat/completions, and LiteLLM accepts it) is
// served by the deployment route of the operation its path ends in, the whole rest being
// the deployment, where it fell to the /openai pass-through; LiteLLM's engine form alike.
// Another method or an operation the deployment routes do not have still goes to the
// pass-through, forwarded as it is.
func TestAzureDeploymentNameWithSlash(t *testing.T) {
	hs, _, up := passThroughServer(t)
	key := map[string]string{"api-key": testKey}
	for _, path := range []string{
		"/openai/deployments/openai/gpt-4o-mini/chat/completions?api-version=2024-10-21",
		"/openai/deployments/openai/gpt-4o-mini/chat/completions",
		"/engines/openai/gpt-4o-mini/chat/completions",
	} {
		resp, b := sendPassThrough(t, "POST", hs.URL+path, `{"model":"ignored","messages":[{"role":"user","content":"hi"}]}`, key)
		var c struct {
			Object string `json:"object"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(b), &c) != nil || c.Object != "chat.completion" {
			t.Fatalf("POST %s: %d %s, want the gateway's chat completion", path, resp.StatusCode, b)
		}
		last := up.last()
		if last.path != "/v1/chat/completions" || !strings.Contains(last.body, `"model":"gpt-4o-mini"`) || last.header.Get("Authorization") != "Bearer server-openai-key" {
			t.Errorf("POST %s: the upstream got %s %s (%s), want the gateway's call of gpt-4o-mini", path, last.method, last.path, last.body)
		}
	}

	// A deployment that cannot be called gets the refusal of its escaped form (the
	// deployment route's, in OpenAI's envelope), and nothing is forwarded.
	before := up.count()
	for _, name := range []string{"team/no-such", "nobody/has/this"} {
		body := `{"messages":[{"role":"user","content":"hi"}]}`
		escResp, esc := sendPassThrough(t, "POST", hs.URL+"/openai/deployments/"+strings.ReplaceAll(name, "/", "%2F")+"/chat/completions", body, key)
		resp, b := sendPassThrough(t, "POST", hs.URL+"/openai/deployments/"+name+"/chat/completions", body, key)
		if escResp.StatusCode < 400 || resp.StatusCode != escResp.StatusCode || b != esc || !strings.Contains(b, name) {
			t.Errorf("deployment %s: %d %s, want the escaped form's %d %s naming it", name, resp.StatusCode, b, escResp.StatusCode, esc)
		}
	}
	if up.count() != before {
		t.Errorf("a deployment that cannot be called was forwarded: %+v", up.last())
	}

	// Another method, or a suffix no deployment route serves: the pass-through, as before.
	for _, c := range []struct{ method, path string }{
		{"GET", "/openai/deployments/openai/gpt-4o-mini/chat/completions"},
		{"POST", "/openai/deployments/openai/gpt-4o-mini/responses"},
		{"POST", "/openai/deployments/openai/gpt-4o-mini/chat/completions/extra"},
	} {
		before := up.count()
		sendPassThrough(t, c.method, hs.URL+c.path, `{"model":"gpt-4o-mini"}`, key)
		last := up.last()
		if up.count() != before+1 || last.method != c.method || last.path != "/v1"+strings.TrimPrefix(c.path, "/openai") {
			t.Errorf("%s %s: the upstream got %s %s, want it forwarded as it is", c.method, c.path, last.method, last.path)
		}
	}
}
