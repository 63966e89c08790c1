package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// r14Upstream is a rerank upstream (Cohere's /v2/rerank, Jina's and Voyage's /v1/rerank)
// whose answer a test scripts: answer gets the decoded request and the path and writes.
type r14Upstream struct {
	mu     sync.Mutex
	calls  map[string]int
	bodies []map[string]any
	answer func(w http.ResponseWriter, path string, req map[string]any)
}

func (u *r14Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var req map[string]any
	json.Unmarshal(raw, &req)
	u.mu.Lock()
	u.calls[r.URL.Path]++
	u.bodies = append(u.bodies, req)
	answer := u.answer
	u.mu.Unlock()
	answer(w, r.URL.Path, req)
}

func (u *r14Upstream) count(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[path]
}

// r14Server is a server whose cohere, jina and voyage presets call one scripted upstream,
// with the usage log, a memory response cache (opt-out), and the groups "rr" (cohere then
// jina) and "rr-jina-first" (jina then cohere).
func r14Server(t *testing.T, answer func(w http.ResponseWriter, path string, req map[string]any)) (*httptest.Server, *Server, *r14Upstream, *completions.Gateway) {
	t.Helper()
	up := &r14Upstream{calls: map[string]int{}, answer: answer}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	env := map[string]string{"COHERE_API_KEY": "co", "COHERE_BASE_URL": ups.URL, "JINA_API_KEY": "jn", "JINA_BASE_URL": ups.URL + "/v1",
		"VOYAGE_API_KEY": "vo", "VOYAGE_BASE_URL": ups.URL + "/v1", "OPENAI_API_KEY": "sk", "OPENAI_BASE_URL": ups.URL + "/v1"}
	st := newTestStore(t)
	rec := usagelog.New(usagelog.Options{})
	g, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}),
		Prices: providers.DefaultCatalog(), Store: st, Observer: rec, Cache: completions.CacheOptions{Driver: &completions.MemoryCache{}},
		Sleep:  func(context.Context, time.Duration) error { return nil },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ModelGroups: map[string]completions.ModelGroup{
			"rr":            {Models: []string{"cohere/rerank-v3.5", "jina/jina-reranker-v2-base-multilingual"}},
			"rr-jina-first": {Models: []string{"jina/jina-reranker-v2-base-multilingual", "cohere/rerank-v3.5"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	s := testServer(t, Config{Store: st}, nil)
	for _, o := range []Option{Completions(g), Usage(rec)} {
		if err := o(s); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, s, up, g
}
