package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
)

// fakeUpstream is a scripted OpenAI-compatible LLM answering "hi from upstream".
func fakeUpstream(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "hi from upstream"}}},
			"usage":   map[string]int{"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}})
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func TestServerExampleServes(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": fakeUpstream(t)}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", getenv: func(k string) string { return env[k] },
			log: slog.New(slog.NewTextHandler(io.Discard, nil))}, io.Discard, func(addr, key string) { ready <- [2]string{addr, key} })
	}()
	var addr, key string
	select {
	case r := <-ready:
		addr, key = r[0], r[1]
	case err := <-done:
		t.Fatal(err)
	case <-time.After(20 * time.Second):
		t.Fatal("server did not start")
	}
	c, err := client.New(client.WithBaseURL("http://"+addr), client.WithAPIKey(key))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "hello"}},
		LLMProviders: []client.Provider{{Provider: "openai", Model: "gpt-4o-mini"}},
	})
	if err != nil || sel.LLMLabel != "openai/gpt-4o-mini" {
		t.Fatalf("select: %+v %v", sel, err)
	}
	res, err := c.Complete(ctx, &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "hello")}, Models: []string{sel.LLMLabel}})
	if err != nil || !strings.Contains(res.Text(), "hi from upstream") {
		t.Fatalf("complete: %+v %v", res, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not stop")
	}
}
