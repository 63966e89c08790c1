package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
)

// review29aCounter counts the fake upstream's calls per model.
type review29aCounter struct {
	mu    sync.Mutex
	calls map[string]int
	up    fakeOpenAIUpstream
}

func (c *review29aCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(b, &body)
	c.mu.Lock()
	c.calls[body.Model]++
	c.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(b)))
	c.up.ServeHTTP(w, r)
}

func (c *review29aCounter) count(model string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[model]
}

// review29aTagServer serves, over one fake upstream, the tag-filtered group "g" whose first
// member (openai/down, tagged paid) always fails and whose second (openai/ok, tagged free)
// answers, and "h", openai/down alone falling back to "g". A request tagged paid may only
// reach openai/down: it fails, and openai/ok answering it means its tags were ignored.
func review29aTagServer(t *testing.T) (*httptest.Server, *review29aCounter, *completions.Gateway) {
	t.Helper()
	c := &review29aCounter{calls: map[string]int{}}
	ups := httptest.NewServer(c)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	g, err := completions.New(completions.Options{
		Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Prices:    providers.DefaultCatalog(), Store: st, DefaultMaxRetries: -1,
		Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond},
		ModelGroups: map[string]completions.ModelGroup{
			"g": {Models: []string{"openai/down", "openai/ok"}, Tags: [][]string{{"paid"}, {"free"}}, TagFiltering: true},
			"h": {Models: []string{"openai/down"}, Fallbacks: []string{"g"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	files, err := batch.NewFiles(s.Store(), batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(s.Store(), files, batch.Options{Concurrency: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := Batches(svc)(s); err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return hs, c, g
}

// TestReview29aTagRoutingSurfaces: every chat surface (streamed, hedged, several choices,
// Responses, Messages, legacy completions), tags given in the body or the headers, and
// fallbacks to a tag-filtered group keep a request tagged paid off the member tagged free,
// and send one tagged free to it.
func TestReview29aTagRoutingSurfaces(t *testing.T) {
	hs, c, _ := review29aTagServer(t)
	send := func(path, body string, header map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	const input = `"input":"hi"`
	for _, tc := range []struct {
		name, path, paid, free string
		header                 map[string]string // the paid request's, with "free" for the free one's
	}{
		{"chat", "/v1/chat/completions", `{"model":"g","metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat body tags", "/v1/chat/completions", `{"model":"g","tags":["paid"],` + msgs + `}`, `{"model":"g","tags":["free"],` + msgs + `}`, nil},
		{"chat streamed", "/v1/chat/completions", `{"model":"g","stream":true,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","stream":true,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat hedged", "/v1/chat/completions", `{"model":"g","hedge_after":60,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","hedge_after":60,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat streamed hedged", "/v1/chat/completions", `{"model":"g","stream":true,"hedge_after":60,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","stream":true,"hedge_after":60,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat n=2", "/v1/chat/completions", `{"model":"g","n":2,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","n":2,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat header", "/v1/chat/completions", `{"model":"g",` + msgs + `}`, `{"model":"g",` + msgs + `}`, map[string]string{"x-litellm-tags": "paid"}},
		{"chat fallback_models group", "/v1/chat/completions", `{"model":"openai/down","fallback_models":["g"],"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"openai/down","fallback_models":["g"],"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"chat group fallbacks", "/v1/chat/completions", `{"model":"h","metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"h","metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"legacy completions", "/v1/completions", `{"model":"g","prompt":"hi","metadata":{"tags":["paid"]}}`, `{"model":"g","prompt":"hi","metadata":{"tags":["free"]}}`, nil},
		{"responses", "/v1/responses", `{"model":"g","metadata":{"tags":"paid"},` + input + `}`, `{"model":"g","metadata":{"tags":"free"},` + input + `}`, nil},
		{"responses streamed", "/v1/responses", `{"model":"g","stream":true,"metadata":{"tags":"paid"},` + input + `}`, `{"model":"g","stream":true,"metadata":{"tags":"free"},` + input + `}`, nil},
		{"responses header", "/v1/responses", `{"model":"g",` + input + `}`, `{"model":"g",` + input + `}`, map[string]string{"x-litellm-tags": "paid"}},
		{"messages", "/v1/messages", `{"model":"g","max_tokens":10,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","max_tokens":10,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"messages streamed", "/v1/messages", `{"model":"g","max_tokens":10,"stream":true,"metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","max_tokens":10,"stream":true,"metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"responses body tags", "/v1/responses", `{"model":"g","tags":["paid"],` + input + `}`, `{"model":"g","tags":["free"],` + input + `}`, nil},
		{"messages body tags", "/v1/messages", `{"model":"g","max_tokens":10,"tags":["paid"],` + msgs + `}`, `{"model":"g","max_tokens":10,"tags":["free"],` + msgs + `}`, nil},
		{"legacy completions body tags", "/v1/completions", `{"model":"g","prompt":"hi","tags":["paid"]}`, `{"model":"g","prompt":"hi","tags":["free"]}`, nil},
		{"chat litellm_metadata", "/v1/chat/completions", `{"model":"g","litellm_metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","litellm_metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"responses litellm_metadata", "/v1/responses", `{"model":"g","litellm_metadata":{"tags":["paid"]},` + input + `}`, `{"model":"g","litellm_metadata":{"tags":["free"]},` + input + `}`, nil},
		{"messages litellm_metadata", "/v1/messages", `{"model":"g","max_tokens":10,"litellm_metadata":{"tags":["paid"]},` + msgs + `}`, `{"model":"g","max_tokens":10,"litellm_metadata":{"tags":["free"]},` + msgs + `}`, nil},
		{"messages streamed litellm_metadata", "/v1/messages", `{"model":"g","max_tokens":10,"stream":true,"litellm_metadata":{"tags":"paid"},` + msgs + `}`, `{"model":"g","max_tokens":10,"stream":true,"litellm_metadata":{"tags":"free"},` + msgs + `}`, nil},
		{"messages header", "/v1/messages", `{"model":"g","max_tokens":10,` + msgs + `}`, `{"model":"g","max_tokens":10,` + msgs + `}`, map[string]string{"x-litellm-tags": "paid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			okBefore := c.count("ok")
			code, body := send(tc.path, tc.paid, tc.header)
			if code == http.StatusOK && !strings.Contains(body, "error") || c.count("ok") != okBefore {
				t.Errorf("tagged paid: %d %s; openai/ok (tagged free) called %d times, want 0 and a failure", code, body, c.count("ok")-okBefore)
			}
			var fh map[string]string
			if tc.header != nil {
				fh = map[string]string{"x-litellm-tags": "free"}
			}
			downBefore := c.count("down")
			code, body = send(tc.path, tc.free, fh)
			if code != http.StatusOK || c.count("ok") == okBefore {
				t.Errorf("tagged free: %d %s; openai/ok not called", code, body)
			}
			if tc.name != "chat fallback_models group" && tc.name != "chat group fallbacks" && c.count("down") != downBefore {
				t.Errorf("tagged free: openai/down (tagged paid) called %d times", c.count("down")-downBefore)
			}
		})
	}
}

// TestReview29aTagRoutingBatchLines: a batch's lines are routed by their own tags (the
// batch's batch:<id> tag selecting nothing): a line tagged paid never reaches the member
// tagged free, one tagged free does, and one tagged enterprise (no member's, none default)
// is LiteLLM's 401 in the error file.
func TestReview29aTagRoutingBatchLines(t *testing.T) {
	hs, c, _ := review29aTagServer(t)
	lines := `{"custom_id":"paid","method":"POST","url":"/v1/chat/completions","body":{"model":"g","metadata":{"tags":["paid"]},"messages":[{"role":"user","content":"hi"}]}}` + "\n" +
		`{"custom_id":"free","method":"POST","url":"/v1/chat/completions","body":{"model":"g","metadata":{"tags":["free"]},"messages":[{"role":"user","content":"hi"}]}}` + "\n" +
		`{"custom_id":"none","method":"POST","url":"/v1/chat/completions","body":{"model":"g","metadata":{"tags":["enterprise"]},"messages":[{"role":"user","content":"hi"}]}}` + "\n"
	_, f := uploadBatchFile(t, hs, testKey, "batch", []byte(lines))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", testKey, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	b = waitBatch(t, hs, testKey, b["id"].(string))
	if n := c.count("ok"); n != 1 {
		t.Errorf("openai/ok (tagged free) called %d times, want once (the free line)", n)
	}
	if c := b["request_counts"].(map[string]any); c["completed"] != 1.0 || c["failed"] != 2.0 {
		t.Fatalf("counts %v, want 1 completed, 2 failed", c)
	}
	for _, l := range fileLines(t, hs, testKey, b["error_file_id"]) {
		if l.CustomID == "none" && (l.Response == nil || l.Response.StatusCode != http.StatusUnauthorized) {
			t.Errorf("line none: %+v, want a 401", l.Response)
		}
	}
}
