package providers_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// jsonReplay answers every request with body as a 200 JSON response.
type jsonReplay struct{ body []byte }

// RoundTrip implements http.RoundTripper.
func (t jsonReplay) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(t.body)), Request: r}, nil
}

// TestAnsweredCallSparesItsCredentials: the credentials a request's headers carry are
// worked out (to redact them from its errors) only when it fails, so an answered call
// with four credential headers allocates what one with four other headers does.
func TestAnsweredCallSparesItsCredentials(t *testing.T) {
	answer := []byte(`{"id":"c1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	allocs := func(header string) float64 {
		h := map[string]string{}
		for i := range 4 {
			h[fmt.Sprintf("%s-%d", header, i)] = fmt.Sprintf("Bearer value-of-%s-%d", header, i)
		}
		p := providers.NewOpenAI(providers.Config{Name: "openai", APIKey: testKey, Headers: h, HTTPClient: &http.Client{Transport: jsonReplay{answer}}})
		req := thinkingUser("gpt-4o-mini", nil)
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return testing.AllocsPerRun(50, func() {
			if _, err := p.Complete(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		})
	}
	secret, plain := allocs("X-Upstream-Token"), allocs("X-Upstream-Trace")
	if secret != plain {
		t.Fatalf("an answered call allocates %.0f times with four credential headers, %.0f with four others; want as many", secret, plain)
	}
}
