package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// semanticUpstream is a scripted OpenAI-format upstream: chat answers "Paris"; embeddings
// map known sentences to chosen vectors (others to [0 0 1]).
func semanticUpstream(t *testing.T) (url string, chats func() int) {
	t.Helper()
	var (
		mu sync.Mutex
		n  int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input []string `json:"input"`
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			_ = json.NewDecoder(r.Body).Decode(&body)
			var data []map[string]any
			for i, in := range body.Input {
				v := []float64{0, 0, 1}
				switch {
				case strings.Contains(in, "What is the capital of France?"):
					v = []float64{1, 0, 0}
				case strings.Contains(in, "Tell me France's capital city."):
					v = []float64{0.97, 0.2431, 0}
				}
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": "embed", "data": data, "usage": map[string]int{"prompt_tokens": 5, "total_tokens": 5}})
		default:
			mu.Lock()
			n++
			mu.Unlock()
			_, _ = w.Write([]byte(`{"id":"c1","object":"chat.completion","model":"chat","choices":[{"index":0,"message":{"role":"assistant","content":"Paris"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestSemanticCacheHeadersAndBody: over HTTP a paraphrase is a hit said to be semantic —
// X-Switchyard-Cache: hit, X-Switchyard-Cache-Similarity and switchyard.cache's semantic
// and similarity — and the first answer's key.
func TestSemanticCacheHeadersAndBody(t *testing.T) {
	upURL, chats := semanticUpstream(t)
	reg := providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "sem", BaseURL: upURL + "/v1", APIKey: "sk-sem"}))
	st := newTestStore(t)
	mc := &completions.MemoryCache{}
	g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st,
		Cache: completions.CacheOptions{Driver: mc, Semantic: &completions.SemanticCacheOptions{Model: "sem/text-embedding-3-small"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	ask := func(question string) (*http.Response, map[string]any) {
		t.Helper()
		resp, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"sem/gpt-4o-mini","messages":[{"role":"user","content":"`+question+`"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return resp, decodeMap(t, b)
	}
	first, _ := ask("What is the capital of France?")
	if first.Header.Get("X-Switchyard-Cache") != "miss" || first.Header.Get("X-Switchyard-Cache-Similarity") != "" {
		t.Fatalf("first: %v", first.Header)
	}
	// The answer and its vector are written in the background (and the embeddings of the
	// question, by the embeddings cache).
	waitFor(t, func() bool { return mc.Len() == 3 })
	resp, m := ask("Tell me France's capital city.")
	h := resp.Header
	if h.Get("X-Switchyard-Cache") != "hit" || h.Get("X-Switchyard-Cache-Similarity") != "0.97" || h.Get("X-Switchyard-Cache-Key") != first.Header.Get("X-Switchyard-Cache-Key") || h.Get("Age") == "" {
		t.Fatalf("paraphrase: headers %v", h)
	}
	c, _ := m["switchyard"].(map[string]any)["cache"].(map[string]any)
	if c["result"] != "hit" || c["semantic"] != true || c["similarity"] != 0.97 {
		t.Fatalf("switchyard.cache = %v", c)
	}
	// Streamed, the same: the answer replayed, the headers said before it.
	sresp, sse := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"sem/gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Tell me France's capital city."}]}`)
	if sresp.Header.Get("X-Switchyard-Cache") != "hit" || sresp.Header.Get("X-Switchyard-Cache-Similarity") != "0.97" || !strings.Contains(string(sse), "Paris") {
		t.Fatalf("streamed paraphrase: %v %s", sresp.Header, sse)
	}
	if chats() != 1 {
		t.Fatalf("the chat model was called %d times, want once", chats())
	}
	// The request's say: a stricter threshold misses; a bad one names its field.
	strict, _ := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"sem/gpt-4o-mini","cache":{"similarity_threshold":0.99,"no-store":true},"messages":[{"role":"user","content":"Tell me France's capital city."}]}`)
	if strict.Header.Get("X-Switchyard-Cache") != "miss" || chats() != 2 {
		t.Fatalf("similarity_threshold 0.99: %v, %d chats", strict.Header, chats())
	}
	bad, b := post(t, hs.URL+"/v1/chat/completions", testKey, `{"model":"sem/gpt-4o-mini","cache":{"similarity_threshold":2},"messages":[{"role":"user","content":"x"}]}`)
	if bad.StatusCode != 400 || !strings.Contains(string(b), "cache.similarity_threshold") {
		t.Fatalf("similarity_threshold 2: %d %s", bad.StatusCode, b)
	}
}
