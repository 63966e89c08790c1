package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/batch"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/usagelog"
)

// fakeScriptedUpstream is a test fake of an OpenAI-format upstream that counts its calls
// per model: "flaky" answers 503 to its first failures calls and then as the
// fakeOpenAIUpstream does, "quota" answers OpenAI's 429 insufficient_quota, "slow" never
// answers (until the caller leaves); every other
// model is the fakeOpenAIUpstream's ("down" a 503 every time, "badvalue" a 400).
type fakeScriptedUpstream struct {
	fakeOpenAIUpstream
	mu       sync.Mutex
	failures int
	calls    map[string]int
}

func (u *fakeScriptedUpstream) count(model string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls[model]
}

func (u *fakeScriptedUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(raw, &body)
	u.mu.Lock()
	u.calls[body.Model]++
	fail := body.Model == "flaky" && u.failures > 0
	if fail {
		u.failures--
	}
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case body.Model == "slow":
		<-r.Context().Done() // never answers: the gateway's attempt timeout ends the call
		return
	case fail:
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `{"error":{"message":"overloaded","type":"server_error"}}`)
		return
	case body.Model == "quota":
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	u.fakeOpenAIUpstream.ServeHTTP(w, r)
}

// TestBatchLineRetriesGatewayOutage: a batch line whose gateway answer was the final 502 of
// an outage (every model overloaded, after the gateway's own retries) was kept as its
// answer, since that 502 says x-should-retry: false; it is now sent again after a backoff,
// a bounded number of times, as batch users expect of a passing failure: a model that
// recovers answers the line, one that stays down has its last answer kept after 6 more
// sends. Failures that do not clear with time (a spent quota, a request refused) are sent
// once. A line whose upstream calls time out is sent twice (batch.DefaultMaxTimeoutRetries).
// The calls are counted at the upstream.
func TestBatchLineRetriesGatewayOutage(t *testing.T) {
	up := &fakeScriptedUpstream{calls: map[string]int{}}
	ups := httptest.NewServer(up)
	t.Cleanup(ups.Close)
	st := newTestStore(t)
	// No circuit breaker: every send of a line reaches the upstream, so the calls count them.
	g, err := completions.New(completions.Options{Providers: providers.NewRegistry(providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: ups.URL + "/v1", APIKey: "sk-up"})),
		Store: st, Backoff: completions.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}, Observer: usagelog.New(usagelog.Options{}),
		Breaker: completions.BreakerOptions{Failures: -1}, AttemptTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := testServer(t, Config{Store: st, APIKeys: []string{testKey}}, nil)
	if err := Completions(g)(s); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	files, err := batch.NewFiles(s.Store(), batch.FilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := batch.New(s.Store(), files, batch.Options{Concurrency: 1, MaxRetryWait: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := Batches(svc)(s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })

	// How many upstream calls the gateway makes for one request before its final 502.
	code, _, raw := call(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/down","messages":[{"role":"user","content":"hi"}]}`)
	perRequest := up.count("down")
	if code != 502 || perRequest < 1 {
		t.Fatalf("a request of a model that is down: %d after %d calls %s", code, perRequest, raw)
	}
	code, _, raw = call(t, "POST", hs.URL+"/v1/chat/completions", testKey, `{"model":"openai/slow","messages":[{"role":"user","content":"hi"}]}`)
	perSlow := up.count("slow")
	if code < 500 || perSlow < 1 {
		t.Fatalf("a request of a model that never answers: %d after %d calls %s", code, perSlow, raw)
	}
	up.mu.Lock()
	up.failures = perRequest // the first send of the flaky line fails as a whole, the next is answered
	up.calls = map[string]int{}
	up.mu.Unlock()

	vk := litellmGenerate(t, s, `{"key_alias":"evals"}`)
	_, f := uploadBatchFile(t, hs, vk.Key, "batch", chatLines("openai/flaky", "openai/down", "openai/quota", "openai/badvalue", "openai/slow"))
	code, b, raw := call(t, "POST", hs.URL+"/v1/batches", vk.Key, `{"input_file_id":"`+f["id"].(string)+`","endpoint":"/v1/chat/completions","completion_window":"24h"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, raw)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b = waitBatch(t, hs, vk.Key, b["id"].(string))
	counts := b["request_counts"].(map[string]any)
	if b["status"] != "completed" || counts["completed"] != 1.0 || counts["failed"] != 4.0 {
		t.Fatalf("ended: %v", b)
	}
	if out := fileLines(t, hs, vk.Key, b["output_file_id"]); len(out) != 1 || out[0].CustomID != "c0" || out[0].Response.StatusCode != 200 {
		t.Errorf("output lines %+v", out)
	}
	status := map[string]int{}
	for _, l := range fileLines(t, hs, vk.Key, b["error_file_id"]) {
		if l.Response != nil {
			status[l.CustomID] = l.Response.StatusCode
		}
	}
	if status["c1"] != 502 || status["c2"] != 429 || status["c3"] != 400 || status["c4"] < 500 {
		t.Errorf("error lines' statuses %v, want c1 502, c2 429, c3 400, c4 a server error", status)
	}
	for model, want := range map[string]int{
		"flaky":    perRequest + 1, // one failed send, then answered
		"down":     7 * perRequest, // sent 1 + 6 times (maxLineServerRetries), its last answer kept
		"quota":    1,              // a spent quota does not clear with time: sent once
		"badvalue": 1,              // a refused request: sent once
		// Its calls time out: sent 1 + 1 times (batch.DefaultMaxTimeoutRetries), where it
		// was sent 7 times as any other outage.
		"slow": 2 * perSlow,
	} {
		if got := up.count(model); got != want {
			t.Errorf("upstream calls of %s: %d, want %d", model, got, want)
		}
	}
}
