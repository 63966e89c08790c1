package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// googleGatewayServer answers Gemini's generateContent (and its SSE stream, and
// batchEmbedContents) and records the path and query each call reached.
func googleGatewayServer(t *testing.T, paths, queries *[]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*paths, *queries = append(*paths, r.URL.EscapedPath()), append(*queries, r.URL.RawQuery)
		switch {
		case r.URL.Query().Get("alt") == "sse":
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"ok\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":1,\"candidatesTokenCount\":1,\"totalTokenCount\":2}}\n\n"))
		case len(r.URL.Path) > 19 && r.URL.Path[len(r.URL.Path)-19:] == ":batchEmbedContents":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"embeddings":[{"values":[0.1,0.2]}]}`))
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestGeminiAPIBaseWithQuery: a Gemini provider whose api_base carries a query (a
// gateway's ?key=) is called under the base's path, the version added before the query
// when the path has none, with the query kept beside stream's alt=sse (it was called at
// …?key=abc/v1beta/models/…); embeddings too.
func TestGeminiAPIBaseWithQuery(t *testing.T) {
	var paths, queries []string
	srv := googleGatewayServer(t, &paths, &queries)
	req := func() *Request {
		return &Request{Model: "gemini-2.0-flash", Messages: []Message{{Role: "user", Content: "hi"}}}
	}
	for _, base := range []string{"/gw?key=abc", "/gw/?key=abc", "/gw/v1beta?key=abc", "/gw/v1beta/?key=abc"} {
		paths, queries = nil, nil
		g := NewGemini(Config{Name: "gem", BaseURL: srv.URL + base, APIKey: "k"})
		if _, err := g.Complete(context.Background(), req()); err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		s, err := g.Stream(context.Background(), req())
		if err != nil {
			t.Fatalf("%s: stream: %v", base, err)
		}
		if got := readAll(t, s); got != "ok" {
			t.Fatalf("%s: stream read %q", base, got)
		}
		if _, err := g.Embed(context.Background(), &EmbeddingRequest{Model: "text-embedding-004", Input: []string{"hi"}}); err != nil {
			t.Fatalf("%s: embed: %v", base, err)
		}
		want := []string{"/gw/v1beta/models/gemini-2.0-flash:generateContent", "/gw/v1beta/models/gemini-2.0-flash:streamGenerateContent",
			"/gw/v1beta/models/text-embedding-004:batchEmbedContents"}
		wantQ := []string{"key=abc", "alt=sse&key=abc", "key=abc"}
		if len(paths) != 3 {
			t.Fatalf("api_base …%s: calls %v", base, paths)
		}
		for i := range want {
			if paths[i] != want[i] || queries[i] != wantQ[i] {
				t.Errorf("api_base …%s: call %d reached %s?%s, want %s?%s", base, i, paths[i], queries[i], want[i], wantQ[i])
			}
		}
	}
}

// TestVertexAPIBaseWithQuery: a Vertex AI provider whose api_base (the API's root) carries
// a query is called at …/v1/projects/{project}/locations/{location}/publishers/google/models/…
// under the root's path, the query kept.
func TestVertexAPIBaseWithQuery(t *testing.T) {
	var paths, queries []string
	srv := googleGatewayServer(t, &paths, &queries)
	v, err := NewVertex(VertexConfig{Config: Config{Name: "vx", BaseURL: srv.URL + "/vertex/?key=abc"}, Project: "p", Location: "europe-west4", AccessToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Complete(context.Background(), &Request{Model: "gemini-2.0-flash", Messages: []Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	want := "/vertex/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.0-flash:generateContent"
	if len(paths) != 1 || paths[0] != want || queries[0] != "key=abc" {
		t.Fatalf("the upstream got %v ? %v, want %s?key=abc", paths, queries, want)
	}
}
