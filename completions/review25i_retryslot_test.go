package completions

import (
	"context"
	"testing"

	"github.com/switchyard-ai/switchyard/providers"
)

// A member with max_parallel is retried as any other: its retry reuses the slot in flight
// its request holds, so that slot does not make it "at its limit" for its own retry.
func TestReview25iMaxParallelMemberIsRetriedOnItsOwnSlot(t *testing.T) {
	for _, mp := range []int64{1, 2} {
		h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1", "b/m2"}, Limits: []MemberLimits{{MaxParallel: mp}, {}}}})
		h.a.on("m1", step{err: upstreamErr(providers.KindOverloaded, 503, 0)}, step{text: "ok"})
		req := groupReq("g")
		req.MaxRetries = intp(2)
		resp, err := h.g.Complete(context.Background(), Scope{}, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Provider != "a" || h.a.callCount("m1") != 2 || h.b.callCount("m2") != 0 {
			t.Fatalf("max_parallel %d: answered by %s after a/m1 %d calls, b/m2 %d; want a/m1 retried once and answering", mp, resp.Provider, h.a.callCount("m1"), h.b.callCount("m2"))
		}
		if n := inFlightOf(h.g, "a/m1"); n != 0 {
			t.Fatalf("max_parallel %d: %d calls of a/m1 still in flight after the request", mp, n)
		}
	}
}
