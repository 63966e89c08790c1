package completions

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// rpm counts the calls made: a member admitted but never called — the request's calls
// were used up (MaxUpstreamAttempts) or its caller had gone — is not counted, and holds
// no slot in flight.
func TestReview25iRPMCountsOnlyCallsMade(t *testing.T) {
	var models []string
	for i := range MaxUpstreamAttempts {
		models = append(models, fmt.Sprintf("a/x%d", i))
	}
	h, _ := limitsHarness(t, map[string]ModelGroup{
		"g":    {Models: models, Fallbacks: []string{"back"}},
		"back": {Models: []string{"b/m2"}, Limits: []MemberLimits{{RPM: 5, MaxParallel: 1}}},
	})
	for i := range MaxUpstreamAttempts {
		h.a.on(fmt.Sprintf("x%d", i), step{err: upstreamErr(providers.KindOverloaded, 503, 0)})
	}
	_, err := h.g.Complete(context.Background(), Scope{}, groupReq("g"))
	var af *AllFailedError
	if !errors.As(err, &af) || h.b.callCount("m2") != 0 {
		t.Fatalf("err = %v, b/m2 calls %d; want every call used on g's members, b/m2 not called", err, h.b.callCount("m2"))
	}
	if n := callsInMinuteOf(h.g, "b/m2"); n != 0 {
		t.Fatalf("b/m2 counts %d calls in the minute; it was never called", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = h.g.Complete(ctx, Scope{}, groupReq("back"))
	if err == nil || h.b.callCount("m2") != 0 {
		t.Fatalf("a cancelled request: %v, b/m2 calls %d; want an error and no call", err, h.b.callCount("m2"))
	}
	if n := callsInMinuteOf(h.g, "b/m2"); n != 0 {
		t.Fatalf("after a request whose caller had gone: b/m2 counts %d calls in the minute; want 0", n)
	}
	if n := inFlightOf(h.g, "b/m2"); n != 0 {
		t.Fatalf("b/m2 has %d calls in flight; want 0", n)
	}
}
