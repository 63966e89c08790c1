package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/completions"
)

// cachingServer is completionsServer's gateway with a response cache in memory; calls
// counts the upstream's requests.
func cachingServer(t *testing.T) (url string, calls func() int, kept func(n int)) {
	t.Helper()
	mc := &completions.MemoryCache{}
	hs, _, up := completionsServerWith(t, func(o *completions.Options) { o.Cache = completions.CacheOptions{Driver: mc} })
	return hs.URL, func() int {
		up.mu.Lock()
		defer up.mu.Unlock()
		return len(up.messages)
	}, func(n int) { t.Helper(); waitFor(t, func() bool { return mc.Len() == n }) }
}

func TestResponseCacheOnEverySurface(t *testing.T) {
	base, calls, kept := cachingServer(t)
	chat := base + "/v1/chat/completions"
	ask := func(key, body string, header map[string]string) (cacheHeader string, m map[string]any, raw string) {
		t.Helper()
		resp, b := do2(t, "POST", chat, key, body, header)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			m = decodeMap(t, b)
		}
		return resp.Header.Get("X-Switchyard-Cache"), m, string(b)
	}
	body := `{"model":"up/ok","messages":[{"role":"user","content":"what is a cache?"}]}`
	got, first, _ := ask(testKey, body, nil)
	if got != "miss" || calls() != 1 {
		t.Fatalf("first request: cache %q after %d upstream calls", got, calls())
	}
	kept(1) // the answer is written in the background
	got, second, _ := ask(testKey, body, nil)
	if got != "hit" || calls() != 1 {
		t.Fatalf("the same request again: cache %q after %d upstream calls, want a hit", got, calls())
	}
	text := func(m map[string]any) string {
		return m["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)
	}
	if text(second) != text(first) || second["usage"].(map[string]any)["completion_tokens"] != first["usage"].(map[string]any)["completion_tokens"] {
		t.Fatalf("the hit's answer %v differs from the first %v", second, first)
	}

	// The same request streamed: the cached answer replayed as chunks.
	streamed := strings.Replace(body, `"model"`, `"stream":true,"model"`, 1)
	got, _, sse := ask(testKey, streamed, nil)
	if got != "hit" || calls() != 1 || !strings.Contains(sse, `"finish_reason":"stop"`) || !strings.Contains(sse, "data: [DONE]") {
		t.Fatalf("streamed hit: cache %q, %d calls, %s", got, calls(), sse)
	}
	var replayed strings.Builder
	for _, ev := range readSSE(t, strings.NewReader(sse)) {
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(ev[1]), &c) == nil && len(c.Choices) > 0 {
			replayed.WriteString(c.Choices[0].Delta.Content)
		}
	}
	if replayed.String() != text(first) {
		t.Fatalf("streamed hit says %q, want %q", replayed.String(), text(first))
	}

	// Another key does not see this key's answers.
	if got, _, _ := ask(completionsOtherKey, body, nil); got != "miss" || calls() != 2 {
		t.Fatalf("another key: cache %q after %d calls, want a miss", got, calls())
	}
	kept(2)
	// Cache-Control: no-cache asks the model again; the body's cache object says no-store.
	if got, _, _ := ask(testKey, body, map[string]string{"Cache-Control": "no-cache"}); got != "bypass" || calls() != 3 {
		t.Fatalf("Cache-Control no-cache: cache %q after %d calls", got, calls())
	}
	fresh := `{"model":"up/ok","cache":{"no-store":true},"messages":[{"role":"user","content":"not kept"}]}`
	ask(testKey, fresh, nil)
	if got, _, _ := ask(testKey, fresh, nil); got != "miss" || calls() != 5 {
		t.Fatalf("no-store: cache %q after %d calls, want a second miss", got, calls())
	}

	// The Messages and native surfaces.
	msgs := `{"model":"up/ok","max_tokens":100,"messages":[{"role":"user","content":"hello claude"}]}`
	ask2 := func(url, body string) (string, map[string]any) {
		resp, b := do2(t, "POST", url, testKey, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", url, resp.StatusCode, b)
		}
		return resp.Header.Get("X-Switchyard-Cache"), decodeMap(t, b)
	}
	if got, _ := ask2(base+"/v1/messages", msgs); got != "miss" {
		t.Fatalf("messages: %q", got)
	}
	kept(3)
	if got, _ := ask2(base+"/v1/messages", msgs); got != "hit" {
		t.Fatalf("messages again: %q, want a hit", got)
	}
	native := `{"models":["up/ok"],"messages":[{"role":"user","content":[{"type":"text","text":"native"}]}]}`
	ask2(base+"/api/v1/completions", native)
	kept(4)
	got, m := ask2(base+"/api/v1/completions", native)
	c, _ := m["cache"].(map[string]any)
	if got != "hit" || c == nil || c["result"] != "hit" || c["key"] == "" || m["usage"].(map[string]any)["costs"].(map[string]any)["total_tokens_cost"] != 0.0 {
		t.Fatalf("native hit's body: cache %v usage %v", m["cache"], m["usage"])
	}
}

func TestResponseCacheBadControlsNameTheirField(t *testing.T) {
	base, calls, _ := cachingServer(t)
	resp, b := do2(t, "POST", base+"/v1/chat/completions", testKey, `{"model":"up/ok","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"Cache-Control": "max-age=soon"})
	e := wantOpenAIError(t, "bad max-age", resp, b, 400, "invalid_request_error", "")
	if !strings.Contains(e.Message, "Cache-Control") {
		t.Errorf("bad max-age: %q does not name the header", e.Message)
	}
	resp, b = do2(t, "POST", base+"/v1/chat/completions", testKey, `{"model":"up/ok","cache":{"ttl":-5},"messages":[{"role":"user","content":"x"}]}`, nil)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "cache.ttl") {
		t.Errorf("cache.ttl -5: %d %s", resp.StatusCode, b)
	}
	resp, b = do2(t, "POST", base+"/api/v1/completions", testKey, `{"models":["up/ok"],"cache":{"s-maxage":"x"},"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`, nil)
	if resp.StatusCode != 422 || !strings.Contains(string(b), "s-maxage") {
		t.Errorf("native cache.s-maxage \"x\": %d %s", resp.StatusCode, b)
	}
	if calls() != 0 {
		t.Fatalf("a refused request reached the upstream (%d calls)", calls())
	}
}

// waitFor retries cond (the cache is written in the background) for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 5 s")
}

func TestCachePurgeRoutes(t *testing.T) {
	base, calls, kept := cachingServer(t)
	ask := func(key, body string) string {
		t.Helper()
		resp, b := do2(t, "POST", base+"/v1/chat/completions", key, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return resp.Header.Get("X-Switchyard-Cache-Key")
	}
	q1 := `{"model":"up/ok","messages":[{"role":"user","content":"one"}]}`
	q2 := `{"model":"up/ok","cache":{"namespace":"eval"},"messages":[{"role":"user","content":"two"}]}`
	k1 := ask(testKey, q1)
	ask(testKey, q2)
	ask(completionsOtherKey, q1)
	kept(3)
	if resp, b := do2(t, "DELETE", base+"/api/v1/cache/"+k1, completionsOtherKey, "", nil); resp.StatusCode != 404 || strings.Contains(string(b), "conversation") {
		t.Fatalf("another key deleting this key's answer: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "DELETE", base+"/api/v1/cache/"+k1, testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"deleted":true`) {
		t.Fatalf("delete one: %d %s", resp.StatusCode, b)
	}
	kept(2)
	if resp, b := do2(t, "DELETE", base+"/api/v1/cache?namespace=eval", testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"deleted":1`) {
		t.Fatalf("purge a namespace: %d %s", resp.StatusCode, b)
	}
	if resp, b := do2(t, "DELETE", base+"/api/v1/cache", testKey, "", nil); resp.StatusCode != 200 || !strings.Contains(string(b), `"deleted":0`) {
		t.Fatalf("purge the rest (none left): %d %s", resp.StatusCode, b)
	}
	kept(1) // the other key's answer stays
	before := calls()
	ask(completionsOtherKey, q1)
	if calls() != before {
		t.Fatal("the other key's answer was purged with this key's")
	}
	if resp, _ := do2(t, "DELETE", base+"/api/v1/cache", "", "", nil); resp.StatusCode != 401 {
		t.Fatalf("purge without a key: %d", resp.StatusCode)
	}
}

// A legacy completion with several prompts is several requests: its cache status combines
// theirs (hit, partial or miss, every hit's saving), header and body alike.
func TestLegacyCompletionsCombineTheirPromptsCacheStatus(t *testing.T) {
	base, calls, kept := cachingServer(t)
	ask := func(body string) (string, map[string]any) {
		t.Helper()
		resp, b := do2(t, "POST", base+"/v1/completions", testKey, body, map[string]string{"Cache-Control": "s-maxage=3600"})
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		c, _ := decodeMap(t, b)["switchyard"].(map[string]any)["cache"].(map[string]any)
		return resp.Header.Get("X-Switchyard-Cache"), c
	}
	if h, _ := ask(`{"model":"up/ok","prompt":["mq1","mq2"]}`); h != "miss" {
		t.Fatalf("first: %q", h)
	}
	kept(2)
	h, c := ask(`{"model":"up/ok","prompt":["mq1","mq2"]}`)
	if h != "hit" || c["result"] != "hit" || calls() != 2 || c["key"] != nil {
		t.Fatalf("again: header %q body %v after %d calls", h, c, calls())
	}
	h, c = ask(`{"model":"up/ok","prompt":["new","mq2"]}`)
	if h != "partial" || c["result"] != "partial" || c["hits"] != 1.0 || calls() != 3 {
		t.Fatalf("one new prompt: header %q body %v after %d calls", h, c, calls())
	}
}
