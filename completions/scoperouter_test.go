package completions

import (
	"context"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestScopeNumRetriesReplacesTheDefault: a scope's NumRetries (a key's router_settings
// num_retries) bounds the retries of a request without its own max_retries; the request's
// own still wins.
func TestScopeNumRetriesReplacesTheDefault(t *testing.T) {
	zero, one := 0, 1
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
	_, err := h.g.Complete(context.Background(), Scope{NumRetries: &zero}, userReq("hi", "a/m"))
	if err == nil || h.a.callCount("m") != 1 {
		t.Fatalf("num_retries 0: err %v, calls %d, want a failure after 1 call", err, h.a.callCount("m"))
	}
	h2 := newHarness(t, nil)
	h2.a.on("m", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
	r := userReq("hi", "a/m")
	r.MaxRetries = &[]int{2}[0]
	if _, err := h2.g.Complete(context.Background(), Scope{NumRetries: &one}, r); err != nil || h2.a.callCount("m") != 3 {
		t.Fatalf("request max_retries 2 over scope's 1: err %v, calls %d", err, h2.a.callCount("m"))
	}
}

// TestScopeFallbacksFollowTheRequests: a scope's Fallbacks for the model asked (else "*")
// are tried after the request's own fallbacks, each once.
func TestScopeFallbacksFollowTheRequests(t *testing.T) {
	h := newHarness(t, nil)
	h.a.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	h.a.on("x", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	r := userReq("hi", "a/m")
	r.FallbackModels = []string{"a/x"}
	scope := Scope{Fallbacks: map[string][]string{"a/m": {"a/x", "b/m"}, "*": {"a/nope"}}}
	resp, err := h.g.Complete(context.Background(), scope, r)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Provider != "b" || h.a.callCount("x") != 1 || !slices.Equal(r.FallbackModels, []string{"a/x", "b/m"}) {
		t.Fatalf("provider %s, x calls %d, fallbacks %v", resp.Provider, h.a.callCount("x"), r.FallbackModels)
	}
	h2 := newHarness(t, nil)
	h2.a.on("m", step{err: upstreamErr(providers.KindAuth, 401, 0)})
	r2 := userReq("hi", "a/m")
	resp, err = h2.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"*": {"b/m"}}}, r2)
	if err != nil || resp.Provider != "b" {
		t.Fatalf("\"*\" fallbacks: %v %+v", err, resp)
	}
	// a/m asked, an entry for m: found without the provider (LiteLLM's lookup), before "*".
	r3 := userReq("hi", "a/m")
	if _, err := h2.g.Complete(context.Background(), Scope{Fallbacks: map[string][]string{"m": {"b/m"}, "*": {"a/nope"}}}, r3); err != nil || !slices.Equal(r3.FallbackModels, []string{"b/m"}) {
		t.Fatalf("an entry of the bare name: %v %v", err, r3.FallbackModels)
	}
}
