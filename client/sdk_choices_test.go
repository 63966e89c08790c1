package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
)

// TestChoicesWithTheGoSDK: n choices from a model whose API has no n (Claude): the gateway
// answers n requests at once and the SDK gets n choices, in order, with the usage summed;
// streamed, the chunks of the n choices interleave, each with its index, and the SDK's
// accumulator gathers n choices; n above 16 is refused, naming n.
func TestChoicesWithTheGoSDK(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		k := calls
		mu.Unlock()
		if body, _ := io.ReadAll(r.Body); strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				fmt.Sprintf(`{"type":"message_start","message":{"id":"m%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}`, k),
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"answer "}}`,
				fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"%d"}}`, k),
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`,
				`{"type":"message_stop"}`,
			} {
				var typ struct{ Type string }
				json.Unmarshal([]byte(ev), &typ)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"m%d","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"answer %d"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":3}}`, k, k)
	}))
	t.Cleanup(claude.Close)
	_, base := realServerURL(t, envGateway(t, map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": claude.URL}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "anthropic/claude-sonnet-4-5", N: openai.Int(3),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Pick a number.")}}
	res, err := c.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, ch := range res.Choices {
		if int(ch.Index) != i || !strings.HasPrefix(ch.Message.Content, "answer ") || ch.FinishReason != "stop" {
			t.Errorf("choice %d: %+v", i, ch)
		}
		seen[ch.Message.Content] = true
	}
	if len(res.Choices) != 3 || len(seen) != 3 || res.Usage.PromptTokens != 30 || res.Usage.CompletionTokens != 9 || calls != 3 {
		t.Errorf("%d choices (%d distinct), usage %+v, %d upstream calls", len(res.Choices), len(seen), res.Usage, calls)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := c.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		chunk := st.Current()
		if len(chunk.Choices) > 1 {
			t.Errorf("a chunk with %d choices", len(chunk.Choices))
		}
		acc.AddChunk(chunk)
	}
	if err := st.Err(); err != nil {
		t.Fatalf("streamed n 3: %v", err)
	}
	seen = map[string]bool{}
	for i, ch := range acc.Choices {
		if int(ch.Index) != i || !strings.HasPrefix(ch.Message.Content, "answer ") || ch.FinishReason != "stop" || ch.Message.Role != "assistant" {
			t.Errorf("streamed choice %d: %+v", i, ch)
		}
		seen[ch.Message.Content] = true
	}
	if len(acc.Choices) != 3 || len(seen) != 3 || acc.Usage.PromptTokens != 30 || acc.Usage.CompletionTokens != 9 || calls != 6 {
		t.Errorf("streamed: %d choices (%d distinct), usage %+v, %d upstream calls", len(acc.Choices), len(seen), acc.Usage, calls)
	}
	var apiErr *openai.Error
	params.N = openai.Int(17)
	if _, err := c.Chat.Completions.New(ctx, params); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" {
		t.Errorf("n 17: %v", err)
	}
}
