package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestOperationURL: the operation path joins the api_base's path, its query (an Azure
// Functions ?code=) and fragment kept after it; a base without them is base + path.
func TestOperationURL(t *testing.T) {
	for _, c := range []struct{ base, path, want string }{
		{"https://api.openai.com/v1", "/chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"https://x.azurewebsites.net/api/chat?code=abc", "/chat/completions", "https://x.azurewebsites.net/api/chat/chat/completions?code=abc"},
		{"https://x.azurewebsites.net/api?code=a%2Fb%3D%3D&x=1", "/embeddings", "https://x.azurewebsites.net/api/embeddings?code=a%2Fb%3D%3D&x=1"},
		{"https://h.example/v1?", "/rerank", "https://h.example/v1/rerank?"},
		{"https://h.example?key=k", "/chat/completions", "https://h.example/chat/completions?key=k"},
		{"https://h.example/a%2Fb?key=k", "/chat/completions", "https://h.example/a%2Fb/chat/completions?key=k"},
		{"http://localhost:8000/v1", "/moderations", "http://localhost:8000/v1/moderations"},
		// A path ending in '/' before a query is joined as one without it: no "//" before the
		// operation, as a base without a query (whose trailing '/' NewOpenAI drops).
		{"https://x.azurewebsites.net/api/?code=abc", "/chat/completions", "https://x.azurewebsites.net/api/chat/completions?code=abc"},
		{"https://x.azurewebsites.net/api//?code=abc", "/embeddings", "https://x.azurewebsites.net/api/embeddings?code=abc"},
		{"https://h.example/?key=k", "/chat/completions", "https://h.example/chat/completions?key=k"},
		{"https://h.example/a%2Fb/?key=k", "/rerank", "https://h.example/a%2Fb/rerank?key=k"},
		{"https://h.example/v1/#frag", "/moderations", "https://h.example/v1/moderations#frag"},
		// An escaped operation path with its own query (Gemini's): neither re-escaped, the
		// operation's query before the base's.
		{"https://gw.example/gemini/v1beta?key=a%2Fb", "/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
			"https://gw.example/gemini/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse&key=a%2Fb"},
		{"https://gw.example/g?key=k", "/models/tuned%2Fm:generateContent", "https://gw.example/g/models/tuned%2Fm:generateContent?key=k"},
		{"https://gw.example/g?", "/models/m:streamGenerateContent?alt=sse", "https://gw.example/g/models/m:streamGenerateContent?alt=sse"},
		{"https://gw.example/g", "/models/m:streamGenerateContent?alt=sse", "https://gw.example/g/models/m:streamGenerateContent?alt=sse"},
	} {
		if got := operationURL(c.base, c.path); got != c.want {
			t.Errorf("operationURL(%q, %q) = %q, want %q", c.base, c.path, got, c.want)
		}
	}
}

// TestOpenAIAPIBaseWithQuery: an OpenAI-format provider whose api_base carries a query
// calls the operation under the base's path with the query kept.
func TestOpenAIAPIBaseWithQuery(t *testing.T) {
	var path, code string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, code = r.URL.Path, r.URL.Query().Get("code")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	defer srv.Close()
	o := NewOpenAI(Config{Name: "fn", BaseURL: srv.URL + "/api/chat?code=abc", APIKey: "k"})
	if _, err := o.Complete(context.Background(), &Request{Model: "m", Messages: []Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if path != "/api/chat/chat/completions" || code != "abc" {
		t.Errorf("the upstream got path %q code %q, want /api/chat/chat/completions and abc", path, code)
	}
}
