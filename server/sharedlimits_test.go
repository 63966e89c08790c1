package server

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/store"
)

// TestRateLimitsSharedByReplicas: two replicas on one store, each with its own
// store.Counters, hold a key to its bounds together once they Sync — the server's
// requests per minute per key, a virtual key's requests_per_minute and its
// tokens_per_minute — where each alone would have let the key through again.
func TestRateLimitsSharedByReplicas(t *testing.T) {
	st := newTestStore(t)
	ctx := context.Background()
	ca, cb := store.NewCounters(st, "limits"), store.NewCounters(st, "limits")
	_, a := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}, RequestsPerMinutePerKey: 4, SharedLimits: ca})
	_, b := keysServerWith(t, st, &fakeOpenAIUpstream{}, Config{APIKeys: []string{testKey, completionsOtherKey}, RequestsPerMinutePerKey: 4, SharedLimits: cb})
	sync := func() {
		t.Helper()
		for _, c := range []*store.Counters{ca, cb} {
			if err := c.Sync(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	sync()                                                                // each learns where the other stands
	vk := issue(t, a, `{"requests_per_minute":3,"tokens_per_minute":15}`) // the key's own POST counts on a: 1 of 4
	for i := range 2 {
		if r := do(t, a, "POST", "/api/v1/test/echo", testKey, `{"name":"x"}`); r.status != 200 {
			t.Fatalf("request %d on a: %d %s", i, r.status, r.raw)
		}
	}
	// The virtual key: two answers on a (10 tokens each), its requests 2 of 3, its tokens 20 of 15.
	chat := `{"model":"openai/ok","messages":[{"role":"user","content":"hi"}]}`
	for i := range 2 {
		if r := do(t, a, "POST", "/v1/chat/completions", vk.Key, chat); r.status != 200 {
			t.Fatalf("virtual key request %d on a: %d %s", i, r.status, r.raw)
		}
	}
	sync()
	if r := do(t, b, "POST", "/api/v1/test/echo", testKey, `{"name":"x"}`); r.status != 200 {
		t.Fatalf("the key's 4th request, on b: %d %s", r.status, r.raw)
	}
	if r := do(t, b, "POST", "/api/v1/test/echo", testKey, `{"name":"x"}`); r.status != http.StatusTooManyRequests {
		t.Errorf("the key's 5th request, on b: %d %s; want 429 (4 per minute across replicas)", r.status, r.raw)
	}
	// On b the virtual key's tokens of the minute are spent (20 of 15): refused before any call.
	if r := do(t, b, "POST", "/v1/chat/completions", vk.Key, chat); r.status != http.StatusTooManyRequests {
		t.Errorf("the virtual key on b after 20 tokens on a: %d %s; want 429 (tokens_per_minute across replicas)", r.status, r.raw)
	}
	// Its requests: 3 of 3 now (the refused one counted as taken on b); a learns of b's.
	sync()
	if r := do(t, a, "POST", "/v1/chat/completions", vk.Key, chat); r.status != http.StatusTooManyRequests {
		t.Errorf("the virtual key's 4th request, back on a: %d %s; want 429", r.status, r.raw)
	}
}
