package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestEndUserFromLiteLLMMetadata: LiteLLM's litellm_metadata.user names the end user on
// chat, text completions, /v1/responses and /v1/messages, and OpenAI-style metadata.user_id
// does on the OpenAI surfaces, each after the body's user in LiteLLM's order.
func TestEndUserFromLiteLLMMetadata(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"max_budget":10}`)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`
	for _, c := range []struct {
		path, body, want string
	}{
		{"/v1/chat/completions", chat + `,"litellm_metadata":{"user":"carol"}}`, "carol"},
		{"/v1/chat/completions", chat + `,"metadata":{"user_id":"dave"}}`, "dave"},
		{"/v1/chat/completions", chat + `,"litellm_metadata":{"user":"carol"},"metadata":{"user_id":"dave"}}`, "carol"},
		{"/v1/chat/completions", chat + `,"user":"erin","litellm_metadata":{"user":"carol"}}`, "erin"},
		{"/v1/chat/completions", chat + `,"litellm_metadata":"not an object","metadata":{"user_id":"dave"}}`, "dave"},
		{"/v1/chat/completions", chat + `,"litellm_metadata":{"user":42}}`, "42"},
		{"/v1/completions", `{"model":"openai/ok","prompt":"hi","litellm_metadata":{"user":"carol"}}`, "carol"},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","store":false,"metadata":{"user_id":"dave"}}`, "dave"},
		{"/v1/responses", `{"model":"openai/ok","input":"hi","store":false,"litellm_metadata":{"user":"carol"}}`, "carol"},
		{"/v1/messages", `{"model":"openai/ok","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"litellm_metadata":{"user":"carol"},"metadata":{"user_id":"dave"}}`, "carol"},
	} {
		before := map[string]int64{}
		for _, id := range []string{"carol", "dave", "erin", "42"} {
			if r := do(t, s, "GET", "/api/v1/customers/"+id, testKey, ""); r.status == http.StatusOK {
				before[id] = endUserRequests(t, s, id)
			}
		}
		if st, b := postWith(t, hs.URL+c.path, k.Key, c.body, nil); st != http.StatusOK {
			t.Fatalf("%s %s: %d %s", c.path, c.body, st, b)
		}
		for _, id := range []string{"carol", "dave", "erin", "42"} {
			got := int64(0)
			if r := do(t, s, "GET", "/api/v1/customers/"+id, testKey, ""); r.status == http.StatusOK {
				got = endUserRequests(t, s, id)
			}
			want := before[id]
			if id == c.want {
				want++
			}
			if got != want {
				t.Fatalf("%s %s: end user %s has %d requests, want %d", c.path, c.body, id, got, want)
			}
		}
	}
}

// endUserRequests is the number of requests charged to the test key's end user id.
func endUserRequests(t *testing.T, s *Server, id string) int64 {
	t.Helper()
	r := do(t, s, "GET", "/api/v1/customers/"+id, testKey, "")
	var e endUser
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.raw), &e) != nil {
		t.Fatalf("GET /api/v1/customers/%s: %d %s", id, r.status, r.raw)
	}
	return e.Spend.Requests
}

// TestEndUserFromLiteLLMMetadataRefusalNamesIt: an end user id refused from
// litellm_metadata.user or metadata.user_id is refused naming that field.
func TestEndUserFromLiteLLMMetadataRefusalNamesIt(t *testing.T) {
	hs, s := keysServer(t, nil, 0)
	k := litellmGenerate(t, s, `{"max_budget":10}`)
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]`
	for body, field := range map[string]string{
		chat + `,"litellm_metadata":{"user":".."}}`: "litellm_metadata.user",
		chat + `,"metadata":{"user_id":"."}}`:       "metadata.user_id",
	} {
		st, b := postWith(t, hs.URL+"/v1/chat/completions", k.Key, body, nil)
		if st != http.StatusBadRequest || !strings.Contains(b, field) {
			t.Fatalf("%s: %d %s, want a 400 naming %s", body, st, b, field)
		}
	}
}

// TestLiteLLMMetadataInOpenAPI: every request body taking litellm_metadata describes it.
func TestLiteLLMMetadataInOpenAPI(t *testing.T) {
	_, s := keysServer(t, nil, 0)
	doc := string(s.OpenAPI())
	n := strings.Count(doc, `"litellm_metadata": {`) + strings.Count(doc, `"litellm_metadata":{`)
	if n < 4 || strings.Count(doc, "never sent upstream") < n {
		t.Fatalf("litellm_metadata appears %d times with %d descriptions", n, strings.Count(doc, "never sent upstream"))
	}
}
