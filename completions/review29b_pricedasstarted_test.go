package completions

import (
	"context"
	"math"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// swappingProvider is a fake provider that runs swap (once) when it is called: a
// deployment deleted while its call is under way.
type swappingProvider struct {
	*fakeProvider
	swap func()
}

func (s *swappingProvider) runSwap() {
	if f := s.swap; f != nil {
		s.swap = nil
		f()
	}
}

func (s *swappingProvider) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	s.runSwap()
	return s.fakeProvider.Complete(ctx, req)
}

func (s *swappingProvider) Stream(ctx context.Context, req *providers.Request) (providers.Stream, error) {
	s.runSwap()
	return s.fakeProvider.Stream(ctx, req)
}

// TestReview29bCallPricedAsItStarted: a call to a deployment with its own prices (a
// /model/new input_cost_per_token) that is deleted while the call is under way (the routes
// swapped without it and its price, its provider removed) is priced at its own prices, as
// the routes the request started with say, on the answer and in the budget: not at
// nothing, its price being gone from the catalogue in force when it ends; streamed too.
func TestReview29bCallPricedAsItStarted(t *testing.T) {
	for _, stream := range []bool{false, true} {
		perToken := 0.001
		own := providers.DefaultCatalog().WithOwnPrices(map[string]providers.OwnPrice{"a/m1": {InputPerToken: &perToken, OutputPerToken: &perToken}})
		a := &swappingProvider{fakeProvider: newFake("a")}
		a.on("m1", step{text: "from a", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 10}})
		reg := providers.NewRegistry(a)
		g, err := New(Options{Providers: reg, Prices: own, ModelGroups: map[string]ModelGroup{"g": {Models: []string{"a/m1"}}}})
		if err != nil {
			t.Fatal(err)
		}
		a.swap = func() {
			if err := g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{}, Prices: providers.DefaultCatalog()}); err != nil {
				panic(err)
			}
			reg.Remove("a")
		}
		b := NewBudget(BudgetLimits{})
		req := chatRequest(t, `{"model":"g","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`)
		var costs Costs
		if stream {
			st, err := g.Stream(context.Background(), Scope{Budget: b}, req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drain(t, st); err != nil {
				t.Fatal(err)
			}
			costs = st.Response().Usage.Costs
		} else {
			resp, err := g.Complete(context.Background(), Scope{Budget: b}, req)
			if err != nil {
				t.Fatal(err)
			}
			costs = resp.Usage.Costs
		}
		if !costs.PriceKnown || math.Abs(costs.TotalTokensCost-0.02) > 1e-12 {
			t.Errorf("stream %v: the answer's costs %+v, want its own price: 0.02", stream, costs)
		}
		if used := b.Used(context.Background()); math.Abs(used.CostUSD-0.02) > 1e-12 {
			t.Errorf("stream %v: the budget was charged %v, want 0.02", stream, used.CostUSD)
		}
	}
}

// TestReview29bCallPricedInNewerRoutes: a request that reaches a deployment only a newer
// routing table has (its group read again once another member's provider was removed,
// validate's retry) is priced at that deployment's own prices, which the routes the request
// started with do not have: the catalogue in force prices what the request's does not.
func TestReview29bCallPricedInNewerRoutes(t *testing.T) {
	perToken := 0.001
	b, c := newFake("b"), newFake("c")
	c.on("m3", step{text: "from c", usage: providers.Usage{PromptTokens: 10, CompletionTokens: 10}})
	reg := &removingRegistry{Registry: providers.NewRegistry(b, c)}
	g, err := New(Options{Providers: reg, Prices: providers.DefaultCatalog(), ModelGroups: map[string]ModelGroup{"g": {Models: []string{"b/m2"}}}})
	if err != nil {
		t.Fatal(err)
	}
	reg.mu.Lock()
	reg.name = "b"
	reg.swap = func() {
		own := providers.DefaultCatalog().WithOwnPrices(map[string]providers.OwnPrice{"c/m3": {InputPerToken: &perToken, OutputPerToken: &perToken}})
		if err := g.SetRoutes(Routes{ModelGroups: map[string]ModelGroup{"g": {Models: []string{"c/m3"}}}, Prices: own}); err != nil {
			panic(err)
		}
		reg.Registry.Remove("b")
	}
	reg.mu.Unlock()
	bud := NewBudget(BudgetLimits{})
	resp, err := g.Complete(context.Background(), Scope{Budget: bud}, chatRequest(t, `{"model":"g","max_retries":0,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || resp.Text() != "from c" {
		t.Fatalf("%+v, %v", resp, err)
	}
	if costs := resp.Usage.Costs; !costs.PriceKnown || math.Abs(costs.TotalTokensCost-0.02) > 1e-12 {
		t.Errorf("the answer's costs %+v, want the new deployment's own price: 0.02", costs)
	}
	if used := bud.Used(context.Background()); math.Abs(used.CostUSD-0.02) > 1e-12 {
		t.Errorf("the budget was charged %v, want 0.02", used.CostUSD)
	}
}
