package providers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestUpstreamCallLogsSayMilliseconds: the debug lines of an upstream call give its
// duration as duration_ms, a number of milliseconds as the server's request lines do, not a
// time.Duration (which a JSON log prints as nanoseconds); an answer and a failure alike.
func TestUpstreamCallLogsSayMilliseconds(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`))
	}))
	defer up.Close()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	req := &providers.Request{Model: "m", Messages: []providers.Message{{Role: "user", Content: "hi"}}}
	if _, err := providers.NewOpenAI(providers.Config{Name: "up", BaseURL: up.URL, APIKey: "k", Logger: log}).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, _ = providers.NewOpenAI(providers.Config{Name: "down", BaseURL: "http://127.0.0.1:1", APIKey: "k", Logger: log}).Complete(context.Background(), req)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		msg, _ := rec["msg"].(string)
		if msg != "upstream responded" && msg != "upstream call failed" {
			continue
		}
		seen[msg] = true
		ms, ok := rec["duration_ms"].(float64)
		if !ok || ms < 0 {
			t.Errorf("%s: duration_ms %v (a number of milliseconds expected): %s", msg, rec["duration_ms"], line)
		}
		if _, raw := rec["after"]; raw {
			t.Errorf("%s: still an \"after\" field: %s", msg, line)
		}
	}
	if !seen["upstream responded"] || !seen["upstream call failed"] {
		t.Errorf("lines seen %v: %s", seen, buf.String())
	}
}
