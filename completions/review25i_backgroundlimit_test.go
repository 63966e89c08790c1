package completions

import (
	"context"
	"strings"
	"testing"
)

// A background response whose every model is at its limit fails as a rate limit
// (rate_limit_exceeded, what the synchronous surfaces answer 429 for), not as a server
// fault, and its message says when to try again.
func TestReview25iBackgroundResponseAtLimitIsRateLimited(t *testing.T) {
	h, _ := limitsHarness(t, map[string]ModelGroup{"g": {Models: []string{"a/m1"}, Limits: []MemberLimits{{RPM: 1}}}})
	defer h.g.Close(context.Background())
	h.a.on("m1", step{text: "ok"})
	if _, err := h.g.Complete(context.Background(), Scope{}, groupReq("g")); err != nil {
		t.Fatal(err)
	}
	o, err := startBackground(t, h.g, "alice", `{"model":"g","input":"hi","background":true}`)
	if err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, h.g, "alice", o.ID, "failed")
	if done.Error == nil || done.Error.Code != "rate_limit_exceeded" || !strings.Contains(done.Error.Message, "Try again in") {
		t.Fatalf("a background response at its limit failed with %+v; want rate_limit_exceeded saying when to try again", done.Error)
	}
	if n := h.a.callCount("m1"); n != 1 {
		t.Fatalf("a/m1 called %d times, want once", n)
	}
}
