package completions

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store/memstore"
)

// Usage is never silently zero: an upstream that reports no usage has its tokens counted
// locally, flagged as estimated everywhere the usage goes.

// wantEstimate is the local count of the harness's one-message request and answer.
func wantEstimate(model, question, answer string) providers.Usage {
	return providers.EstimateUsage(model, &providers.Request{Messages: []providers.Message{{Role: "user", Content: question}}},
		&providers.Response{Text: answer})
}

func TestCompleteWithoutUpstreamUsageIsEstimated(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "Paris is the capital of France."})
	resp, err := h.g.Complete(context.Background(), Scope{Owner: "k"}, userReq("What is the capital of France?", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	want := wantEstimate("a/priced", "What is the capital of France?", "Paris is the capital of France.")
	u := resp.Usage
	if u.PromptTokens != want.PromptTokens || u.CompletionTokens != want.CompletionTokens || u.PromptTokens == 0 || u.CompletionTokens == 0 ||
		u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Fatalf("usage %+v, want the local count %+v", u, want)
	}
	if !resp.UsageEstimated || !resp.Attempts[0].Estimated {
		t.Fatalf("usage not flagged estimated: %v, attempts %+v", resp.UsageEstimated, resp.Attempts)
	}
	if !u.Costs.PriceKnown || u.Costs.TotalTokensCost <= 0 || u.Costs.InputTokensCost <= 0 || u.Costs.OutputTokensCost <= 0 {
		t.Fatalf("costs %+v, want a price from the estimate", u.Costs)
	}
	e := h.ledger.all()
	if len(e) != 1 || !e[0].Estimated || e[0].Usage.PromptTokens != u.PromptTokens || e[0].Cost.TotalTokensCost != u.Costs.TotalTokensCost {
		t.Fatalf("ledger %+v", e)
	}

	// The OpenAI-compatible rendering carries the flag inside usage; the native JSON at the top.
	b, _ := json.Marshal(NewOpenAIChatCompletion(resp, time.Now()))
	if !strings.Contains(string(b), `"estimated":true`) {
		t.Fatalf("chat.completion lacks usage.estimated: %s", b)
	}
	b, _ = json.Marshal(resp)
	if !strings.Contains(string(b), `"usage_estimated":true`) {
		t.Fatalf("native response lacks usage_estimated: %s", b)
	}
}

func TestReportedUsageIsNotEstimated(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "Paris.", usage: providers.Usage{PromptTokens: 20, CompletionTokens: 3}})
	for _, stream := range []bool{false, true} {
		var resp *Response
		if stream {
			st, err := h.g.Stream(context.Background(), Scope{}, userReq("Capital of France?", "a/priced"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drain(t, st); err != nil {
				t.Fatal(err)
			}
			resp = st.Response()
		} else {
			var err error
			if resp, err = h.g.Complete(context.Background(), Scope{}, userReq("Capital of France?", "a/priced")); err != nil {
				t.Fatal(err)
			}
		}
		if resp.Usage.PromptTokens != 20 || resp.Usage.CompletionTokens != 3 || resp.UsageEstimated || resp.Attempts[0].Estimated {
			t.Fatalf("stream %v: usage %+v estimated %v", stream, resp.Usage, resp.UsageEstimated)
		}
		b, _ := json.Marshal(NewOpenAIChatCompletion(resp, time.Now()))
		if strings.Contains(string(b), `estimated`) {
			t.Fatalf("stream %v: reported usage flagged: %s", stream, b)
		}
	}
	for _, e := range h.ledger.all() {
		if e.Estimated {
			t.Fatalf("ledger entry flagged: %+v", e)
		}
	}
}

func TestStreamWithoutUpstreamUsageIsEstimated(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "The answer is 42"})
	st, err := h.g.Stream(context.Background(), Scope{}, userReq("Question?", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := WriteOpenAIStream(rec, st, true); err != nil {
		t.Fatal(err)
	}
	resp := st.Response()
	want := wantEstimate("a/priced", "Question?", "The answer is 42")
	if resp.Usage.PromptTokens != want.PromptTokens || resp.Usage.CompletionTokens != want.CompletionTokens || !resp.UsageEstimated ||
		resp.Usage.Costs.TotalTokensCost <= 0 {
		t.Fatalf("usage %+v estimated %v, want %+v", resp.Usage, resp.UsageEstimated, want)
	}
	var usage *OpenAIUsage
	for _, ev := range parseSSE(t, rec.Body.String()) {
		var ck OpenAIChunk
		if json.Unmarshal([]byte(ev.data), &ck) == nil && ck.Usage != nil {
			usage = ck.Usage
		}
	}
	if usage == nil || !usage.Estimated || usage.PromptTokens != want.PromptTokens || usage.CompletionTokens != want.CompletionTokens {
		t.Fatalf("usage chunk %+v", usage)
	}
	if e := h.ledger.all(); len(e) != 1 || !e[0].Estimated || !e[0].Complete || e[0].Cost.TotalTokensCost <= 0 {
		t.Fatalf("ledger %+v", e)
	}
}

func TestBrokenStreamWithoutUsageIsAccountedEstimated(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("priced", step{text: "one two three four", breakAt: 2, breakErr: &providers.Error{Kind: providers.KindStreamBroken, Message: "cut"}})
	st, err := h.g.Stream(context.Background(), Scope{}, userReq("Count", "a/priced"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drain(t, st); err == nil {
		t.Fatal("the broken stream ended well")
	}
	want := wantEstimate("a/priced", "Count", "one two")
	e := h.ledger.all()
	if len(e) != 1 || e[0].Complete || !e[0].Estimated || e[0].Usage != want || e[0].Cost.TotalTokensCost <= 0 {
		t.Fatalf("ledger %+v, want %+v", e, want)
	}
}

// answerNoUsage replies properly but, like some OpenAI-compatible servers, without usage.
func answerNoUsage(text string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body upstreamRequest) {
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`,
				body.Model, text)
			return
		}
		streamWords(w, body, words(text))
		writeEvent(w, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		writeEvent(w, "[DONE]")
	}
}

// TestUpstreamWithoutUsageOverHTTP runs the OpenAI adapter against a server that reports no
// usage, priced by the real catalogue: the tokens are OpenAI's own count for gpt-4o-mini.
func TestUpstreamWithoutUsageOverHTTP(t *testing.T) {
	up := newScriptedUpstream(t)
	adapter := providers.NewOpenAI(providers.Config{Name: "openai", BaseURL: up.srv.URL + "/v1", APIKey: "sk-test", IdleTimeout: 5 * time.Second})
	ledger := &recordingLedger{}
	g, err := New(Options{Providers: fakeRegistry{"openai": adapter}, Prices: providers.DefaultCatalog(), Store: memstore.New(), Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	const answer = "Paris is the capital of France."
	up.on("gpt-4o-mini", answerNoUsage(answer))
	want := wantEstimate("openai/gpt-4o-mini", "What is the capital of France?", answer)
	if want.CompletionTokens != 7 { // o200k_base: "Paris| is| the| capital| of| France|."
		t.Fatalf("completion tokens %d, want 7", want.CompletionTokens)
	}
	for _, stream := range []bool{false, true} {
		req := userReq("What is the capital of France?", "openai/gpt-4o-mini")
		var resp *Response
		if stream {
			st, err := g.Stream(context.Background(), Scope{}, req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drain(t, st); err != nil {
				t.Fatal(err)
			}
			resp = st.Response()
		} else if resp, err = g.Complete(context.Background(), Scope{}, req); err != nil {
			t.Fatal(err)
		}
		u := resp.Usage
		if u.PromptTokens != want.PromptTokens || u.CompletionTokens != want.CompletionTokens || !resp.UsageEstimated ||
			!u.Costs.PriceKnown || u.Costs.TotalTokensCost <= 0 {
			t.Fatalf("stream %v: usage %+v estimated %v, want %+v", stream, u, resp.UsageEstimated, want)
		}
	}
	for _, e := range ledger.all() {
		if !e.Estimated || e.Cost.TotalTokensCost <= 0 {
			t.Fatalf("ledger entry %+v", e)
		}
	}
	if n := len(ledger.all()); n != 2 {
		t.Fatalf("%d ledger entries", n)
	}
}
