package server

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReview10cFailedAuthLockoutNotRetryable: openAIStatus now marks every 429 that carries
// Retry-After retryable, not only the per-key request limit. The failed-auth lockout on /v1/
// (and /v1/messages) lost its x-should-retry: false, so OpenAI/Anthropic SDKs with a bad key
// now retry into the lockout (2 more attempts each call) instead of surfacing it.
func TestReview10cFailedAuthLockoutNotRetryable(t *testing.T) {
	s := testServer(t, Config{FailedAuthPerMinute: 1}, nil)
	var last *httptest.ResponseRecorder
	for range 3 {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{}`))
		r.Header.Set("Authorization", "Bearer wrong-key-wrong-key-wrong-key-wrong")
		last = httptest.NewRecorder()
		s.ServeHTTP(last, r)
	}
	if last.Code != 429 {
		t.Fatalf("third bad-key request: %d", last.Code)
	}
	if last.Header().Get("X-Should-Retry") != "false" {
		t.Errorf("failed-auth lockout on /v1/: x-should-retry %q, Retry-After %q (was false before 49629c1)", last.Header().Get("X-Should-Retry"), last.Header().Get("Retry-After"))
	}
}
