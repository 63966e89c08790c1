package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestForwardURL: the path goes after the root's path, and a root's own query is kept,
// before the caller's.
func TestForwardURL(t *testing.T) {
	for _, c := range []struct{ root, path, query, want string }{
		{"https://api.openai.com/v1", "chat/completions", "", "https://api.openai.com/v1/chat/completions"},
		{"https://api.openai.com/v1/", "chat/completions", "a=1", "https://api.openai.com/v1/chat/completions?a=1"},
		{"https://x.azurewebsites.net/api/llm?code=abc", "chat/completions", "", "https://x.azurewebsites.net/api/llm/chat/completions?code=abc"},
		{"https://x.azurewebsites.net/api/llm/?code=abc", "chat/completions", "a=1", "https://x.azurewebsites.net/api/llm/chat/completions?code=abc&a=1"},
		{"https://x.example/api#frag", "models", "", "https://x.example/api/models"},
	} {
		if got := forwardURL(c.root, c.path, c.query); got != c.want {
			t.Errorf("forwardURL(%q, %q, %q) = %q, want %q", c.root, c.path, c.query, got, c.want)
		}
	}
}

// TestForwardAPIBaseWithQuery: a pass-through to an OpenAI-format provider whose base URL
// carries a query reaches the operation's path with both queries.
func TestForwardAPIBaseWithQuery(t *testing.T) {
	var got string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.RequestURI() }))
	defer up.Close()
	o := NewOpenAI(Config{Name: "fn", BaseURL: up.URL + "/api/llm?code=abc", APIKey: "k"})
	resp, err := o.Forward(context.Background(), &ForwardRequest{Method: "POST", Path: "v1/chat/completions", RawQuery: "x=1", Body: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "/api/llm/chat/completions?code=abc&x=1"; got != want {
		t.Errorf("upstream got %q, want %q", got, want)
	}
}
