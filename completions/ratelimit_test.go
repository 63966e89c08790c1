package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestRateLimitIsRetriedOncePerModel: a model that keeps answering 429 is retried at most
// once (after its Retry-After, or, as the last model, after a backoff), however many
// retries the request allows; the next model is then asked.
func TestRateLimitIsRetriedOncePerModel(t *testing.T) {
	cases := []struct {
		name       string
		retryAfter time.Duration
		fallback   bool
		wantA      int
	}{
		{"short Retry-After, fallback", 200 * time.Millisecond, true, 2},
		{"short Retry-After, last model", 200 * time.Millisecond, false, 2},
		{"no Retry-After, last model", 0, false, 2},
		{"no Retry-After, fallback", 0, true, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.a.on("m", step{err: upstreamErr(providers.KindRateLimited, 429, c.retryAfter)})
			r := userReq("hi", "a/m")
			if c.fallback {
				r.FallbackModels = []string{"b/m"}
			}
			r.MaxRetries = intp(MaxRetriesLimit)
			resp, err := h.g.Complete(context.Background(), Scope{}, r)
			if n := h.a.callCount("m"); n != c.wantA {
				t.Fatalf("rate-limited model called %d times, want %d (waits %v)", n, c.wantA, h.sleeps.all())
			}
			if c.fallback {
				if err != nil || resp.Provider != "b" {
					t.Fatalf("fallback not asked: %v", err)
				}
			} else if !errors.Is(err, ErrAllFailed) {
				t.Fatalf("err = %v, want all failed", err)
			}
			if w := h.sleeps.all(); len(w) != c.wantA-1 {
				t.Fatalf("waits = %v, want %d", w, c.wantA-1)
			}
		})
	}
}
