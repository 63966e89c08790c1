package completions

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestMaxParallelWaitsWhenTheKeyRefusesTheLaterModels: a request whose model at its
// max_parallel has, after it, only a model the key's own per-model limits refuse (its
// entry's rpm used up by this request's first attempt) waits for the slot and is answered
// there, instead of passing the model over for one the key refuses (a 429 naming the
// key's model rpm). The refused model is never called.
func TestMaxParallelWaitsWhenTheKeyRefusesTheLaterModels(t *testing.T) {
	h, gp := queueHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{MaxParallel: 1}}}})
	h.a.on("m1", step{text: "held"}, step{text: "waited"})
	h.b.on("x", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	rpm := int64(1)
	// "b/x" and "a/x" are both held to the key's entry "x" (the name without its
	// provider): b/x's call uses its minute up.
	b := NewBudget(BudgetLimits{Models: map[string]ModelLimits{"x": {RequestsPerMinute: &rpm}}})

	held := make(chan error, 1)
	go func() {
		_, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
		held <- err
	}()
	c1 := <-gp.started // a/m1's one slot is held

	req := groupReq("b/x") // the OpenAI-compatible surface, which takes groups as fallbacks
	req.FallbackModels = []string{"g", "a/x"}
	type answer struct {
		resp *Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := h.g.Complete(context.Background(), Scope{Budget: b, KeyID: "k"}, req)
		got <- answer{resp, err}
	}()
	waitQueued(t, h.g, "a/m1", 1, func() bool {
		if len(got) > 0 {
			a := <-got
			t.Logf("ended: %v %+v", a.err, a.resp)
			return true
		}
		return false
	})
	close(c1.release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	close((<-gp.started).release)
	a := <-got
	if a.err != nil || a.resp.Text() != "waited" {
		t.Fatalf("%v (%+v); want a/m1's answer after waiting for its slot", a.err, a.resp)
	}
	// The wait passes a/x by too (no slot of it is taken only for the key to refuse it).
	if len(a.resp.Attempts) != 2 || a.resp.Attempts[0].Model != "b/x" || a.resp.Attempts[1].Model != "a/m1" {
		t.Fatalf("attempts %+v; want b/x's failure, then a/m1's answer", a.resp.Attempts)
	}
	if n := h.a.callCount("x"); n != 0 {
		t.Fatalf("a/x, which the key refuses, was called %d times", n)
	}
	if n := h.b.callCount("x"); n != 1 {
		t.Fatalf("b/x called %d times, want 1", n)
	}
}

// TestOpenBreakerProbedWhenTheKeyRefusesTheLaterModels: a model whose circuit breaker is
// open is tried anyway (a probe) when the one model after it is one the key's own
// per-model limits refuse (its entry's rpm used up by this request's first attempt),
// rather than skipped as circuit_open for a model the key then refuses (the request
// failing without a call it could make). laterCallable asks the key (admitModel) as it
// does for a model at its max_parallel.
func TestOpenBreakerProbedWhenTheKeyRefusesTheLaterModels(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Breaker = BreakerOptions{Failures: 1, Cooldown: time.Hour} })
	h.a.on("m1", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "down"}}, step{text: "probed"})
	if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("a/m1")); err == nil {
		t.Fatal("a/m1's failure answered")
	}
	if !h.g.breakers.open("a/m1", h.g.opts.Now()) {
		t.Fatal("a/m1's breaker is not open after its failure")
	}
	h.b.on("x", step{err: &providers.Error{Kind: providers.KindOverloaded, Message: "busy"}})
	rpm := int64(1)
	// "b/x" and "a/x" are both held to the key's entry "x": b/x's call uses its minute up.
	b := NewBudget(BudgetLimits{Models: map[string]ModelLimits{"x": {RequestsPerMinute: &rpm}}})
	req := groupReq("b/x")
	req.FallbackModels = []string{"a/m1", "a/x"}
	resp, err := h.g.Complete(context.Background(), Scope{Budget: b, KeyID: "k"}, req)
	if err != nil || resp.Text() != "probed" {
		t.Fatalf("%v (%+v); want a/m1 probed past its open breaker", err, resp)
	}
	if len(resp.Attempts) != 2 || resp.Attempts[0].Model != "b/x" || resp.Attempts[1].Model != "a/m1" {
		t.Fatalf("attempts %+v; want b/x's failure, then a/m1's answer", resp.Attempts)
	}
	if n := h.a.callCount("x"); n != 0 {
		t.Fatalf("a/x, which the key refuses, was called %d times", n)
	}
}
