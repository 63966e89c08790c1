package completions

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestStreamCutMidwayIsBilledWhatItSent: a stream that ends before its end after fragments
// were sent — the upstream connection cut, an error event from the upstream, the caller
// gone (its context cancelled, or the stream closed) — is billed as its provider bills it:
// the prompt plus the output streamed so far, counted with the tokenizer when the upstream
// reported no usage. The charge reaches the key's budget and the ledger once, and the
// Observer's record (the spend log, the daily rollup and the metrics read it) carries the
// same usage and cost. A request the upstream rejected before any fragment costs nothing;
// after a fallback only the attempt whose fragments were sent is billed.
func TestStreamCutMidwayIsBilledWhatItSent(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.StreamIdleTimeout = 20 * time.Second })
	const answer = "one two three four five six"
	cut := &providers.Error{Provider: "a", Kind: providers.KindStreamBroken, Message: "connection reset by peer"}
	event := &providers.Error{Provider: "a", Kind: providers.KindOverloaded, Message: "server_error event mid-stream"}

	cases := []struct {
		name    string
		steps   []step
		models  []string
		outcome string
		// read is how many fragments the caller reads before it leaves (0: to the end);
		// leave cancels its context (else it closes the stream).
		read  int
		leave func(cancel context.CancelFunc, st *ResponseStream)
	}{
		{name: "upstream cut", steps: []step{{text: answer, breakAt: 2, breakErr: cut}}, models: []string{"a/priced"}, outcome: RequestStreamFailed},
		{name: "error event", steps: []step{{text: answer, breakAt: 3, breakErr: event}}, models: []string{"a/priced"}, outcome: RequestStreamFailed},
		{name: "client gone", steps: []step{{text: answer, stall: true, stallAt: 2}}, models: []string{"a/priced"}, outcome: RequestCancelled,
			read: 2, leave: func(cancel context.CancelFunc, _ *ResponseStream) { cancel() }},
		{name: "stream closed", steps: []step{{text: answer, stall: true, stallAt: 4}}, models: []string{"a/priced"}, outcome: RequestCancelled,
			read: 3, leave: func(_ context.CancelFunc, st *ResponseStream) { st.Close() }},
		{name: "cut after a fallback", steps: []step{{err: upstreamErr(providers.KindOverloaded, 503, 0)}}, models: []string{"a/priced", "b/priced"},
			outcome: RequestStreamFailed},
	}
	h.b.on("priced", step{text: answer, breakAt: 2, breakErr: cut})
	for _, c := range cases {
		h.a.on("priced", c.steps...)
		h.ledger.mu.Lock()
		h.ledger.entries = nil
		h.ledger.mu.Unlock()
		budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
		ctx, cancel := context.WithCancel(context.Background())
		req := userReq("Count to six", c.models...)
		req.MaxRetries = intp(0)
		st, err := h.g.Stream(ctx, Scope{Owner: "k", Budget: budget}, req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var sent []string
		if c.read == 0 {
			sent, err = drain(t, st)
		} else {
			for range c.read {
				ck, rerr := st.Recv()
				if rerr != nil {
					t.Fatalf("%s: fragment %d: %v", c.name, len(sent)+1, rerr)
				}
				sent = append(sent, ck.Text)
			}
			c.leave(cancel, st)
			_, err = st.Recv()
			st.Close()
		}
		cancel()
		if !errors.Is(err, ErrStreamFailed) || len(sent) == 0 {
			t.Fatalf("%s: %d fragments then %v, want fragments then a stream failure", c.name, len(sent), err)
		}
		model := st.Provider() + "/" + st.Model()
		want := wantEstimate(model, "Count to six", strings.Join(sent, ""))
		wantCost := fakePrices{}.Cost(model, want).TotalUSD
		if want.PromptTokens == 0 || want.CompletionTokens == 0 || wantCost <= 0 {
			t.Fatalf("%s: estimate %+v cost %v", c.name, want, wantCost)
		}
		used := budget.Used(context.Background())
		if used.Tokens != int64(want.PromptTokens+want.CompletionTokens) || math.Abs(used.CostUSD-wantCost) > 1e-12 || used.Calls != 1 || used.Answered != 0 {
			t.Errorf("%s: budget %+v, want %d tokens and $%v for one unanswered call", c.name, used, want.PromptTokens+want.CompletionTokens, wantCost)
		}
		if e := h.ledger.all(); len(e) != 1 || e[0].Model != model || e[0].Complete || !e[0].Estimated || e[0].Usage != want {
			t.Errorf("%s: ledger %+v, want one incomplete estimated entry of %s with %+v", c.name, e, model, want)
		}
		rec := obs.take(t)
		if rec.Outcome != c.outcome || rec.Model != model || !rec.UsageEstimated || rec.Usage.PromptTokens != want.PromptTokens ||
			rec.Usage.CompletionTokens != want.CompletionTokens || math.Abs(rec.Usage.Costs.Spent()-wantCost) > 1e-12 {
			t.Errorf("%s: record outcome %q model %s usage %+v estimated %v, want %q %s %+v at $%v", c.name, rec.Outcome, rec.Model,
				rec.Usage, rec.UsageEstimated, c.outcome, model, want, wantCost)
		}
		for _, a := range rec.Attempts[:len(rec.Attempts)-1] {
			if a.Usage != nil { // the rejected attempt before the fallback billed nothing
				t.Errorf("%s: attempt %s billed %+v", c.name, a.Model, a.Usage)
			}
		}
		// The cut stream's place in the budget's spend gate (MaxCostUSD keeps one) was
		// given back when it ended: none is held for the budget.
		h.g.spend.mu.Lock()
		gate := h.g.spend.m[gateKey(budget)]
		h.g.spend.mu.Unlock()
		if gate != nil {
			t.Errorf("%s: the budget's spend gate still holds %d requests in flight", c.name, gate.inflight)
		}
	}

	// Rejected before any fragment: nothing was sent, the provider billed nothing.
	h.a.on("priced", step{err: upstreamErr(providers.KindBadRequest, 400, 0)})
	h.ledger.mu.Lock()
	h.ledger.entries = nil
	h.ledger.mu.Unlock()
	budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
	req := userReq("Count to six", "a/priced")
	req.MaxRetries = intp(0)
	if _, err := h.g.Stream(context.Background(), Scope{Owner: "k", Budget: budget}, req); err == nil {
		t.Fatal("a rejected stream started")
	}
	if used := budget.Used(context.Background()); used.Tokens != 0 || used.CostUSD != 0 {
		t.Errorf("rejected before the first fragment: budget %+v, want nothing spent", used)
	}
	if e := h.ledger.all(); len(e) != 0 {
		t.Errorf("rejected before the first fragment: ledger %+v", e)
	}
	if rec := obs.take(t); rec.Usage.PromptTokens != 0 || rec.Usage.CompletionTokens != 0 || rec.Usage.Costs.Spent() != 0 {
		t.Errorf("rejected before the first fragment: record usage %+v", rec.Usage)
	}
}

// TestContinuedStreamCutIsBilledBothParts: a stream broken midway, continued on another
// model that breaks in turn, is billed both upstreams' parts; the Observer's record
// carries their sum — what the key's budget and the ledger were charged — and each
// attempt its own share.
func TestContinuedStreamCutIsBilledBothParts(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs; o.StreamIdleTimeout = 20 * time.Second })
	h.g.opts.Providers = fakeRegistry{"a": h.a, "b": s8Prefill{h.b}}
	cut := &providers.Error{Kind: providers.KindStreamBroken, Message: "connection reset by peer"}
	h.a.on("priced", step{text: "one two three four", breakAt: 2, breakErr: cut})
	h.b.on("priced", step{text: "three four five six", breakAt: 2, breakErr: cut})
	budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
	st, err := h.g.Stream(context.Background(), Scope{Owner: "k", Budget: budget}, userReq("Count to six", "a/priced", "b/priced"))
	if err != nil {
		t.Fatal(err)
	}
	sent, err := drain(t, st)
	if !errors.Is(err, ErrStreamFailed) || len(sent) != 4 {
		t.Fatalf("%q then %v, want four fragments (two of each model) then a stream failure", sent, err)
	}
	rec := obs.take(t)
	if len(rec.Attempts) != 2 || rec.Attempts[1].ContinuedFrom == nil {
		t.Fatalf("attempts %+v, want the broken one and its continuation", rec.Attempts)
	}
	var sum Usage
	for _, a := range rec.Attempts {
		if a.Usage == nil || a.Usage.PromptTokens == 0 || a.Usage.CompletionTokens == 0 || a.Usage.Costs.Spent() <= 0 || !a.Estimated {
			t.Fatalf("attempt %s usage %+v estimated %v, want its own estimated share", a.Model, a.Usage, a.Estimated)
		}
		sum = addUsage(sum, *a.Usage)
	}
	used := budget.Used(context.Background())
	if rec.Usage.PromptTokens != sum.PromptTokens || rec.Usage.CompletionTokens != sum.CompletionTokens || math.Abs(rec.Usage.Costs.Spent()-sum.Costs.Spent()) > 1e-12 ||
		!rec.UsageEstimated || used.Tokens != int64(sum.PromptTokens+sum.CompletionTokens) || math.Abs(used.CostUSD-sum.Costs.Spent()) > 1e-12 {
		t.Errorf("record usage %+v (estimated %v), budget %+v; want both parts: %+v", rec.Usage, rec.UsageEstimated, used, sum)
	}
	if e := h.ledger.all(); len(e) != 2 {
		t.Errorf("ledger %+v, want an entry per part", e)
	}
}

// TestFilteredRequestRecordCarriesItsCharge: a request a provider's content filter blocked
// is billed (the usage the upstream reported beside the refusal, else the prompt
// estimated); its record carries that same charge, streamed or not, so that the spend log
// and the daily spend count what the key's budget was charged.
func TestFilteredRequestRecordCarriesItsCharge(t *testing.T) {
	obs := &recordingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs })
	for _, stream := range []bool{false, true} {
		for _, reported := range []*providers.Usage{{PromptTokens: 9, CompletionTokens: 4}, nil} {
			h.a.on("priced", step{err: &providers.Error{Provider: "a", Model: "priced", Kind: providers.KindContentFilter, StatusCode: 400,
				Message: "filtered", Usage: reported}})
			budget := NewBudget(BudgetLimits{MaxCostUSD: 1})
			req := userReq("Say something awful", "a/priced")
			req.MaxRetries = intp(0)
			var err error
			if stream {
				_, err = h.g.Stream(context.Background(), Scope{Owner: "k", Budget: budget}, req)
			} else {
				_, err = h.g.Complete(context.Background(), Scope{Owner: "k", Budget: budget}, req)
			}
			var cf *ContentFilterError
			if !errors.As(err, &cf) {
				t.Fatalf("stream %v: err = %v, want a content filter refusal", stream, err)
			}
			used := budget.Used(context.Background())
			rec := obs.take(t)
			if used.Tokens == 0 || used.CostUSD <= 0 || rec.Outcome != RequestFiltered ||
				int64(rec.Usage.PromptTokens+rec.Usage.CompletionTokens) != used.Tokens || math.Abs(rec.Usage.Costs.Spent()-used.CostUSD) > 1e-12 ||
				rec.UsageEstimated != (reported == nil) {
				t.Errorf("stream %v, reported %v: budget charged %d tokens $%v; record %q usage %+v estimated %v", stream, reported,
					used.Tokens, used.CostUSD, rec.Outcome, rec.Usage, rec.UsageEstimated)
			}
		}
	}
}
