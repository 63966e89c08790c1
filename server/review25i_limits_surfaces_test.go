package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// Review 25i: a request whose every model group member is at its limit answers 429 with
// Retry-After on every surface, in the surface's own error envelope.
func TestReview25iMemberLimitsSurfaces(t *testing.T) {
	ups := httptest.NewServer(&fakeOpenAIUpstream{})
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{"lim": {Models: []string{"openai/ok"}, Limits: []completions.MemberLimits{{RPM: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	chat := `{"model":"lim","messages":[{"role":"user","content":"hi"}]}`
	if resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, chat); resp.StatusCode != http.StatusOK {
		t.Fatalf("first: %d %s", resp.StatusCode, b)
	}
	for _, c := range []struct {
		path, body string
		envelope   func(b []byte) bool
	}{
		{"/v1/chat/completions", chat, openAIRateLimit},
		{"/v1/chat/completions", `{"model":"lim","stream":true,"messages":[{"role":"user","content":"hi"}]}`, openAIRateLimit},
		{"/v1/completions", `{"model":"lim","prompt":"hi"}`, openAIRateLimit},
		{"/v1/responses", `{"model":"lim","input":"hi"}`, openAIRateLimit},
		{"/v1/responses", `{"model":"lim","input":"hi","stream":true}`, openAIRateLimit},
		{"/v1/messages", `{"model":"lim","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, func(b []byte) bool {
			var e struct {
				Type  string `json:"type"`
				Error struct{ Type, Message string }
			}
			return json.Unmarshal(b, &e) == nil && e.Type == "error" && e.Error.Type == "rate_limit_error" && strings.Contains(e.Error.Message, "No deployments available")
		}},
		{"/v1beta/models/lim:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, func(b []byte) bool {
			var e struct {
				Error struct {
					Code            int
					Status, Message string
				}
			}
			return json.Unmarshal(b, &e) == nil && e.Error.Code == 429 && e.Error.Status == "RESOURCE_EXHAUSTED" && strings.Contains(e.Error.Message, "No deployments available")
		}},
		{"/api/v1/completions", `{"models":["openai/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, func(b []byte) bool {
			return strings.Contains(string(b), "No deployments available")
		}},
	} {
		resp, b := post(t, hs.URL+c.path, testKey, c.body)
		if strings.HasPrefix(c.path, "/v1beta") {
			resp, b = geminiPost(t, hs.URL+c.path, c.body)
		}
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || secs < 1 || secs > 60 || resp.Header.Get("X-Should-Retry") == "false" || !c.envelope(b) {
			t.Errorf("%s %s: %d Retry-After %q x-should-retry %q %s", c.path, c.body, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("X-Should-Retry"), b)
		}
	}
}

// openAIRateLimit reports whether b is OpenAI's rate limit error saying LiteLLM's words.
func openAIRateLimit(b []byte) bool {
	var e struct {
		Error struct{ Type, Code, Message string }
	}
	return json.Unmarshal(b, &e) == nil && e.Error.Type == "rate_limit_error" && e.Error.Code == "rate_limit_exceeded" &&
		strings.HasPrefix(e.Error.Message, "No deployments available for selected model, Try again in ")
}
