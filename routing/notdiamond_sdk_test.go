package routing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/routing"
)

// The bodies Not Diamond's official SDKs send (notdiamond 1.1.4 on npm always adds
// timeout; the Python SDK always adds metric, max_model_depth and hash_content) must be
// accepted, and the fields they add must mean what they mean there.
func TestNotDiamondSDKBodies(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	for name, body := range map[string]string{
		"typescript": `{"messages":[{"role":"user","content":"Write a merge sort in Python."}],
			"llm_providers":[{"provider":"openai","model":"gpt-4o","context_length":128000,"input_price":2.5,"output_price":10,"latency":0.4,"is_custom":false},
				{"provider":"anthropic","model":"claude-3-5-sonnet-20240620"}],
			"tradeoff":"cost","timeout":5,"default":"openai/gpt-4o","previous_session":null}`,
		"python": `{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o"},
			{"provider":"openai","model":"gpt-4o-mini"}],"metric":"accuracy","max_model_depth":1,"hash_content":false}`,
		"typescript default as index and response_model": `{"messages":[{"role":"user","content":"hi"}],
			"llm_providers":[{"provider":"openai","model":"gpt-4o"}],"timeout":5,"default":0,"response_model":{"type":"object"}}`,
	} {
		req, err := routing.ParseRequest([]byte(body))
		if err != nil {
			t.Fatalf("%s SDK body refused: %v", name, err)
		}
		if _, err := sel.Select(context.Background(), "o", req); err != nil {
			t.Fatalf("%s SDK body: %v", name, err)
		}
	}
}

func TestNotDiamondFieldsRefusedWhenWrong(t *testing.T) {
	for _, tc := range []struct{ body, field string }{
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"metric":"latency"}`, "metric"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"timeout":0}`, "timeout"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"timeout":"5"}`, "timeout"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"default":"openai/gpt-4o-mini"}`, "default"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"default":1}`, "default"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"response_model":"x"}`, "response_model"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o","input_price":-1}]}`, "llm_providers[0].input_price"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o","context_length":0}]}`, "llm_providers[0].context_length"},
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":[{"provider":"openai","model":"gpt-4o","is_custom":"yes"}]}`, "llm_providers[0].is_custom"},
		// still strict about fields nobody sends
		{`{"messages":[{"role":"user","content":"hi"}],"llm_providers":["openai/gpt-4o"],"temperature":1}`, "temperature"},
	} {
		_, err := routing.ParseRequest([]byte(tc.body))
		var ve *routing.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("%s: got %v, want a validation error naming %s", tc.body, err, tc.field)
		}
	}
}

// input_price and output_price are the candidate's price when price is absent: the cost
// tradeoff sees them.
func TestInputOutputPricesDriveCostTradeoff(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	body := `{"messages":[{"role":"user","content":"hi"}],"tradeoff":"cost","tradeoff_tolerance":0.05,
		"llm_providers":[{"provider":"acme","model":"a","attributes":{"quality":0.8},"input_price":10,"output_price":30},
			{"provider":"acme","model":"b","attributes":{"quality":0.8},"input_price":1,"output_price":3}]}`
	req, err := routing.ParseRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustSelect(t, sel, "o", req).LLMLabel; got != "acme/b" {
		t.Fatalf("cost tradeoff picked %s, want acme/b (input/output prices 1/3 against 10/30)", got)
	}
	// the same with the prices swapped: the prices decide, not the order
	body = strings.NewReplacer(`"input_price":10,"output_price":30`, `"input_price":1,"output_price":1`,
		`"input_price":1,"output_price":3`, `"input_price":5`).Replace(body)
	if req, err = routing.ParseRequest([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if got := mustSelect(t, sel, "o", req).LLMLabel; got != "acme/a" {
		t.Fatalf("cost tradeoff picked %s, want acme/a (price 1 against 5)", got)
	}
}

func TestTimeoutAnswersDefault(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	tiny := 1e-9
	req := &routing.Request{Messages: userMsg("Prove that there are infinitely many primes."),
		LLMProviders: names("openai/gpt-4o-mini", "openai/gpt-4o"), Timeout: &tiny,
		Default: &routing.DefaultChoice{Candidate: &routing.Candidate{Name: "openai/gpt-4o-mini"}}}
	resp := mustSelect(t, sel, "o", req)
	if resp.LLMLabel != "openai/gpt-4o-mini" || len(resp.Providers) != 1 || resp.Providers[0].ScoreSource != routing.SourceDefault {
		t.Fatalf("past its timeout the selection answered %+v, want the default alone with score_source default", resp)
	}
	req.Default = nil
	if _, err := sel.Select(context.Background(), "o", req); !errors.Is(err, routing.ErrTimeout) {
		t.Fatalf("past its timeout without a default: %v, want ErrTimeout", err)
	}
	// a generous timeout ranks as usual: the router, not the default, decides
	five := 5.0
	req.Timeout, req.Default = &five, &routing.DefaultChoice{Index: new(int)}
	resp = mustSelect(t, sel, "o", req)
	if resp.Providers[0].ScoreSource == routing.SourceDefault || len(resp.Providers) != 2 {
		t.Fatalf("within the timeout the answer is %+v, want both candidates ranked", resp)
	}
}

func TestContextLengthSkipsSmallWindows(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	long := strings.Repeat("word ", 4000) // 20,000 bytes: about 5,000 tokens
	small, big := 4096, 128000
	req := &routing.Request{Messages: userMsg(long), LLMProviders: []routing.Candidate{
		{Name: "acme/small", ContextLength: &small, Attributes: map[string]any{"quality": 0.99}},
		{Name: "acme/big", ContextLength: &big, Attributes: map[string]any{"quality": 0.5}},
		{Name: "acme/unknown-window", Attributes: map[string]any{"quality": 0.4}}}}
	resp := mustSelect(t, sel, "o", req)
	if got := labels(resp.Providers); strings.Join(got, ",") != "acme/big,acme/unknown-window" {
		t.Fatalf("ranked %v, want the 4,096-token candidate skipped for a ~5,000-token conversation", got)
	}
	// short conversations keep it
	req.Messages = userMsg("hi")
	if resp = mustSelect(t, sel, "o", req); resp.LLMLabel != "acme/small" {
		t.Fatalf("a short conversation picked %s, want acme/small", resp.LLMLabel)
	}
	req.Messages = userMsg(long)
	req.LLMProviders = req.LLMProviders[:1]
	var ve *routing.ValidationError
	if _, err := sel.Select(context.Background(), "o", req); !errors.As(err, &ve) || ve.Field != "llm_providers" {
		t.Fatalf("only too-small windows: %v, want a validation error naming llm_providers", err)
	}
}

// is_custom: the caller's own model is never matched by name to a measured model.
func TestIsCustomIsNotMatchedByName(t *testing.T) {
	sel, _ := newSelector(t, routing.Options{})
	req := &routing.Request{Messages: userMsg("hi"), LLMProviders: []routing.Candidate{
		{Name: "openai/gpt-4o", IsCustom: true}, {Name: "openai/gpt-4o-mini"}}}
	resp := mustSelect(t, sel, "o", req)
	for _, p := range resp.Providers {
		switch p.Provider + "/" + p.Model {
		case "openai/gpt-4o":
			if p.ScoreSource != routing.SourceUnknown {
				t.Errorf("custom openai/gpt-4o scored by %s, want unknown", p.ScoreSource)
			}
		case "openai/gpt-4o-mini":
			if p.ScoreSource != routing.SourceLearned {
				t.Errorf("openai/gpt-4o-mini scored by %s, want learned", p.ScoreSource)
			}
		}
	}
}
