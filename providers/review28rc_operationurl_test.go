package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReview28rcAnthropicAPIBaseWithQuery: an Anthropic provider whose api_base carries a
// query (a gateway's ?key=) is called at /v1/messages under the base's path with the query
// kept, as an OpenAI-format one is (it was called at …?key=abc/v1/messages).
func TestReview28rcAnthropicAPIBaseWithQuery(t *testing.T) {
	var path, key string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, key = r.URL.Path, r.URL.Query().Get("key")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"m","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	defer srv.Close()
	for _, base := range []string{"/anthropic/?key=abc", "/anthropic?key=abc", "/anthropic/v1?key=abc", "/anthropic/v1/?key=abc"} {
		path, key = "", ""
		a := NewAnthropic(Config{Name: "gw", BaseURL: srv.URL + base, APIKey: "k"})
		if _, err := a.Complete(context.Background(), &Request{Model: "claude", Messages: []Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		if path != "/anthropic/v1/messages" || key != "abc" {
			t.Errorf("api_base …%s: the upstream got path %q key %q, want /anthropic/v1/messages and abc", base, path, key)
		}
	}
}
