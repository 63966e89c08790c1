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

// fakeLogprobsUpstream is a scripted OpenAI-compatible LLM: it answers "Yes!" (tokens "Yes"
// and "!"), with each token's log probability and one alternative when the request asks
// for logprobs, whole or streamed a token per event.
func fakeLogprobsUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Stream   bool   `json:"stream"`
			Logprobs bool   `json:"logprobs"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		tok := func(token string, lp float64) map[string]any {
			bytes := []int{}
			for _, b := range []byte(token) {
				bytes = append(bytes, int(b))
			}
			return map[string]any{"token": token, "logprob": lp, "bytes": bytes,
				"top_logprobs": []any{map[string]any{"token": token, "logprob": lp}}}
		}
		tokens := []map[string]any{tok("Yes", -0.25), tok("!", -0.75)}
		logprobs := func(ts ...map[string]any) any {
			if !req.Logprobs {
				return nil
			}
			return map[string]any{"content": ts, "refusal": nil}
		}
		usage := map[string]int{"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": logprobs(tokens...),
					"message": map[string]any{"role": "assistant", "content": "Yes!"}}},
				"usage": usage})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, t := range tokens {
			b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": t["token"]}, "logprobs": logprobs(t)}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": "stop"}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		b, _ = json.Marshal(map[string]any{"id": "x", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestCompleteLogprobs: the Go client asks the native API for log probabilities
// (CompletionRequest.Logprobs, TopLogprobs) and reads them from the answer, each streamed
// chunk and the final response; a model that gives none is a 422 *Error naming logprobs.
func TestCompleteLogprobs(t *testing.T) {
	up := fakeLogprobsUpstream(t)
	c, _ := realServer(t, func(st *store.Store, _ string) []server.Option {
		reg := providers.NewRegistry(
			providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL, APIKey: "sk-test"}),
			providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "sk-an"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	})
	ctx := context.Background()
	req := &client.CompletionRequest{Messages: []client.ChatMessage{client.TextMessage("user", "Is it?")},
		Models: []string{"openai/gpt-4o-mini"}, Logprobs: true, TopLogprobs: 1}
	res, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Logprobs == nil || len(res.Logprobs.Content) != 2 || res.Logprobs.Content[0].Token != "Yes" || res.Logprobs.Content[0].Logprob != -0.25 ||
		len(res.Logprobs.Content[1].TopLogprobs) != 1 || string(rune(res.Logprobs.Content[1].Bytes[0])) != "!" {
		t.Fatalf("answer logprobs %+v", res.Logprobs)
	}

	st, err := c.CompleteStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var tokens []string
	for ch, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Logprobs == nil {
			t.Fatalf("chunk %q without logprobs", ch.Text)
		}
		for _, tok := range ch.Logprobs.Content {
			tokens = append(tokens, tok.Token)
		}
	}
	if strings.Join(tokens, "|") != "Yes|!" || st.Final() == nil || st.Final().Logprobs == nil || len(st.Final().Logprobs.Content) != 2 {
		t.Fatalf("streamed tokens %q, final %+v", tokens, st.Final())
	}

	plain, err := c.Complete(ctx, &client.CompletionRequest{Messages: req.Messages, Models: req.Models})
	if err != nil || plain.Logprobs != nil {
		t.Fatalf("unasked: %+v %v", plain, err)
	}

	_, err = c.Complete(ctx, &client.CompletionRequest{Messages: req.Messages, Models: []string{"anthropic/claude-sonnet-4-20250514"}, Logprobs: true})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusUnprocessableEntity || !strings.Contains(e.Message, "logprobs") {
		t.Fatalf("a model without log probabilities: %v, want a 422 naming logprobs", err)
	}
}

// TestChatCompletionLogprobs: the Go client asks the OpenAI-compatible route for log
// probabilities (ChatCompletionRequest.Logprobs, TopLogprobs) and reads them from the
// answer's choice and each streamed chunk's choice, in OpenAI's shape; unasked there are
// none, and a model that gives none is a 400 *Error naming logprobs.
func TestChatCompletionLogprobs(t *testing.T) {
	up := fakeLogprobsUpstream(t)
	c, _ := realServer(t, func(st *store.Store, _ string) []server.Option {
		reg := providers.NewRegistry(
			providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.URL, APIKey: "sk-test"}),
			providers.NewAnthropic(providers.Config{Name: "anthropic", BaseURL: up.URL, APIKey: "sk-an"}))
		g, err := completions.New(completions.Options{Providers: reg, Prices: providers.DefaultCatalog(), Store: st})
		if err != nil {
			t.Fatal(err)
		}
		return []server.Option{server.Completions(g)}
	})
	ctx := context.Background()
	req := &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini", Logprobs: true, TopLogprobs: 1,
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Is it?"}}}
	res, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	lp := res.Choices[0].Logprobs
	if lp == nil || len(lp.Content) != 2 || lp.Content[0].Token != "Yes" || lp.Content[0].Logprob != -0.25 ||
		len(lp.Content[1].TopLogprobs) != 1 || string(rune(lp.Content[1].Bytes[0])) != "!" {
		t.Fatalf("answer logprobs %+v", lp)
	}

	st, err := c.ChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var tokens []string
	for ck, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		if len(ck.Choices) == 0 || ck.Text() == "" {
			continue
		}
		if ck.Choices[0].Logprobs == nil {
			t.Fatalf("chunk %q without logprobs", ck.Text())
		}
		for _, tok := range ck.Choices[0].Logprobs.Content {
			tokens = append(tokens, tok.Token)
		}
	}
	if strings.Join(tokens, "|") != "Yes|!" {
		t.Fatalf("streamed tokens %q", tokens)
	}

	plain, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: req.Model, Messages: req.Messages})
	if err != nil || plain.Choices[0].Logprobs != nil {
		t.Fatalf("unasked: %+v %v", plain, err)
	}

	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "anthropic/claude-sonnet-4-20250514", Messages: req.Messages, Logprobs: true})
	var e *client.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || !strings.Contains(e.Message, "logprobs") {
		t.Fatalf("a model without log probabilities: %v, want a 400 naming logprobs", err)
	}
}
