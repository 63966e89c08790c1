package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/client"
)

// fakeOpenAIChat speaks the OpenAI chat protocol of POST /v1/chat/completions. It answers
// "Hello there" (in two chunks when streamed). Models ending in "/fail-mid" send one chunk
// and then an error event, "/cut" one chunk and then end without [DONE]; a model without
// a provider is refused with OpenAI's error envelope.
func fakeOpenAIChat(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("unexpected %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
			w.WriteHeader(404)
			return
		}
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			MaxTokens     *int     `json:"max_tokens"`
			Temperature   *float64 `json:"temperature"`
			Stream        bool     `json:"stream"`
			StreamOptions *struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		if !strings.Contains(req.Model, "/") {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Should-Retry", "false")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"model: must be provider/model","type":"invalid_request_error","param":"model","code":null}}`)
			return
		}
		if len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content != "Greet me" || req.MaxTokens == nil || *req.MaxTokens != 20 {
			t.Errorf("request %+v", req)
		}
		usage := `{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}`
		if !req.Stream {
			if req.StreamOptions != nil {
				t.Error("stream_options sent without stream")
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there"},"finish_reason":"stop"}],"usage":%s,"switchyard":{"provider":"openai","costs":{"total_tokens_cost":0.002,"price_known":true},"latency":9,"ttft":3,"attempts":[{"model":%q,"outcome":"ok","latency_ms":9}]}}`, req.Model, usage, req.Model)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(choices string, extra string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":%q,\"choices\":%s%s}\n\n", req.Model, choices, extra)
		}
		io.WriteString(w, ": keep-alive\n\n")
		chunk(`[{"index":0,"delta":{"role":"assistant","content":"Hello "},"finish_reason":null}]`, "")
		switch {
		case strings.HasSuffix(req.Model, "/fail-mid"):
			io.WriteString(w, `data: {"error":{"message":"upstream cut","type":"upstream_error","param":null,"code":"stream_failed"}}`+"\n\n")
			return
		case strings.HasSuffix(req.Model, "/cut"):
			return
		}
		chunk(`[{"index":0,"delta":{"content":"there"},"finish_reason":null}]`, "")
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`, "")
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			chunk(`[]`, `,"usage":`+usage)
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

func chatRequest(model string) *client.ChatCompletionRequest {
	n := 20
	return &client.ChatCompletionRequest{
		Model:     model,
		Messages:  []client.ChatCompletionMessage{{Role: "user", Content: "Greet me"}},
		MaxTokens: &n,
	}
}

func TestChatCompletion(t *testing.T) {
	c := fakeServer(t, fakeOpenAIChat(t))
	res, err := c.ChatCompletion(context.Background(), chatRequest("openai/gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || res.ID != "chatcmpl-1" || res.Created != 1700000000 || res.Model != "openai/gpt-4o-mini" ||
		res.Text() != "Hello there" || res.Choices[0].Message.Role != "assistant" || res.Choices[0].FinishReason != "stop" ||
		res.Usage.TotalTokens != 7 || res.Usage.PromptTokens != 5 || res.Switchyard == nil || res.Switchyard.Costs.TotalTokensCost != 0.002 ||
		len(res.Switchyard.Attempts) != 1 {
		t.Fatalf("response %+v", res)
	}

	// OpenAI's error envelope becomes an *Error.
	_, err = c.ChatCompletion(context.Background(), chatRequest("gpt-4o"))
	var ae *client.Error
	if !errors.Is(err, client.ErrInvalid) || !errors.As(err, &ae) || ae.Status != 400 || ae.Kind != "invalid_request_error" ||
		ae.Message != "model: must be provider/model" || ae.Param != "model" || !ae.NoRetry {
		t.Fatalf("err %#v", err)
	}
	if _, err := c.ChatCompletionStream(context.Background(), chatRequest("gpt-4o")); !errors.As(err, &ae) || ae.Status != 400 {
		t.Fatalf("stream err %v", err)
	}
}

func TestChatCompletionStreamWithUsage(t *testing.T) {
	c := fakeServer(t, fakeOpenAIChat(t))
	req := chatRequest("openai/gpt-4o-mini")
	req.StreamOptions = &client.ChatStreamOptions{IncludeUsage: true}
	st, err := c.ChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	var finish []string
	n := 0
	for ck, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ck.Object != "chat.completion.chunk" || ck.Model != "openai/gpt-4o-mini" {
			t.Fatalf("chunk %+v", ck)
		}
		text.WriteString(ck.Text())
		for _, ch := range ck.Choices {
			if ch.FinishReason != nil {
				finish = append(finish, *ch.FinishReason)
			}
		}
	}
	u := st.Usage()
	if n != 4 || text.String() != "Hello there" || fmt.Sprint(finish) != "[stop]" || u == nil || u.TotalTokens != 7 || st.Err() != nil {
		t.Fatalf("chunks %d text %q finish %v usage %+v err %v", n, text.String(), finish, u, st.Err())
	}

	// Without include_usage there is no usage chunk.
	st, err = c.ChatCompletionStream(context.Background(), chatRequest("openai/gpt-4o-mini"))
	if err != nil {
		t.Fatal(err)
	}
	n = 0
	for st.Next() {
		n++
	}
	if n != 3 || st.Usage() != nil || st.Err() != nil {
		t.Fatalf("chunks %d usage %v err %v", n, st.Usage(), st.Err())
	}
}

func TestChatCompletionStreamFailures(t *testing.T) {
	c := fakeServer(t, fakeOpenAIChat(t))

	// An error event mid-stream is a *ChatStreamError, never a success.
	st, err := c.ChatCompletionStream(context.Background(), chatRequest("openai/fail-mid"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for st.Next() {
		n++
	}
	var se *client.ChatStreamError
	if n != 1 || !errors.As(st.Err(), &se) || se.Message != "upstream cut" || se.Type != "upstream_error" || se.Code != "stream_failed" || se.Param != "" {
		t.Fatalf("chunks %d err %v", n, st.Err())
	}
	if st.Next() {
		t.Fatal("Next after the error")
	}

	// A stream that stops without [DONE] is ErrStreamTruncated, also through Chunks.
	st, err = c.ChatCompletionStream(context.Background(), chatRequest("openai/cut"))
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	n = 0
	for _, err := range st.Chunks() {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if n != 1 || len(errs) != 1 || !errors.Is(errs[0], client.ErrStreamTruncated) || !errors.Is(st.Err(), client.ErrStreamTruncated) {
		t.Fatalf("chunks %d errs %v", n, errs)
	}
}

func TestChatCompletionStreamOfJSONAnswer(t *testing.T) {
	// A server (or proxy) that ignores "stream" and answers a chat.completion: the stream
	// yields it as one chunk, plus the usage chunk when asked for.
	c := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"openai/gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	})
	req := chatRequest("openai/gpt-4o")
	req.StreamOptions = &client.ChatStreamOptions{IncludeUsage: true}
	st, err := c.ChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	n := 0
	for st.Next() {
		n++
		text += st.Chunk().Text()
	}
	if n != 2 || text != "Hi" || st.Usage() == nil || st.Usage().TotalTokens != 2 || st.Err() != nil {
		t.Fatalf("chunks %d text %q usage %v err %v", n, text, st.Usage(), st.Err())
	}
}

// The same calls against the real server package and its gateway (scriptedUpstream in
// completions_test.go is the upstream LLM).

func TestChatCompletionAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	ctx := context.Background()
	res, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{
		Model:    "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Greet me"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "chat.completion" || res.Text() != "Hello there friend" || res.Model != "openai/gpt-4o-mini" || res.Usage.TotalTokens != 12 ||
		res.Choices[0].FinishReason != "stop" || res.Switchyard == nil || res.Switchyard.Provider != "openai" {
		t.Fatalf("response %+v", res)
	}

	st, err := c.ChatCompletionStream(ctx, &client.ChatCompletionRequest{
		Model:         "openai/gpt-4o-mini",
		Messages:      []client.ChatCompletionMessage{{Role: "user", Content: "Greet me"}},
		StreamOptions: &client.ChatStreamOptions{IncludeUsage: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var text strings.Builder
	for ck, err := range st.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ck.Text())
	}
	if text.String() != "Hello there friend" || st.Usage() == nil || st.Usage().TotalTokens != 12 {
		t.Fatalf("text %q usage %+v", text.String(), st.Usage())
	}
	// The usage chunk carries the gateway's summary, as the whole answer's switchyard member.
	if sum := st.Summary(); sum == nil || sum.Provider != "openai" || !sum.Costs.PriceKnown || sum.Costs.TotalTokensCost != res.Switchyard.Costs.TotalTokensCost ||
		len(sum.Attempts) != 1 || sum.Attempts[0].Outcome != "ok" {
		t.Fatalf("stream summary %+v, want the provider, the cost of the whole answer (%v) and one attempt", sum, res.Switchyard.Costs)
	}

	// Validation failures come back in OpenAI's envelope as an *Error naming the field.
	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini"})
	var ae *client.Error
	if !errors.Is(err, client.ErrInvalid) || !errors.As(err, &ae) || !strings.Contains(ae.Message, "messages") || ae.Kind != "invalid_request_error" {
		t.Fatalf("no messages: %#v", err)
	}
	// Stop and TopP reach the server (five stop sequences are one too many).
	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "x"}}, Stop: []string{"a", "b", "c", "d", "e"}})
	if !errors.As(err, &ae) || !strings.HasPrefix(ae.Message, "stop:") {
		t.Fatalf("five stop sequences: %v", err)
	}
	topP := 1.5
	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "x"}}, TopP: &topP})
	if !errors.As(err, &ae) || !strings.HasPrefix(ae.Message, "top_p:") {
		t.Fatalf("top_p 1.5: %v", err)
	}
}

func TestChatCompletionStreamCutAgainstServer(t *testing.T) {
	c, _ := realServer(t, completionsOptions(t))
	zero := 0
	st, err := c.ChatCompletionStream(context.Background(), &client.ChatCompletionRequest{
		Model:      "openai/gpt-cut",
		Messages:   []client.ChatCompletionMessage{{Role: "user", Content: "Greet me"}},
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
	var se *client.ChatStreamError
	if n != 1 || !errors.As(st.Err(), &se) {
		t.Fatalf("chunks %d err %v", n, st.Err())
	}
}
