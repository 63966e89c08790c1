package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store"
)

// scriptedUpstream is a fake OpenAI-compatible LLM: it answers "Hello there friend" in
// three fragments; for a model whose name contains "cut" it sends one fragment and then
// drops the connection (a stream cut mid-answer).
func scriptedUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model  string `json:"model"`
			Stream bool   `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		usage := map[string]int{"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "Hello there friend"}}},
				"usage":   usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		for i, part := range []string{"Hello ", "there ", "friend"} {
			chunk(map[string]any{"content": part}, nil)
			if i == 0 && strings.Contains(req.Model, "cut") {
				panic(http.ErrAbortHandler) // drop the connection mid-answer
			}
		}
		chunk(map[string]any{}, "stop")
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func completionsOptions(t *testing.T) func(st *store.Store, _ string) []server.Option {
	up := scriptedUpstream(t)
	return func(st *store.Store, _ string) []server.Option {
		env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}
		reg := providers.FromEnv(func(k string) string { return env[k] }, providers.Options{})
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	}
}

func TestCompleteAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	res, err := c.Complete(ctx, &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", "Greet me")},
		Models:   []string{"openai/gpt-4o-mini"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "Hello there friend" || res.Provider != "openai" || res.Usage.TotalTokens != 12 || res.ConversationID == "" {
		t.Fatalf("completion %+v", res)
	}
	// Continue the conversation.
	res2, err := c.Complete(ctx, &client.CompletionRequest{
		Messages:       []client.ChatMessage{client.TextMessage("user", "Again")},
		Models:         []string{"openai/gpt-4o-mini"},
		ConversationID: res.ConversationID,
	})
	if err != nil || res2.ConversationID != res.ConversationID {
		t.Fatalf("continued: %+v %v", res2, err)
	}
}

func TestCompleteStreamAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	st, err := c.CompleteStream(ctx, &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", "Greet me")},
		Models:   []string{"openai/gpt-4o-mini"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var parts []string
	for ch, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, ch.Text)
	}
	f := st.Final()
	if strings.Join(parts, "") != "Hello there friend" || len(parts) != 3 || f == nil || f.Text() != "Hello there friend" || f.Usage.TotalTokens != 12 {
		t.Fatalf("parts %q final %+v", parts, f)
	}
}

func TestCompleteStreamCutMidAnswerIsAnError(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	zero := 0
	st, err := c.CompleteStream(context.Background(), &client.CompletionRequest{
		Messages:   []client.ChatMessage{client.TextMessage("user", "Greet me")},
		Models:     []string{"openai/gpt-cut"},
		MaxRetries: &zero,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := 0
	for st.Next() {
		n++
	}
	var se *client.StreamError
	if n != 1 || !errors.As(st.Err(), &se) || st.Final() != nil {
		t.Fatalf("chunks %d, err %v", n, st.Err())
	}
}

func TestCompleteValidationError(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	_, err := c.Complete(context.Background(), &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", "hi")},
	})
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Kind != "Validation Error" || !strings.Contains(ae.Message, "models") {
		t.Fatalf("no models: %#v", err)
	}
	// Before the stream starts, failures come back from CompleteStream itself.
	_, err = c.CompleteStream(context.Background(), &client.CompletionRequest{
		Messages: []client.ChatMessage{client.TextMessage("user", "hi")},
		Models:   []string{"nope"},
	})
	if !errors.Is(err, client.ErrInvalid) {
		t.Fatalf("bad model string: %v", err)
	}
}
