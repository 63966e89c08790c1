package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReview28rcOperationURLTrailingSlash: an api_base with a query whose path ends in '/'
// (https://x.azurewebsites.net/api/?code=abc) is joined as one without it: no "//" before
// the operation, as a base without a query (whose trailing '/' NewOpenAI drops).
func TestReview28rcOperationURLTrailingSlash(t *testing.T) {
	for _, c := range []struct{ base, path, want string }{
		{"https://x.azurewebsites.net/api/?code=abc", "/chat/completions", "https://x.azurewebsites.net/api/chat/completions?code=abc"},
		{"https://x.azurewebsites.net/api//?code=abc", "/embeddings", "https://x.azurewebsites.net/api/embeddings?code=abc"},
		{"https://h.example/?key=k", "/chat/completions", "https://h.example/chat/completions?key=k"},
		{"https://h.example/a%2Fb/?key=k", "/rerank", "https://h.example/a%2Fb/rerank?key=k"},
		{"https://h.example/v1/#frag", "/moderations", "https://h.example/v1/moderations#frag"},
	} {
		if got := operationURL(c.base, c.path); got != c.want {
			t.Errorf("operationURL(%q, %q) = %q, want %q", c.base, c.path, got, c.want)
		}
	}
}

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
