package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
	"github.com/switchyard-ai/switchyard/fetch"
	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/routing"
	"github.com/switchyard-ai/switchyard/server"
	"github.com/switchyard-ai/switchyard/store/memstore"
	"github.com/switchyard-ai/switchyard/trainer"
)

// scriptedUpstream is a fake OpenAI-compatible LLM streaming "The derivative is 3x^2 + 2.".
func scriptedUpstream(t *testing.T) string {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range []string{"The derivative ", "is 3x^2 + 2."} {
			b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": part}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}},
			"usage": map[string]int{"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestClientExampleRuns runs the example against the real server package with the
// trainer, model selection (trained routers as preference_id) and completions (a scripted
// upstream) on an in-memory store.
func TestClientExampleRuns(t *testing.T) {
	st := memstore.New()
	defer st.Close()
	svc, err := trainer.New(st, trainer.WithFetcher(&fetch.Fetcher{AllowLocal: true}), trainer.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-fake", "OPENAI_BASE_URL": scriptedUpstream(t)}
	gw, err := completions.New(completions.Options{Providers: providers.FromEnv(func(k string) string { return env[k] }, providers.Options{}), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, APIKeys: []string{"example-key"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		server.CustomRouters(svc),
		server.ModelSelection(routing.NewSelector(routing.Options{Store: st, CustomModels: routing.TrainerModels(svc)})),
		server.Completions(gw))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() { ts.Close(); srv.Close(context.Background()) }()

	c, err := client.New(client.WithBaseURL(ts.URL), client.WithAPIKey("example-key"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(context.Background(), c, options{dataDir: "../data", complete: true, poll: 100 * time.Millisecond}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	s := out.String()
	for _, re := range []string{
		`status completed`,
		`router rm_\S+: 9 models, ngram-tfidf-v1`,
		`held-out top-1 \d+\.\d%`,
		`"What is the derivative of x\^3 \+ 2x\?" → \S+/\S+ \(0\.\d\d\)`,
		`model selection → (qwen/qwen2.5-7b-instruct|meta/llama-3.1-8b-instruct) \(session sess_`,
		`The derivative is 3x\^2 \+ 2\.\n\[gpt-4o-mini, 20 tokens`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Fatalf("output lacks %s:\n%s", re, s)
		}
	}
	if strings.Contains(s, "status failed") {
		t.Fatal(s)
	}
}
