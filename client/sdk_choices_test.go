package client_test

import (
	"context"
	"errors"
	"fmt"
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
// n above 1 is not streamed, and n above 16 is refused, both naming n.
func TestChoicesWithTheGoSDK(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		k := calls
		mu.Unlock()
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
	var apiErr *openai.Error
	st := c.Chat.Completions.NewStreaming(ctx, params)
	for st.Next() {
	}
	if err := st.Err(); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" {
		t.Errorf("streamed n 3: %v", err)
	}
	params.N = openai.Int(17)
	if _, err := c.Chat.Completions.New(ctx, params); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" {
		t.Errorf("n 17: %v", err)
	}
}
