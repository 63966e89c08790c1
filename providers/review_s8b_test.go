package providers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestS8bInterleavedBetaKeepsConfiguredBetas: Config.Headers are "extra headers sent with
// every request"; an operator's anthropic-beta there (say the 1M-context beta) must still
// reach Claude when a request also asks for interleaved thinking. start sets Anthropic-Beta
// to the interleaved beta alone, and send copies the call's headers over the configured
// ones, so the configured beta is silently dropped for exactly those requests.
func TestS8bInterleavedBetaKeepsConfiguredBetas(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, strings.Join(r.Header.Values("Anthropic-Beta"), ","))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"type":"message","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`))
	}))
	defer srv.Close()
	a := NewAnthropic(Config{BaseURL: srv.URL, APIKey: "k", HTTPClient: srv.Client(),
		Headers: map[string]string{"anthropic-beta": "context-1m-2025-08-07"}})
	for _, interleaved := range []bool{false, true} {
		req := &Request{Model: "claude-sonnet-4-20250514", MaxTokens: 8000, Messages: []Message{{Role: "user", Content: "hi"}},
			Thinking: &Thinking{BudgetTokens: 2048, Interleaved: interleaved}}
		if _, err := a.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "context-1m-2025-08-07" {
		t.Fatalf("betas sent: %q", got)
	}
	if !strings.Contains(got[1], "context-1m-2025-08-07") || !strings.Contains(got[1], AnthropicInterleavedThinkingBeta) {
		t.Errorf("with interleaved thinking the request carried anthropic-beta %q: the configured beta was dropped", got[1])
	}
}
