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

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
)

// TestOfficialGoSDKLegacyCompletions: the official Go SDK's Completions (the legacy
// /v1/completions that autocomplete tools use) reach a chat model through the gateway,
// whole and streamed.
func TestOfficialGoSDKLegacyCompletions(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		answer := "    return a + b"
		if len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content != "def add(a, b):\n" {
			answer = fmt.Sprintf("unexpected messages %+v", req.Messages)
		}
		usage := `{"prompt_tokens":6,"completion_tokens":5,"total_tokens":11}`
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			a, _ := json.Marshal(answer)
			fmt.Fprintf(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":%s}`, a, usage)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range []string{answer[:8], answer[8:]} {
			a, _ := json.Marshal(p)
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", a)
		}
		fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":%s}\n\ndata: [DONE]\n\n", usage)
	}))
	defer up.Close()
	_, base := realServerURL(t, envGateway(t, map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.URL}))
	ctx := context.Background()
	sdk := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.CompletionNewParams{Model: openai.CompletionNewParamsModel("openai/gpt-4o-mini"),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("def add(a, b):\n")}, MaxTokens: openai.Int(32)}
	c, err := sdk.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Object != "text_completion" || len(c.Choices) != 1 || c.Choices[0].Text != "    return a + b" || c.Choices[0].FinishReason != "stop" || c.Usage.TotalTokens != 11 {
		t.Fatalf("completion %+v", c)
	}
	st := sdk.Completions.NewStreaming(ctx, params)
	var text strings.Builder
	for st.Next() {
		if ch := st.Current().Choices; len(ch) > 0 {
			text.WriteString(ch[0].Text)
		}
	}
	if err := st.Err(); err != nil || text.String() != "    return a + b" {
		t.Fatalf("streamed %q: %v", text.String(), err)
	}
	// n streamed choices: each chunk's choice says its index.
	params.N = openai.Int(2)
	st = sdk.Completions.NewStreaming(ctx, params)
	byIndex := map[int64]string{}
	for st.Next() {
		for _, ch := range st.Current().Choices {
			byIndex[ch.Index] += ch.Text
		}
	}
	if err := st.Err(); err != nil || len(byIndex) != 2 || byIndex[0] != "    return a + b" || byIndex[1] != "    return a + b" {
		t.Fatalf("streamed n 2: %v: %v", byIndex, err)
	}
	_, err = sdk.Completions.New(ctx, openai.CompletionNewParams{Model: openai.CompletionNewParamsModel("openai/gpt-4o-mini"),
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("x")}, Suffix: openai.String("}")})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "suffix" {
		t.Fatalf("suffix: %v", err)
	}
}
