package server

import (
	"net/http"
	"testing"
)

// TestReview27aPassThroughRestrictedKeyOnlyModelOperations: a key held to models may not
// reach the operator's account through a request that names an allowed model but is not a
// call of it (files listed with a GET carrying a body, a fine-tuning job, a message batch,
// Gemini's batch or a path with models/ further down): each is a 403 before any upstream
// call.
func TestReview27aPassThroughRestrictedKeyOnlyModelOperations(t *testing.T) {
	hs, s, up := passThroughServer(t)
	vk := issue(t, s, `{"name":"narrow","models":["anthropic/claude-haiku-4-5-20251001","gemini/gemini-2.0-flash","openai/gpt-4o-mini"]}`)
	cases := []struct {
		name, method, path, body, header string
	}{
		{"openai files listed with a body", "GET", "/openai/v1/files", `{"model":"gpt-4o-mini"}`, "Authorization"},
		{"openai file deleted with a body", "DELETE", "/openai/v1/files/file-abc", `{"model":"gpt-4o-mini"}`, "Authorization"},
		{"openai fine-tuning job", "POST", "/openai/v1/fine_tuning/jobs", `{"model":"gpt-4o-mini","training_file":"file-abc"}`, "Authorization"},
		{"openai batch", "POST", "/openai/v1/batches", `{"model":"gpt-4o-mini","input_file_id":"file-abc","endpoint":"/v1/chat/completions","completion_window":"24h"}`, "Authorization"},
		{"anthropic message batch", "POST", "/anthropic/v1/messages/batches", `{"model":"claude-haiku-4-5-20251001","requests":[]}`, "x-api-key"},
		{"anthropic files", "GET", "/anthropic/v1/files", `{"model":"claude-haiku-4-5-20251001"}`, "x-api-key"},
		{"gemini batch", "POST", "/gemini/v1beta/models/gemini-2.0-flash:batchGenerateContent", `{}`, "x-goog-api-key"},
		{"gemini models/ further down", "GET", "/gemini/v1beta/files/models/gemini-2.0-flash", ``, "x-goog-api-key"},
	}
	for _, c := range cases {
		h := map[string]string{c.header: vk.Key}
		if c.header == "Authorization" {
			h[c.header] = "Bearer " + vk.Key
		}
		before := up.count()
		resp, b := sendPassThrough(t, c.method, hs.URL+c.path, c.body, h)
		want := http.StatusUnauthorized // LiteLLM's key_model_access_denied
		if c.header == "x-goog-api-key" {
			want = http.StatusForbidden // Google's PERMISSION_DENIED
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d %s, want %d", c.name, resp.StatusCode, b, want)
		}
		if up.count() != before {
			t.Errorf("%s: the upstream was called", c.name)
		}
	}
	// The model operations still go.
	for _, c := range []struct{ path, body, header string }{
		{"/openai/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[]}`, "Authorization"},
		{"/anthropic/v1/messages", `{"model":"claude-haiku-4-5-20251001","max_tokens":5,"messages":[]}`, "x-api-key"},
		{"/gemini/v1beta/models/gemini-2.0-flash:generateContent", `{}`, "x-goog-api-key"},
	} {
		h := map[string]string{c.header: vk.Key}
		if c.header == "Authorization" {
			h[c.header] = "Bearer " + vk.Key
		}
		if resp, b := sendPassThrough(t, "POST", hs.URL+c.path, c.body, h); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, b)
		}
	}
	// An operator key forwards anything.
	before := up.count()
	sendPassThrough(t, "GET", hs.URL+"/openai/v1/files", ``, map[string]string{"Authorization": "Bearer " + testKey})
	if up.count() != before+1 {
		t.Errorf("the operator key's request was not forwarded")
	}
}
