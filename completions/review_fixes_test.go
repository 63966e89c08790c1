package completions

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// refusingFake refuses any request with tools.
type refusingFake struct{ *fakeProvider }

func (r refusingFake) Check(model string, req *providers.Request) error {
	if len(req.Tools) > 0 {
		return &providers.UnsupportedError{Provider: r.name, Field: "tools", Reason: "no tools here"}
	}
	return nil
}

// A model that cannot take the request does not count as a remaining model: the only one
// that can, its breaker open, is still tried as a probe (code review of the seventh session).
func TestUnfitModelDoesNotBlockTheProbe(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Breaker = BreakerOptions{Failures: 1, Cooldown: time.Hour}
	})
	c := refusingFake{newFake("c")}
	h.g.opts.Providers = fakeRegistry{"a": h.a, "b": h.b, "c": c}
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	ctx := context.Background()
	// open a/m1's breaker
	_, _ = h.g.Complete(ctx, Scope{}, &Request{Models: []string{"a/m1"}, MaxRetries: intp(0), Messages: []Message{TextMessage("user", "hi")}})
	h.a.on("m1", step{text: "ok"})
	// without the unfit model: a/m1 alone is probed
	resp, err := h.g.Complete(ctx, Scope{}, &Request{Models: []string{"a/m1"}, MaxRetries: intp(0), Messages: []Message{TextMessage("user", "hi")}})
	t.Logf("alone: resp=%v err=%v", resp != nil, err)
	tools := []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}
	req := &Request{Models: []string{"a/m1", "c/x"}, MaxRetries: intp(0), Tools: tools, Messages: []Message{TextMessage("user", "hi")}}
	// re-open breaker
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	_, _ = h.g.Complete(ctx, Scope{}, &Request{Models: []string{"a/m1"}, MaxRetries: intp(0), Messages: []Message{TextMessage("user", "hi")}})
	h.a.on("m1", step{text: "ok"})
	resp, err = h.g.Complete(ctx, Scope{}, req)
	var af *AllFailedError
	if errors.As(err, &af) {
		for _, a := range af.Attempts {
			t.Logf("attempt %+v", a)
		}
		t.Errorf("with an unfit later model: no call made at all: %v", err)
	} else {
		t.Logf("resp %v err %v", resp, err)
	}
}

// An error about a model names its entry in the request's list, not in the list a model
// group expanded it to.
func TestErrorIndexesBeforeGroupExpansion(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.ModelGroups = map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2", "a/m3"}}}
	})
	r := chatRequest(t, `{"model":"a/x","fallback_models":["g","nope/zzz"],"messages":[{"role":"user","content":"hi"}]}`)
	_, err := h.g.Complete(context.Background(), Scope{}, r)
	var ve *ValidationError
	if errors.As(err, &ve) {
		t.Logf("field %q: %v", ve.Field, err)
		if ve.Field != "fallback_models[1]" {
			t.Errorf("field %q, want fallback_models[1]", ve.Field)
		}
	} else {
		t.Fatalf("err %v", err)
	}
}

func anthropicReq(t *testing.T, body string) (*Request, error) {
	t.Helper()
	var m AnthropicMessagesRequest
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	c, err := m.ToChatRequest()
	if err != nil {
		return nil, err
	}
	return c.ToRequest()
}

// On /v1/messages a refusal of a block names that block, though tool results before it
// became tool messages (Gemini refusing an untyped image URL).
func TestMessagesErrorNamesTheBlockAfterToolResults(t *testing.T) {
	h, _ := geminiHarness(t)
	req, err := anthropicReq(t, `{"model":"google/gemini-2.5-flash","max_tokens":100,"messages":[
		{"role":"user","content":"run it"},
		{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"},{"type":"image","source":{"type":"url","url":"https://example.com/pic"}}]}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}]}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v", err)
	}
	t.Logf("field %q", ve.Field)
	if ve.Field != "messages[2].content[1].source" {
		t.Errorf("field %q, want messages[2].content[1].source (the image block)", ve.Field)
	}
}

// tool_choice errors name the Messages API's field.
func TestMessagesToolChoiceErrorField(t *testing.T) {
	_, err := anthropicReq(t, `{"model":"a/m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"g"}}`)
	if err == nil {
		h := newHarness(t, nil)
		req, _ := anthropicReq(t, `{"model":"a/m","max_tokens":100,"messages":[{"role":"user","content":"hi"}],
		"tools":[{"name":"f","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"g"}}`)
		_, err = h.g.Complete(context.Background(), Scope{}, req)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v", err)
	}
	t.Logf("field %q", ve.Field)
	if ve.Field != "tool_choice.name" {
		t.Errorf("field %q, want tool_choice.name", ve.Field)
	}
}

// A model that cannot take the request does not count as a remaining model: a 429 on the
// only one that can is retried.
func TestUnfitModelDoesNotBlockRetries(t *testing.T) {
	h := newHarness(t, nil)
	c := refusingFake{newFake("c")}
	h.g.opts.Providers = fakeRegistry{"a": h.a, "b": h.b, "c": c}
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindRateLimited, Message: "slow down"}}, step{text: "ok"})
	tools := []providers.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}
	mk := func(models ...string) *Request {
		return &Request{Models: models[:1], FallbackModels: models[1:], MaxRetries: intp(2), Tools: tools, Messages: []Message{TextMessage("user", "hi")}}
	}
	resp, err := h.g.Complete(context.Background(), Scope{}, mk("a/m1"))
	t.Logf("alone: %v %v", resp != nil, err)
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindRateLimited, Message: "slow down"}}, step{text: "ok"})
	h.a.calls = map[string]int{}
	resp, err = h.g.Complete(context.Background(), Scope{}, mk("a/m1", "c/x"))
	if err != nil {
		t.Errorf("with an unfit fallback: %v (alone it is retried and answers)", err)
	}
}

// A refused input_file given by file_url is named as such on /v1/responses.
func TestResponsesFileURLErrorField(t *testing.T) {
	var r ResponsesRequest
	if err := json.Unmarshal([]byte(`{"model":"o/gpt-4o","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"read"},{"type":"input_file","file_url":"https://example.com/a.pdf"}]}]}`), &r); err != nil {
		t.Fatal(err)
	}
	c, err := r.ToChatRequest()
	if err != nil {
		t.Fatal(err)
	}
	req, err := c.ToRequest()
	if err != nil {
		t.Fatal(err)
	}
	o, _ := providers.New(providers.FormatOpenAI, providers.Config{Name: "o", BaseURL: "http://127.0.0.1:1", APIKey: "k"})
	h := newHarness(t, nil)
	h.g.opts.Providers = fakeRegistry{"a": h.a, "o": o}
	_, err = h.g.Complete(context.Background(), Scope{}, req)
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v", err)
	}
	t.Logf("field %q", ve.Field)
	if ve.Field != "input[0].content[1].file_url" {
		t.Errorf("field %q, want input[0].content[1].file_url", ve.Field)
	}
}

// CountTokens holds a scoped key to its models, as Complete does.
func TestCountTokensHeldToTheKeysModels(t *testing.T) {
	h := newHarness(t, nil)
	b := NewBudget(BudgetLimits{AllowedModels: []string{"a/m1"}})
	n, err := h.g.CountTokens(context.Background(), Scope{Budget: b}, chatRequest(t, `{"model":"b/secret","messages":[{"role":"user","content":"hi"}]}`))
	t.Logf("n=%d err=%v", n, err)
	if err == nil {
		t.Errorf("a key allowed only a/m1 counted tokens for b/secret")
	}
}
