package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"

	"github.com/switchyard-ai/switchyard/client"
	"github.com/switchyard-ai/switchyard/completions"
)

// TestOfficialGoSDKGuardrails: the official OpenAI Go SDK opts into a guardrail with the
// extra body field LiteLLM reads (option.WithJSONSet("guardrails", …)); a block is the
// SDK's *openai.Error, 400 with code guardrail_violation and param guardrails, and the
// upstream is not called; without the field the request is answered.
func TestOfficialGoSDKGuardrails(t *testing.T) {
	up := newToolUpstream(t)
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}
	_, base := realServerURL(t, envGatewayWith(t, env, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{{Name: "no-weather", Kind: completions.GuardrailBannedWords,
			Mode: completions.GuardrailPreCall, Words: []string{"weather"}}}
	}))
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testKey), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "openai/gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	_, err := c.Chat.Completions.New(context.Background(), params, option.WithJSONSet("guardrails", []string{"no-weather"}))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Code != "guardrail_violation" || apiErr.Param != "guardrails" ||
		!strings.Contains(apiErr.Message, `"no-weather"`) {
		t.Fatalf("blocked: %v", err)
	}
	up.mu.Lock()
	n := len(up.requests)
	up.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d upstream calls for a blocked request", n)
	}
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Errorf("not opted in: %v", err)
	}
}

// TestClientGuardrails: the Go client's Guardrails field opts in on the native and the
// chat completions routes; a block matches ErrGuardrailBlocked (and ErrInvalid).
func TestClientGuardrails(t *testing.T) {
	up := newToolUpstream(t)
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": up.srv.URL}
	c, _ := realServerURL(t, envGatewayWith(t, env, func(o *completions.Options) {
		o.Guardrails = []completions.GuardrailConfig{{Name: "no-weather", Kind: completions.GuardrailBannedWords,
			Mode: completions.GuardrailPreCall, Words: []string{"weather"}}}
	}))
	ctx := context.Background()
	_, err := c.Complete(ctx, &client.CompletionRequest{Models: []string{"openai/gpt-4o-mini"},
		Messages: []client.ChatMessage{client.TextMessage("user", "Weather in Paris?")}, Guardrails: []string{"no-weather"}})
	var ce *client.Error
	if !errors.Is(err, client.ErrGuardrailBlocked) || !errors.Is(err, client.ErrInvalid) || !errors.As(err, &ce) || !strings.Contains(ce.Message, "no-weather") {
		t.Errorf("native: %v", err)
	}
	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "Weather in Paris?"}}, Guardrails: []string{"no-weather"}})
	if !errors.Is(err, client.ErrGuardrailBlocked) {
		t.Errorf("chat: %v", err)
	}
	// Another 400 is not a guardrail's.
	_, err = c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "openai/gpt-4o-mini",
		Messages: []client.ChatCompletionMessage{{Role: "user", Content: "hi"}}, Guardrails: []string{"nope"}})
	if !errors.Is(err, client.ErrInvalid) || errors.Is(err, client.ErrGuardrailBlocked) {
		t.Errorf("unknown guardrail: %v", err)
	}
}
