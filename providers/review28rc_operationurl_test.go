package providers

import "testing"

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
