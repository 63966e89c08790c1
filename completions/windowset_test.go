package completions

import (
	"context"
	"slices"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// TestGatewayContextWindowFallbacksSet: with Options.ContextWindowFallbacksSet, a prompt
// too long for a model that is no group ends the request (the scope's plain fallbacks
// are not tried) while another failure still goes on to them; a SetRoutes without the
// field keeps it, one with false clears it.
func TestGatewayContextWindowFallbacksSet(t *testing.T) {
	long := step{err: upstreamErr(providers.KindContextLength, 400, 0)}
	busy := step{err: upstreamErr(providers.KindAuth, 401, 0)}
	h := newHarness(t, func(o *Options) { o.ContextWindowFallbacksSet = true })
	scope := Scope{Fallbacks: map[string][]string{"*": {"a/x"}}}
	h.a.on("m", long)
	if resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m")); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("a prompt too long: %v %v", attemptModels(resp, err), err)
	}
	if err := h.g.SetRoutes(Routes{}); err != nil {
		t.Fatal(err)
	}
	if resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m")); err == nil || !slices.Equal(attemptModels(resp, err), []string{"a/m"}) {
		t.Fatalf("after a SetRoutes keeping it: %v %v", attemptModels(resp, err), err)
	}
	h.a.on("m", busy)
	if resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("another failure: %v %v", attemptModels(resp, err), err)
	}
	off := false
	if err := h.g.SetRoutes(Routes{ContextWindowFallbacksSet: &off}); err != nil {
		t.Fatal(err)
	}
	h.a.on("m", long)
	if resp, err := h.g.Complete(context.Background(), scope, userReq("hi", "a/m")); err != nil || !slices.Equal(attemptModels(resp, err), []string{"a/m", "a/x"}) {
		t.Fatalf("cleared: %v %v", attemptModels(resp, err), err)
	}
}
