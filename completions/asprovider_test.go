package completions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
	"github.com/switchyard-ai/switchyard/store"
)

func TestResolverRunsThroughTheGateway(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: &providers.Error{Kind: providers.KindOverloaded}}, step{text: "<prompt>better</prompt>", usage: providers.Usage{PromptTokens: 30, CompletionTokens: 7}})
	r := Resolver{Gateway: h.g, Scope: Scope{Owner: "k1", Tag: "optimize:opt_1/proposer"}}
	p, model, err := r.Resolve("a/m")
	if err != nil || model != "a/m" {
		t.Fatalf("Resolve = %v %q %v", p, model, err)
	}
	temp := 0.7
	resp, err := p.Complete(context.Background(), &providers.Request{Model: model, Temperature: &temp,
		Messages: []providers.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "improve"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "<prompt>better</prompt>" || resp.Usage.PromptTokens != 30 || resp.Usage.CompletionTokens != 7 {
		t.Fatalf("response %+v", resp)
	}
	// The gateway retried the overloaded first attempt.
	if h.a.callCount("m") != 2 {
		t.Fatalf("upstream calls = %d, want 2 (one retry)", h.a.callCount("m"))
	}
	// The call is in the gateway's ledger under the scope's tag, and no conversation was kept.
	es := h.ledger.all()
	if len(es) != 1 || es[0].Tag != "optimize:opt_1/proposer" || es[0].Owner != "k1" || es[0].Usage.PromptTokens != 30 {
		t.Fatalf("ledger %+v", es)
	}
	if convs, _ := h.store.List(context.Background(), store.Conversations, store.ListOptions{}); len(convs) != 0 {
		t.Fatalf("%d conversations stored", len(convs))
	}

	// A failure keeps its kind for the caller's retry decisions.
	h.a.on("denied", step{err: &providers.Error{Kind: providers.KindAuth, Message: "bad key"}})
	_, err = p.Complete(context.Background(), &providers.Request{Model: "a/denied", Messages: []providers.Message{{Role: "user", Content: "x"}}})
	if providers.KindOf(err) != providers.KindAuth || !errors.Is(err, ErrAllFailed) {
		t.Fatalf("err = %v (kind %v)", err, providers.KindOf(err))
	}
	if _, _, err := r.Resolve("zzz/m"); err == nil {
		t.Fatal("unknown provider resolved")
	}
}

// TestResolverCallerDeadlineIsTheCallBudget: through the adapter, the caller's deadline
// replaces the gateway's per-attempt and request limits (the optimizer's
// llm_call_timeout_seconds may exceed the gateway's attempt timeout); without one the
// gateway's limits hold.
func TestResolverCallerDeadlineIsTheCallBudget(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AttemptTimeout, o.RequestTimeout = 30*time.Millisecond, 50*time.Millisecond })
	slow := step{delay: 200 * time.Millisecond, text: "late but fine"}
	h.a.on("m", slow, slow)
	p, model, err := Resolver{Gateway: h.g, Scope: Scope{Owner: "k"}}.Resolve("a/m")
	if err != nil {
		t.Fatal(err)
	}
	req := &providers.Request{Model: model, Messages: []providers.Message{{Role: "user", Content: "x"}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if resp, err := p.Complete(ctx, req); err != nil || resp.Text != "late but fine" {
		t.Fatalf("with a 5 s caller deadline: %v %v", resp, err)
	}
	if _, err := p.Complete(context.Background(), req); providers.KindOf(err) != providers.KindTimeout {
		t.Fatalf("without a caller deadline: err %v, want the gateway's timeout", err)
	}
}

// TestScopeCallTimeout: a scope's CallTimeout replaces the gateway's attempt and request
// limits for its requests (an optimization job's agent calls), both ways.
func TestScopeCallTimeout(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AttemptTimeout = 30 * time.Millisecond })
	slow := step{delay: 200 * time.Millisecond, text: "late but fine"}
	h.a.on("m", slow)
	req := userReq("x", "a/m")
	req.MaxRetries = intp(0)
	if resp, err := h.g.Complete(context.Background(), Scope{Owner: "k", CallTimeout: 5 * time.Second}, req); err != nil || resp.Text() != "late but fine" {
		t.Fatalf("scope call timeout 5 s: %v %v", resp, err)
	}
	h2 := newHarness(t, nil) // attempt timeout 2 s
	h2.a.on("m", slow)
	req = userReq("x", "a/m")
	req.MaxRetries = intp(0)
	if _, err := h2.g.Complete(context.Background(), Scope{Owner: "k", CallTimeout: 50 * time.Millisecond}, req); !errors.Is(err, ErrAllFailed) {
		t.Fatalf("scope call timeout 50 ms: err %v, want a timeout", err)
	}
}

// fakeLogprobsProvider is a provider that gives log probabilities: its answer "Yes" with
// one token's, and the Logprobs and TopLogprobs of the last request it got.
type fakeLogprobsProvider struct {
	asked bool
	top   int
}

func (f *fakeLogprobsProvider) Name() string { return "lp" }

func (f *fakeLogprobsProvider) SupportsLogprobs(string, *providers.Request) (bool, string) {
	return true, ""
}

func (f *fakeLogprobsProvider) Complete(_ context.Context, req *providers.Request) (*providers.Response, error) {
	f.asked, f.top = req.Logprobs, req.TopLogprobs
	resp := &providers.Response{Text: "Yes", Model: req.Model, FinishReason: "stop", Usage: providers.Usage{PromptTokens: 3, CompletionTokens: 1}}
	if req.Logprobs {
		resp.Logprobs = &providers.Logprobs{Content: []providers.TokenLogprob{{Token: "Yes", Logprob: -0.25,
			TopLogprobs: []providers.TopLogprob{{Token: "Yes", Logprob: -0.25}, {Token: "No", Logprob: -1.5}}[:req.TopLogprobs]}}}
	}
	return resp, nil
}

func (f *fakeLogprobsProvider) Stream(context.Context, *providers.Request) (providers.Stream, error) {
	return nil, &providers.Error{Kind: providers.KindBadRequest, Message: "no streams"}
}

// TestResolverPassesLogprobs: a library caller of the gateway as a provider (Resolver)
// that asks for log probabilities gets them, with the top alternatives it asked; one that
// does not gets none.
func TestResolverPassesLogprobs(t *testing.T) {
	up := &fakeLogprobsProvider{}
	g, err := New(Options{Providers: providers.NewRegistry(up)})
	if err != nil {
		t.Fatal(err)
	}
	p, model, err := Resolver{Gateway: g, Scope: Scope{Owner: "k"}}.Resolve("lp/m")
	if err != nil {
		t.Fatal(err)
	}
	msgs := []providers.Message{{Role: "user", Content: "yes?"}}
	resp, err := p.Complete(context.Background(), &providers.Request{Model: model, Messages: msgs, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !up.asked || up.top != 2 {
		t.Errorf("upstream asked logprobs %v top %d, want true 2", up.asked, up.top)
	}
	if resp.Logprobs == nil || len(resp.Logprobs.Content) != 1 || resp.Logprobs.Content[0].Token != "Yes" || len(resp.Logprobs.Content[0].TopLogprobs) != 2 {
		t.Fatalf("logprobs %+v, want Yes's with 2 alternatives", resp.Logprobs)
	}
	resp, err = p.Complete(context.Background(), &providers.Request{Model: model, Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if up.asked || resp.Logprobs != nil {
		t.Errorf("not asked: upstream asked %v, answer's logprobs %+v", up.asked, resp.Logprobs)
	}
}

// TestResolverPassesSingleToolCall: a library caller of the gateway as a provider that reads
// one tool call only (providers.Request.SingleToolCall, as a legacy functions surface does)
// has the upstream asked for one; one that does not, not.
func TestResolverPassesSingleToolCall(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{text: "one"}, step{text: "two"})
	p, model, err := Resolver{Gateway: h.g, Scope: Scope{Owner: "k"}}.Resolve("a/m")
	if err != nil {
		t.Fatal(err)
	}
	tools := []providers.Tool{{Name: "lookup", Parameters: []byte(`{"type":"object"}`)}}
	msgs := []providers.Message{{Role: "user", Content: "look it up"}}
	if _, err := p.Complete(context.Background(), &providers.Request{Model: model, Messages: msgs, Tools: tools, SingleToolCall: true}); err != nil {
		t.Fatal(err)
	}
	if !h.a.lastRequest().SingleToolCall {
		t.Error("SingleToolCall did not reach the upstream request")
	}
	if _, err := p.Complete(context.Background(), &providers.Request{Model: model, Messages: msgs, Tools: tools}); err != nil {
		t.Fatal(err)
	}
	if h.a.lastRequest().SingleToolCall {
		t.Error("SingleToolCall asked though the caller did not")
	}
}
