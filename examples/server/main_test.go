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
		done <- run(ctx, config{addr: "127.0.0.1:0", allowLocal: true, getenv: func(k string) string { return env[k] },
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

	// Custom routers: train from the bundled dataset and route with the trained model.
	data := httptest.NewServer(http.FileServer(http.Dir("../data")))
	defer data.Close()
	tr := c.RouterTrainer()
	if _, err := tr.Train(ctx, data.URL+"/routing_train.json"); err != nil {
		t.Fatal(err)
	}
	if st, err := tr.Wait(ctx, 50*time.Millisecond); err != nil || st.Status != client.TrainCompleted {
		t.Fatalf("training: %+v %v", st, err)
	}
	sel, err = c.ModelSelect(ctx, &client.ModelSelectRequest{
		Messages:     []client.Message{{Role: "user", Content: "What is 7 times 8?"}},
		LLMProviders: []client.Provider{{Provider: "qwen", Model: "qwen2.5-7b-instruct"}, {Provider: "openai", Model: "gpt-4o-mini"}},
		PreferenceID: tr.ModelID(),
	})
	if err != nil || sel.Providers[0].ScoreSource != "router" {
		t.Fatalf("preference_id: %+v %v", sel, err)
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
