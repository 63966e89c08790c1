package completions

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestAnthropicStreamBillsMessageDeltaUsage: Claude's message_start reports the prompt
// as counted at the stream's start, and message_delta the whole answer's usage, input and
// cache counts included (cumulative, and they may differ: a cache read found later, a
// count corrected). The answer's usage, billed and reported, is message_delta's, not
// marked estimated; message_start's counts only stand where message_delta leaves a count
// out.
func TestAnthropicStreamBillsMessageDeltaUsage(t *testing.T) {
	for _, c := range []struct {
		name, delta string
		want        providers.Usage
	}{
		{"delta with the whole usage",
			`{"input_tokens":50,"cache_read_input_tokens":120,"cache_creation_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"output_tokens":9}`,
			providers.Usage{PromptTokens: 170, CompletionTokens: 9, CachedTokens: 120}},
		{"delta with output only", `{"output_tokens":9}`,
			providers.Usage{PromptTokens: 42 + 100 + 20, CompletionTokens: 9, CachedTokens: 100, CacheCreationTokens: 20, CacheCreation1hTokens: 20}},
	} {
		claude := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, ev := range []string{
				`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":42,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"cache_creation":{"ephemeral_1h_input_tokens":20},"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi there"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":` + c.delta + `}`,
				`{"type":"message_stop"}`,
			} {
				var typ struct{ Type string }
				json.Unmarshal([]byte(ev), &typ)
				w.Write([]byte("event: " + typ.Type + "\ndata: " + ev + "\n\n"))
			}
		}))
		reg := fakeRegistry{"anthropic": providers.NewAnthropic(providers.Config{BaseURL: claude.URL, APIKey: "k", HTTPClient: claude.Client()})}
		g, err := New(Options{Providers: reg, Prices: fakePrices{}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.Stream(context.Background(), Scope{}, userReq("hi", "anthropic/claude-sonnet-4-5"))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		resp := st.Response()
		st.Close()
		claude.Close()
		got := providers.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens, CachedTokens: resp.Usage.CachedTokens,
			CacheCreationTokens: resp.Usage.CacheCreationTokens, CacheCreation1hTokens: resp.Usage.CacheCreation1hTokens}
		if got != c.want || resp.UsageEstimated {
			t.Errorf("%s: usage %+v (estimated %v), want %+v, message_delta's", c.name, got, resp.UsageEstimated, c.want)
		}
	}
}

// claudeEvents serves each event of events as Claude's stream does (its type as the event
// name), then ends the body.
func claudeEvents(events ...string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			var typ struct{ Type string }
			json.Unmarshal([]byte(ev), &typ)
			w.Write([]byte("event: " + typ.Type + "\ndata: " + ev + "\n\n"))
		}
	}))
}

// TestAnthropicStreamCutBeforeMessageDelta: a Claude stream cut after it sent text but
// before message_delta is billed the prompt as message_start counted it (Claude's own
// count, cache reads included), only the answer streamed so far counted locally, the
// whole marked estimated.
func TestAnthropicStreamCutBeforeMessageDelta(t *testing.T) {
	claude := claudeEvents(
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":42,"cache_read_input_tokens":100,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi there, how are"}}`)
	defer claude.Close()
	obs := &recordingObserver{}
	reg := fakeRegistry{"anthropic": providers.NewAnthropic(providers.Config{BaseURL: claude.URL, APIKey: "k", HTTPClient: claude.Client()})}
	g, err := New(Options{Providers: reg, Prices: fakePrices{}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	req := userReq("hi", "anthropic/claude-sonnet-4-5")
	req.MaxRetries = intp(0)
	st, err := g.Stream(context.Background(), Scope{}, req)
	if err != nil {
		t.Fatal(err)
	}
	var rerr error
	for rerr == nil {
		_, rerr = st.Recv()
	}
	st.Close()
	if !errors.Is(rerr, ErrStreamFailed) {
		t.Fatalf("stream ended with %v, want a stream failure", rerr)
	}
	r := obs.take(t)
	if r.Outcome != RequestStreamFailed || r.Usage.PromptTokens != 142 || r.Usage.CachedTokens != 100 || r.Usage.CompletionTokens == 0 || !r.UsageEstimated {
		t.Errorf("recorded %s %+v (estimated %v), want message_start's 142 prompt tokens (100 cached) and the text's estimate, estimated",
			r.Outcome, r.Usage, r.UsageEstimated)
	}
}

// TestStreamFailingBeforeItsFirstFragmentIsNotBilled: a stream the upstream accepted (200
// and its headers, even Claude's message_start counting the prompt) that fails before its
// first fragment (an overloaded error event, the body ended) is not billed, as LiteLLM
// bills none of it and providers do not bill a failed request: the gateway falls over to
// the next model and bills that answer alone; with none left the request is an unbilled
// error.
func TestStreamFailingBeforeItsFirstFragmentIsNotBilled(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":42,"output_tokens":1}}}`
	overloaded := claudeEvents(start, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	defer overloaded.Close()
	ended := claudeEvents(start)
	defer ended.Close()
	answers := claudeEvents(
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"claude-y","content":[],"usage":{"input_tokens":7,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}`,
		`{"type":"message_stop"}`)
	defer answers.Close()
	for name, up := range map[string]*httptest.Server{"overloaded event": overloaded, "body ended": ended} {
		obs := &recordingObserver{}
		reg := fakeRegistry{
			"first": providers.NewAnthropic(providers.Config{Name: "first", BaseURL: up.URL, APIKey: "k", HTTPClient: up.Client()}),
			"next":  providers.NewAnthropic(providers.Config{Name: "next", BaseURL: answers.URL, APIKey: "k", HTTPClient: answers.Client()}),
		}
		g, err := New(Options{Providers: reg, Prices: fakePrices{}, Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
		req := userReq("hi", "first/priced", "next/priced")
		req.MaxRetries = intp(0)
		st, err := g.Stream(context.Background(), Scope{Budget: budget}, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for {
			if _, err := st.Recv(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		st.Close()
		r := obs.take(t)
		if r.Outcome != RequestOK || r.Model != "next/priced" || r.Usage.PromptTokens != 7 || r.Usage.CompletionTokens != 3 || r.UsageEstimated {
			t.Errorf("%s: recorded %s by %s/%s %+v (estimated %v), want the fallback's 7+3 alone", name, r.Outcome, r.Provider, r.Model, r.Usage, r.UsageEstimated)
		}
		if len(r.Attempts) != 2 || r.Attempts[0].Usage != nil {
			t.Errorf("%s: attempts %+v, want the failed first one unbilled", name, r.Attempts)
		}
		const fallbackCost = 7e-6 + 3*2e-6
		if spent := budget.Used(context.Background()).CostUSD; math.Abs(spent-fallbackCost) > 1e-12 {
			t.Errorf("%s: the budget was charged %v, want the fallback's %v alone", name, spent, fallbackCost)
		}

		// No model left: an unbilled error.
		req = userReq("hi", "first/priced")
		req.MaxRetries = intp(0)
		if _, err := g.Stream(context.Background(), Scope{Budget: budget}, req); err == nil {
			t.Fatalf("%s alone: the stream started", name)
		}
		if r := obs.take(t); r.Usage.PromptTokens != 0 || r.Usage.Costs.Spent() != 0 || r.Accounts != nil {
			t.Errorf("%s alone: recorded %+v charged to %v, want nothing billed", name, r.Usage, r.Accounts)
		}
		if spent := budget.Used(context.Background()).CostUSD; math.Abs(spent-fallbackCost) > 1e-12 {
			t.Errorf("%s alone: the budget stands at %v, want the earlier %v, nothing more", name, spent, fallbackCost)
		}
	}
}
